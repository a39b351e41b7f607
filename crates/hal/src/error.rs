//! The errors of the typed API: a teardown that failed hands its value back,
//! and a session refuses a backend that runs on another platform.

use core::fmt;

use aclmem_core::{AclError, CannVersion, Product, RunMode};

use crate::Error;

/// A teardown (`free`, `release`, `unmap`) that failed: the backend's error,
/// and the value that could not be torn down, handed back so that nothing
/// leaks and the caller may retry (as `std::io::IntoInnerError` hands back a
/// writer).
///
/// It converts into [`AclError`], so `?` works in a function returning the
/// error of every backend aclmem ships (the emulator, the driver, the RC
/// stub):
///
/// ```
/// use aclmem_core::{AclError, AlignedSize, AtlasA2, Device, HbmHuge, PhysicalMemProp, MIB};
/// use aclmem_hal::{PhysicalAllocator, Session, VirtualMemory};
///
/// fn cycle<B>(session: &Session<B, AtlasA2>) -> Result<(), AclError>
/// where
///     B: PhysicalAllocator<Error = AclError> + VirtualMemory<Error = AclError>,
/// {
///     let prop = PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0);
///     let memory = session.malloc(prop, AlignedSize::new::<{ 2 * MIB }>())?;
///     let range = session.reserve(2 * MIB)?;
///     let mapping = range.map(0, &memory)?;
///     mapping.unmap()?;
///     range.release()?;
///     memory.free()?;
///     Ok(())
/// }
/// # let _ = cycle::<aclmem_rc_stub::RcStub>;
/// ```
///
/// A backend with its own error type gets the same by implementing
/// `From<TeardownError<MyError, T>> for MyError` (for every `T`), or calls
/// [`TeardownError::into_error`].
pub struct TeardownError<E, T> {
    error: E,
    value: T,
}

impl<E, T> TeardownError<E, T> {
    pub(crate) fn new(error: E, value: T) -> Self {
        TeardownError { error, value }
    }

    /// The backend's error.
    pub fn error(&self) -> &E {
        &self.error
    }

    /// The value that was not torn down, to retry with or to inspect.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// Gives the value back, dropping the error.
    pub fn into_inner(self) -> T {
        self.value
    }

    /// Gives the error back and drops the value. Dropping a resource tears
    /// it down once more; if that fails too, the error goes to the session
    /// (see [`Session::take_deferred_error`](crate::Session::take_deferred_error)).
    pub fn into_error(self) -> E {
        self.error
    }

    /// Both parts.
    pub fn into_parts(self) -> (E, T) {
        (self.error, self.value)
    }
}

impl<E: fmt::Debug, T> fmt::Debug for TeardownError<E, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TeardownError")
            .field("error", &self.error)
            .field("value", &core::any::type_name::<T>())
            .finish()
    }
}

impl<E: fmt::Display, T> fmt::Display for TeardownError<E, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "teardown failed, the value was handed back: {}",
            self.error
        )
    }
}

impl<E: core::error::Error, T> core::error::Error for TeardownError<E, T> {}

impl<T> From<TeardownError<AclError, T>> for AclError {
    fn from(e: TeardownError<AclError, T>) -> AclError {
        e.into_error()
    }
}

/// Why [`Session::new`](crate::Session::new) refused a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub enum SessionError<E> {
    /// The backend failed to report its platform.
    Backend(E),
    /// The backend runs on another product or run mode than the session's
    /// product type: the compile-time guarantees would not hold there.
    WrongPlatform {
        /// The product type's platform.
        expected: (Product, RunMode),
        /// What the backend reports.
        found: (Product, RunMode),
    },
    /// The backend runs an older CANN release than the product type
    /// targets: combinations the code was checked against may be refused.
    /// (A newer release is fine: no release took a combination away.)
    OlderCann {
        /// The release the product type targets.
        expected: CannVersion,
        /// The release the backend reports.
        found: CannVersion,
    },
}

impl<E: Error> SessionError<E> {
    /// The ACL code: the backend's, or `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`
    /// (207000) for a platform or version the code was not checked for.
    pub fn code(&self) -> AclError {
        match self {
            SessionError::Backend(e) => e.code(),
            _ => AclError::RT_FEATURE_NOT_SUPPORT,
        }
    }
}

impl<E: fmt::Display> fmt::Display for SessionError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Backend(e) => write!(f, "the backend could not report its platform: {e}"),
            SessionError::WrongPlatform { expected, found } => write!(
                f,
                "the session's product type is {} in {} form, but the backend runs on {} in {} form",
                expected.0, expected.1, found.0, found.1
            ),
            SessionError::OlderCann { expected, found } => write!(
                f,
                "the session's product type targets {expected}, but the backend runs {found}"
            ),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for SessionError<E> {}

impl From<SessionError<AclError>> for AclError {
    fn from(e: SessionError<AclError>) -> AclError {
        e.code()
    }
}
