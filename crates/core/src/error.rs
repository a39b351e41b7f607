//! ACL error codes.
//!
//! [`AclError`] carries the raw `aclError` value the runtime returns. The codes
//! the physical-memory API can produce have names (see [`AclError::name`]);
//! any other non-zero value is kept as it is, never collapsed into a catch-all.

use core::fmt;
use core::num::NonZeroI32;

macro_rules! acl_codes {
    ($( $(#[$doc:meta])* $konst:ident = $value:literal => $name:literal, $kind:ident; )*) => {
        impl AclError {
            $(
                $(#[$doc])*
                pub const $konst: AclError = AclError(match NonZeroI32::new($value) {
                    Some(v) => v,
                    None => panic!("error codes are non-zero"),
                });
            )*

            /// Every error code this crate knows by name, in ascending order of value.
            pub const KNOWN: &'static [AclError] = &[$(AclError::$konst),*];

            /// The C macro name of this code (`"ACL_ERROR_INVALID_PARAM"`), or
            /// `None` for a code this crate does not know.
            pub const fn name(self) -> Option<&'static str> {
                match self.0.get() {
                    $($value => Some($name),)*
                    _ => None,
                }
            }

            /// What kind of failure this code reports.
            pub const fn kind(self) -> ErrorKind {
                match self.0.get() {
                    $($value => ErrorKind::$kind,)*
                    // Code-class rule from the aclError docs: 1xxxxx caller
                    // error, 2xxxxx resource shortage or unsupported,
                    // 5xxxxx internal.
                    100_000..=199_999 => ErrorKind::InvalidParam,
                    500_000..=599_999 => ErrorKind::Internal,
                    _ => ErrorKind::Other,
                }
            }
        }
    };
}

/// A non-zero `aclError` returned by (or modelled on) the Ascend runtime.
///
/// `AclError` is a plain code: it is `Copy`, compares by value and keeps
/// unknown codes intact, so an error from a newer runtime is never lost.
///
/// ```
/// use aclmem_core::{AclError, ErrorKind};
/// let e = AclError::from_code(207001).unwrap();
/// assert_eq!(e, AclError::RT_MEMORY_ALLOCATION);
/// assert_eq!(e.kind(), ErrorKind::OutOfMemory);
/// assert_eq!(e.to_string(), "ACL_ERROR_RT_MEMORY_ALLOCATION (207001)");
/// assert_eq!(AclError::from_code(0), None); // ACL_SUCCESS is not an error
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AclError(NonZeroI32);

acl_codes! {
    /// `ACL_ERROR_INVALID_PARAM`: an argument failed the ACL layer's checks.
    INVALID_PARAM = 100000 => "ACL_ERROR_INVALID_PARAM", InvalidParam;
    /// `ACL_ERROR_UNINITIALIZE`: `aclInit` has not been called.
    UNINITIALIZE = 100001 => "ACL_ERROR_UNINITIALIZE", Uninitialized;
    /// `ACL_ERROR_REPEAT_INITIALIZE`: `aclInit` was called twice.
    REPEAT_INITIALIZE = 100002 => "ACL_ERROR_REPEAT_INITIALIZE", InvalidState;
    /// `ACL_ERROR_INVALID_FILE`: a file (a version file, a configuration)
    /// is missing or unreadable.
    INVALID_FILE = 100003 => "ACL_ERROR_INVALID_FILE", InvalidParam;
    /// `ACL_ERROR_OP_TYPE_NOT_MATCH`: an operator's input types do not
    /// fit together (`acl_base.h`).
    OP_TYPE_NOT_MATCH = 100020 => "ACL_ERROR_OP_TYPE_NOT_MATCH", InvalidParam;
    /// `ACL_ERROR_OP_INPUT_NOT_MATCH`: an operator got the wrong number or
    /// shape of inputs (`acl_base.h`).
    OP_INPUT_NOT_MATCH = 100021 => "ACL_ERROR_OP_INPUT_NOT_MATCH", InvalidParam;
    /// `ACL_ERROR_OP_OUTPUT_NOT_MATCH`: an operator got the wrong number or
    /// shape of outputs (`acl_base.h`).
    OP_OUTPUT_NOT_MATCH = 100022 => "ACL_ERROR_OP_OUTPUT_NOT_MATCH", InvalidParam;
    /// `ACL_ERROR_OP_ATTR_NOT_MATCH`: an operator's attribute is missing or
    /// of the wrong kind (`acl_base.h`).
    OP_ATTR_NOT_MATCH = 100023 => "ACL_ERROR_OP_ATTR_NOT_MATCH", InvalidParam;
    /// `ACL_ERROR_OP_NOT_FOUND`: no kernel for the operator (what the
    /// emulated operator calls answer; `acl_base.h`).
    OP_NOT_FOUND = 100024 => "ACL_ERROR_OP_NOT_FOUND", NotSupported;
    /// `ACL_ERROR_UNSUPPORTED_DATA_TYPE`: no kernel for the operator with
    /// that data type (`acl_base.h`).
    UNSUPPORTED_DATA_TYPE = 100026 => "ACL_ERROR_UNSUPPORTED_DATA_TYPE", NotSupported;
    /// `ACL_ERROR_FORMAT_NOT_MATCH`: an operator's tensor formats do not fit
    /// (`acl_base.h`).
    FORMAT_NOT_MATCH = 100027 => "ACL_ERROR_FORMAT_NOT_MATCH", InvalidParam;
    /// `ACL_ERROR_REPEAT_FINALIZE`: `aclFinalize` was called twice.
    REPEAT_FINALIZE = 100037 => "ACL_ERROR_REPEAT_FINALIZE", InvalidState;
    /// `ACL_ERROR_RT_PARAM_INVALID`: the runtime layer rejected a value.
    RT_PARAM_INVALID = 107000 => "ACL_ERROR_RT_PARAM_INVALID", InvalidParam;
    /// `ACL_ERROR_RT_INVALID_DEVICEID`: no device with that id.
    RT_INVALID_DEVICEID = 107001 => "ACL_ERROR_RT_INVALID_DEVICEID", InvalidDevice;
    /// `ACL_ERROR_RT_CONTEXT_NULL`: no current context (no device set).
    RT_CONTEXT_NULL = 107002 => "ACL_ERROR_RT_CONTEXT_NULL", InvalidState;
    /// `ACL_ERROR_RT_STREAM_CONTEXT`: the stream belongs to another
    /// context than the current one.
    RT_STREAM_CONTEXT = 107003 => "ACL_ERROR_RT_STREAM_CONTEXT", InvalidState;
    /// `ACL_ERROR_RT_ADDR_UNALIGNED`: an address is not aligned as required.
    RT_ADDR_UNALIGNED = 107008 => "ACL_ERROR_RT_ADDR_UNALIGNED", InvalidParam;
    /// `ACL_ERROR_RT_INVALID_MEMORY_TYPE`: wrong memory type for the call.
    RT_INVALID_MEMORY_TYPE = 107016 => "ACL_ERROR_RT_INVALID_MEMORY_TYPE", InvalidParam;
    /// `ACL_ERROR_RT_INVALID_HANDLE`: the handle is not a live handle.
    RT_INVALID_HANDLE = 107017 => "ACL_ERROR_RT_INVALID_HANDLE", InvalidHandle;
    /// `ACL_ERROR_RT_INVALID_MALLOC_TYPE`: wrong allocation type.
    RT_INVALID_MALLOC_TYPE = 107018 => "ACL_ERROR_RT_INVALID_MALLOC_TYPE", InvalidParam;
    /// `ACL_ERROR_RT_CAPTURE_DEPENDENCY`: a capture would depend on another
    /// capture (`rt_error_codes.h`).
    RT_CAPTURE_DEPENDENCY = 107024 => "ACL_ERROR_RT_CAPTURE_DEPENDENCY", InvalidState;
    /// `ACL_ERROR_RT_STREAM_UNJOINED`: a stream that joined a capture was
    /// not joined back before it ended.
    RT_STREAM_UNJOINED = 107025 => "ACL_ERROR_RT_STREAM_UNJOINED", InvalidState;
    /// `ACL_ERROR_RT_MODEL_CAPTURED`: the model is still being captured.
    RT_MODEL_CAPTURED = 107026 => "ACL_ERROR_RT_MODEL_CAPTURED", InvalidState;
    /// `ACL_ERROR_RT_STREAM_CAPTURED`: the stream is capturing, which the
    /// call does not allow.
    RT_STREAM_CAPTURED = 107027 => "ACL_ERROR_RT_STREAM_CAPTURED", InvalidState;
    /// `ACL_ERROR_RT_EVENT_CAPTURED`: the event was recorded in a capture.
    RT_EVENT_CAPTURED = 107028 => "ACL_ERROR_RT_EVENT_CAPTURED", InvalidState;
    /// `ACL_ERROR_RT_STREAM_NOT_CAPTURED`: the stream is not capturing.
    RT_STREAM_NOT_CAPTURED = 107029 => "ACL_ERROR_RT_STREAM_NOT_CAPTURED", InvalidState;
    /// `ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT`: a capture's mode forbids
    /// this call now.
    RT_CAPTURE_MODE_NOT_SUPPORT = 107030 => "ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT", InvalidState;
    /// `ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED`: the capture did not begin
    /// on this stream.
    RT_STREAM_CAPTURE_UNMATCHED = 107036 => "ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED", InvalidState;
    /// `ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD`: the capture ends in
    /// another thread than it began in.
    RT_STREAM_CAPTURE_WRONG_THREAD = 107038 => "ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD", InvalidState;
    /// `ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC`: an asynchronous call made
    /// synchronous (pageable memory) while a capture's mode forbids it.
    RT_CAPTURE_MODE_BLOCK_ASYNC = 107041 => "ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC", InvalidState;
    /// `ACL_ERROR_RT_INVALID_SYMBOL`: no device variable is registered
    /// for the symbol.
    RT_INVALID_SYMBOL = 107043 => "ACL_ERROR_RT_INVALID_SYMBOL", InvalidParam;
    /// `ACL_ERROR_BAD_ALLOC`: a host-side allocation failed.
    BAD_ALLOC = 200000 => "ACL_ERROR_BAD_ALLOC", OutOfMemory;
    /// `ACL_ERROR_API_NOT_SUPPORT`: the API is not supported.
    API_NOT_SUPPORT = 200001 => "ACL_ERROR_API_NOT_SUPPORT", NotSupported;
    /// `ACL_ERROR_INVALID_DEVICE`: invalid device.
    INVALID_DEVICE = 200002 => "ACL_ERROR_INVALID_DEVICE", InvalidDevice;
    /// `ACL_ERROR_MEMORY_ADDRESS_UNALIGNED`: unaligned memory address.
    MEMORY_ADDRESS_UNALIGNED = 200003 => "ACL_ERROR_MEMORY_ADDRESS_UNALIGNED", InvalidParam;
    /// `ACL_ERROR_RESOURCE_NOT_MATCH`: resources do not match.
    RESOURCE_NOT_MATCH = 200004 => "ACL_ERROR_RESOURCE_NOT_MATCH", InvalidParam;
    /// `ACL_ERROR_INVALID_RESOURCE_HANDLE`: invalid resource handle.
    INVALID_RESOURCE_HANDLE = 200005 => "ACL_ERROR_INVALID_RESOURCE_HANDLE", InvalidHandle;
    /// `ACL_ERROR_FEATURE_UNSUPPORTED`: feature not supported.
    FEATURE_UNSUPPORTED = 200006 => "ACL_ERROR_FEATURE_UNSUPPORTED", NotSupported;
    /// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`: not supported on this product, run
    /// mode or driver.
    RT_FEATURE_NOT_SUPPORT = 207000 => "ACL_ERROR_RT_FEATURE_NOT_SUPPORT", NotSupported;
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION`: out of physical memory (torch_npu
    /// relies on exactly this code to detect OOM).
    RT_MEMORY_ALLOCATION = 207001 => "ACL_ERROR_RT_MEMORY_ALLOCATION", OutOfMemory;
    /// `ACL_ERROR_RT_MEMORY_FREE`: freeing memory failed.
    RT_MEMORY_FREE = 207002 => "ACL_ERROR_RT_MEMORY_FREE", InvalidState;
    /// `ACL_ERROR_RT_NO_DEVICE`: no device.
    RT_NO_DEVICE = 207004 => "ACL_ERROR_RT_NO_DEVICE", InvalidDevice;
    /// `ACL_ERROR_RT_RESOURCE_ALLOC_FAIL`: no resources left.
    RT_RESOURCE_ALLOC_FAIL = 207005 => "ACL_ERROR_RT_RESOURCE_ALLOC_FAIL", OutOfMemory;
    /// `ACL_ERROR_RT_NO_PERMISSION`: not permitted.
    RT_NO_PERMISSION = 207006 => "ACL_ERROR_RT_NO_PERMISSION", NoPermission;
    /// `ACL_ERROR_RT_OVER_LIMIT`: a limit was exceeded.
    RT_OVER_LIMIT = 207012 => "ACL_ERROR_RT_OVER_LIMIT", OutOfMemory;
    /// `ACL_ERROR_RT_DEVICE_OOM`: the device is out of memory.
    RT_DEVICE_OOM = 207018 => "ACL_ERROR_RT_DEVICE_OOM", OutOfMemory;
    /// `ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED`: the interconnect asked for
    /// does not exist between the devices.
    RT_LINK_TYPE_NOT_SUPPORTED = 207021 => "ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED", NotSupported;
    /// `ACL_ERROR_STORAGE_OVER_LIMIT`: storage over limit.
    STORAGE_OVER_LIMIT = 300000 => "ACL_ERROR_STORAGE_OVER_LIMIT", OutOfMemory;
    /// `ACL_ERROR_INTERNAL_ERROR`: internal error.
    INTERNAL_ERROR = 500000 => "ACL_ERROR_INTERNAL_ERROR", Internal;
    /// `ACL_ERROR_FAILURE`: generic failure.
    FAILURE = 500001 => "ACL_ERROR_FAILURE", Internal;
    /// `ACL_ERROR_RT_FAILURE`: runtime failure.
    RT_FAILURE = 500003 => "ACL_ERROR_RT_FAILURE", Internal;
    /// `ACL_ERROR_DRV_FAILURE`: driver failure.
    DRV_FAILURE = 500004 => "ACL_ERROR_DRV_FAILURE", Internal;
    /// `ACL_ERROR_RT_INTERNAL_ERROR`: runtime internal error.
    RT_INTERNAL_ERROR = 507000 => "ACL_ERROR_RT_INTERNAL_ERROR", Internal;
    /// `ACL_ERROR_RT_LOST_HEARTBEAT`: the device stopped answering (what
    /// the emulator's `device-lost` fault answers).
    RT_LOST_HEARTBEAT = 507010 => "ACL_ERROR_RT_LOST_HEARTBEAT", Internal;
    /// `ACL_ERROR_RT_IPC_ERROR`: an IPC operation failed.
    RT_IPC_ERROR = 507022 => "ACL_ERROR_RT_IPC_ERROR", Internal;
    /// `ACL_ERROR_RT_DEV_SETUP_ERROR`: device setup failed.
    RT_DEV_SETUP_ERROR = 507033 => "ACL_ERROR_RT_DEV_SETUP_ERROR", Internal;
    /// `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT`: a synchronisation with a timeout
    /// expired.
    RT_STREAM_SYNC_TIMEOUT = 507046 => "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT", Other;
    /// `ACL_ERROR_RT_DRV_INTERNAL_ERROR`: driver internal error.
    RT_DRV_INTERNAL_ERROR = 507899 => "ACL_ERROR_RT_DRV_INTERNAL_ERROR", Internal;
    /// `ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED`: the capture was
    /// invalidated by an error while it ran.
    RT_STREAM_CAPTURE_INVALIDATED = 507903 => "ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED", InvalidState;
    /// `ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED`: the host range overlaps
    /// one already registered (`aclrtHostRegister*`).
    HOST_MEMORY_ALREADY_REGISTERED = 507910 => "ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED", InvalidState;
    /// `ACL_ERROR_HOST_MEMORY_NOT_REGISTERED`: the host address was never
    /// registered (`aclrtHostUnregister`).
    HOST_MEMORY_NOT_REGISTERED = 507911 => "ACL_ERROR_HOST_MEMORY_NOT_REGISTERED", InvalidState;
}

impl AclError {
    /// Wraps a raw `aclError`. Returns `None` for `0` (`ACL_SUCCESS`).
    pub const fn from_code(code: i32) -> Option<AclError> {
        match NonZeroI32::new(code) {
            Some(v) => Some(AclError(v)),
            None => None,
        }
    }

    /// Turns a raw return value into a `Result`: `0` is `Ok(())`.
    pub const fn check(code: i32) -> Result<(), AclError> {
        match AclError::from_code(code) {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }

    /// The raw `aclError` value.
    pub const fn code(self) -> i32 {
        self.0.get()
    }
}

impl fmt::Debug for AclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "AclError({name} = {})", self.code()),
            None => write!(f, "AclError({})", self.code()),
        }
    }
}

impl fmt::Display for AclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.code()),
            None => write!(f, "unknown ACL error ({})", self.code()),
        }
    }
}

impl core::error::Error for AclError {}

#[cfg(feature = "defmt-1")]
impl defmt::Format for AclError {
    fn format(&self, f: defmt::Formatter<'_>) {
        match self.name() {
            Some(name) => defmt::write!(f, "{=str} ({=i32})", name, self.code()),
            None => defmt::write!(f, "unknown ACL error ({=i32})", self.code()),
        }
    }
}

/// A coarse classification of [`AclError`] codes, for code that reacts to the
/// kind of failure rather than to one code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
#[non_exhaustive]
pub enum ErrorKind {
    /// An argument was rejected (100000, 107000, ...).
    InvalidParam,
    /// `aclInit` was not called.
    Uninitialized,
    /// A call came in the wrong state (repeat init, no current context, ...).
    InvalidState,
    /// The device id is not valid or there is no device.
    InvalidDevice,
    /// A handle is not live (stale, freed twice, forged).
    InvalidHandle,
    /// The product, run mode or driver does not support the call (207000).
    NotSupported,
    /// Memory or another resource is exhausted (207001, ...).
    OutOfMemory,
    /// The caller lacks permission (207006).
    NoPermission,
    /// An internal runtime or driver error (5xxxxx).
    Internal,
    /// Anything else.
    Other,
}

impl ErrorKind {
    /// A short description of the kind.
    pub const fn description(self) -> &'static str {
        match self {
            ErrorKind::InvalidParam => "invalid argument",
            ErrorKind::Uninitialized => "ACL is not initialised",
            ErrorKind::InvalidState => "call made in the wrong state",
            ErrorKind::InvalidDevice => "invalid or missing device",
            ErrorKind::InvalidHandle => "handle is not live",
            ErrorKind::NotSupported => "not supported on this product, form or driver",
            ErrorKind::OutOfMemory => "memory or another resource is exhausted",
            ErrorKind::NoPermission => "not permitted",
            ErrorKind::Internal => "internal runtime or driver error",
            ErrorKind::Other => "other error",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

/// `ErrorKind` is the error of generic code that has no better one.
impl core::error::Error for ErrorKind {}
