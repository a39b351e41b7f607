//! HCCL's result codes (`hccl_types.h`) and their texts.

/// `HcclResult`.
pub type HcclResult = i32;

macro_rules! results {
    ($($name:ident = $value:literal, $text:literal;)*) => {
        /// HCCL's result codes (`hccl_types.h`), each with what
        /// `HcclGetErrorString` answers for it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(i32)]
        #[allow(clippy::upper_case_acronyms, non_camel_case_types)]
        pub enum Hccl {
            $(#[doc = $text] $name = $value,)*
        }

        impl Hccl {
            /// Every code, in value order.
            pub const ALL: &'static [Hccl] = &[$(Hccl::$name),*];

            /// The code's text, NUL-terminated (for `HcclGetErrorString`).
            pub const fn text(self) -> &'static str {
                match self {
                    $(Hccl::$name => concat!($text, "\0"),)*
                }
            }
        }
    };
}

results! {
    SUCCESS = 0, "success";
    E_PARA = 1, "parameter error";
    E_PTR = 2, "empty pointer";
    E_MEMORY = 3, "memory error";
    E_INTERNAL = 4, "internal error";
    E_NOT_SUPPORT = 5, "not support feature";
    E_NOT_FOUND = 6, "not found specific resource";
    E_UNAVAIL = 7, "resource unavailable";
    E_SYSCALL = 8, "call system interface error";
    E_TIMEOUT = 9, "timeout";
    E_OPEN_FILE_FAILURE = 10, "open file fail";
    E_TCP_CONNECT = 11, "tcp connect fail";
    E_ROCE_CONNECT = 12, "roce connect fail";
    E_TCP_TRANSFER = 13, "tcp transfer fail";
    E_ROCE_TRANSFER = 14, "roce transfer fail";
    E_RUNTIME = 15, "call runtime api fail";
    E_DRV = 16, "call driver api fail";
    E_PROFILING = 17, "call profiling api fail";
    E_CCE = 18, "call cce api fail";
    E_NETWORK = 19, "call network api fail";
    E_AGAIN = 20, "try again";
    E_REMOTE = 21, "error cqe";
    E_SUSPENDING = 22, "error communicator suspending";
    E_OPRETRY_FAIL = 23, "retry constraint";
    E_OOM = 24, "out of memory";
}

impl Hccl {
    /// The code as the C caller reads it.
    pub const fn code(self) -> HcclResult {
        self as HcclResult
    }

    /// The text for a raw code; unknown codes have one of their own.
    pub fn text_of(code: HcclResult) -> &'static str {
        Hccl::ALL
            .iter()
            .find(|c| c.code() == code)
            .map_or("unknown error\0", |c| c.text())
    }
}
