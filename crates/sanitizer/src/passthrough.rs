//! Functions forwarded unchanged: every function of the catalogue the
//! sanitizer does not check is exported by `passthrough!` (from
//! `trampolines`' `defined!`), so that it sits in front of the whole API.

/// Forwarded unchanged, not checked.
macro_rules! passthrough {
    ($name:ident ( $($arg:ident : $t:ty),* )) => {
        /// Forwarded unchanged.
        ///
        /// # Safety
        /// The C prototype's contract.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $t),*) -> sys::aclError {
            let r = forward!($name($($arg),*));
            if r != 0 && config().report_api_errors {
                api_error(stringify!($name), r, Site::outside());
            }
            r
        }
    };
}
