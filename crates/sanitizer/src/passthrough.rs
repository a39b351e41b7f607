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
        pub unsafe extern "C" fn $name($($arg: $t),*) -> ::aclmem_sys::aclError {
            let r = $crate::underneath::forward!($name($($arg),*));
            if r != 0 && $crate::config::config().report_api_errors {
                $crate::underneath::api_error(
                    stringify!($name),
                    r,
                    $crate::report::Site::outside(),
                );
            }
            r
        }
    };
}
pub(crate) use passthrough;
