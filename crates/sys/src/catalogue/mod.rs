//! The catalogue: every function a program built for CANN may bind to
//! aclmem's libraries, with the library CANN ships it in, its prototype and
//! how the emulator answers it.
//!
//! It has two parts, one list each:
//! * the typed functions ([`with_acl_functions!`](crate::with_acl_functions),
//!   [`FUNCTIONS`]): the physical-memory API and the runtime
//!   around it, with Rust prototypes, resolved by the driver, interposed by
//!   the sanitizer, declared by the shipped C headers; all emulated;
//! * the framework functions
//!   ([`with_framework_functions!`](crate::with_framework_functions)): what a framework
//!   such as torch_npu links or looks up by name beyond them (streams with a
//!   configuration, events, compile options, system parameters, dump and log
//!   switches, operators, graphs, profiling). Each is [`Answer::Emulated`]
//!   (carried out), [`Answer::Accepted`] (a setting that changes nothing on
//!   a CPU: recorded, answers success) or [`Answer::Unsupported`] (compute,
//!   graphs, collectives: recorded, answers "not supported").
//!
//! The emulated `libascendcl.so` exports every name of both lists; the
//! other CANN libraries a framework links ([`Library`]) are the same object
//! under their names, so a process has one emulator however it loads them.
//! `docs/catalogue.md` is generated from here (`aclmem catalogue`).

use crate::FUNCTIONS;

#[macro_use]
mod atb;
#[macro_use]
mod functions;
#[macro_use]
mod memory;
#[macro_use]
mod opapi;
#[macro_use]
mod opapi_attention;
#[macro_use]
mod opapi_optim;
#[macro_use]
mod operators;
mod themes;

pub use themes::MEMORY_THEMES;

/// The CANN shared object that holds a function in a real installation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Library {
    /// `libascendcl.so`: the ACL runtime.
    AscendCl,
    /// `libacl_op_compiler.so`: operator compilation and compile options.
    OpCompiler,
    /// `libhccl.so`: collective communication.
    Hccl,
    /// `libhcomm.so`: HCCL's communication base, where torch_npu looks up
    /// `HcclGroupStart` and `HcclGroupEnd`.
    Hcomm,
    /// `libge_runner.so`: the graph engine.
    GeRunner,
    /// `libgraph.so`: graph construction.
    Graph,
    /// `libacl_tdt_channel.so`: host-device data channels.
    TdtChannel,
    /// `libprofapi.so`: the profiler's reporting interface (`Msprof*`),
    /// reached in CANN through the graph engine's own dependencies.
    ProfApi,
    /// `libmsprofiler.so`: the profiling API (`aclprof*`).
    MsProfiler,
    /// `libruntime.so`: the runtime below ACL (`rt*`), reached in CANN
    /// through `libascendcl.so`'s own dependencies.
    Runtime,
    /// `libms_tools_ext.so`: the MindStudio tools extension (`mstx*`
    /// markers and ranges), opened by name by frameworks that mark their
    /// phases.
    MsToolsExt,
    /// `libopapi.so`: the operator API's operators (`aclnn*`), found by
    /// name by frameworks (torch_npu's `GetOpApiFuncAddr`).
    OpApi,
    /// `libnnopbase.so`: the operator API's objects (`aclCreateTensor`
    /// and the others), reached through `libopapi.so`.
    NnOpBase,
    /// `libatb.so`: the Ascend Transformer Boost library (C++ `atb::`
    /// contexts and operations), a NEEDED library of torch_npu's ATB
    /// operator plugin (`libop_plugin_atb.so`).
    Atb,
}

impl Library {
    /// Every library, in a fixed order.
    pub const ALL: [Library; 14] = [
        Library::AscendCl,
        Library::OpCompiler,
        Library::Hccl,
        Library::Hcomm,
        Library::GeRunner,
        Library::Graph,
        Library::TdtChannel,
        Library::ProfApi,
        Library::MsProfiler,
        Library::Runtime,
        Library::MsToolsExt,
        Library::OpApi,
        Library::NnOpBase,
        Library::Atb,
    ];

    /// The library's file name and soname.
    pub const fn soname(self) -> &'static str {
        match self {
            Library::AscendCl => "libascendcl.so",
            Library::OpCompiler => "libacl_op_compiler.so",
            Library::Hccl => "libhccl.so",
            Library::Hcomm => "libhcomm.so",
            Library::GeRunner => "libge_runner.so",
            Library::Graph => "libgraph.so",
            Library::TdtChannel => "libacl_tdt_channel.so",
            Library::ProfApi => "libprofapi.so",
            Library::MsProfiler => "libmsprofiler.so",
            Library::Runtime => "libruntime.so",
            Library::MsToolsExt => "libms_tools_ext.so",
            Library::OpApi => "libopapi.so",
            Library::NnOpBase => "libnnopbase.so",
            Library::Atb => "libatb.so",
        }
    }
}

/// How the emulator answers a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Answer {
    /// Carried out, as the runtime does, on the emulated machine.
    Emulated,
    /// A setting or a report that changes nothing the emulator does (a
    /// saturation mode, a dump switch, a log line): recorded, and answered
    /// with success (and neutral out-values).
    Accepted,
    /// Work the emulator cannot do (operators, graphs, collectives, kernel
    /// binaries, profiling): recorded, and answered "not supported" (see
    /// [`Returns`]); `ACLMEM_EMU_UNSUPPORTED` decides what else happens.
    Unsupported,
}

impl Answer {
    /// How the answer is named in reports and documents.
    pub const fn describe(self) -> &'static str {
        match self {
            Answer::Emulated => "emulated",
            Answer::Accepted => "accepted only",
            Answer::Unsupported => "not supported",
        }
    }
}

/// What a function returns, which decides the value of a generated answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Returns {
    /// A status code (`aclError`, `rtError_t`, `HcclResult`, a profiler
    /// status): 0 when accepted, `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000)
    /// when not supported.
    Code,
    /// The status of compiling or running an operator: not supported is
    /// `ACL_ERROR_OP_NOT_FOUND` (100024), what the runtime answers for an
    /// operator it has no kernel for. Not 207000: torch_npu takes 207000
    /// from any call as a warning and carries on, so an operator refused
    /// with it would leave its output unwritten and the program running on
    /// garbage; 100024 makes the framework raise.
    OpStatus,
    /// An `HcclResult`: 0 when accepted, `HCCL_E_NOT_SUPPORT` (5) when not
    /// supported (HCCL's own codes, not the runtime's).
    HcclStatus,
    /// A pointer (an object, a string): NULL.
    Pointer,
    /// A count or an id (`size_t`, `uint64_t`, `int64_t`): 0.
    Count,
    /// A C enum by value (`aclFormat`, `aclDataType`): -1, the enums'
    /// `..._UNDEFINED`.
    Enum,
    /// Nothing.
    Void,
    /// An `atb::Status` (ATB's `ErrorType`, `include/atb/types.h`): 0 when
    /// carried out, `ERROR_OPERATION_NULL_RUNNER` (10) for an operation
    /// the emulator does not carry out (the caller then has no operation).
    AtbStatus,
}

impl Returns {
    /// The value a generated answer gives, as the 64-bit register the C
    /// caller reads (a 32-bit status is its low half).
    pub const fn value(self, answer: Answer) -> i64 {
        match (self, answer) {
            (Returns::Code, Answer::Unsupported) => ACL_ERROR_RT_FEATURE_NOT_SUPPORT as i64,
            (Returns::OpStatus, Answer::Unsupported) => ACL_ERROR_OP_NOT_FOUND as i64,
            (Returns::HcclStatus, Answer::Unsupported) => HCCL_E_NOT_SUPPORT as i64,
            (Returns::AtbStatus, Answer::Unsupported) => ATB_ERROR_OPERATION_NULL_RUNNER as i64,
            (Returns::Enum, _) => -1,
            _ => 0,
        }
    }
}

impl Returns {
    /// The value a generated answer gives, in words (for messages).
    pub const fn describe_value(self, answer: Answer) -> &'static str {
        match (self, answer) {
            (Returns::Code, Answer::Unsupported) => "207000 (ACL_ERROR_RT_FEATURE_NOT_SUPPORT)",
            (Returns::OpStatus, Answer::Unsupported) => "100024 (ACL_ERROR_OP_NOT_FOUND)",
            (Returns::HcclStatus, Answer::Unsupported) => "5 (HCCL_E_NOT_SUPPORT)",
            (Returns::AtbStatus, Answer::Unsupported) => "10 (atb::ERROR_OPERATION_NULL_RUNNER)",
            (Returns::Code | Returns::OpStatus | Returns::HcclStatus | Returns::AtbStatus, _) => {
                "0 (success)"
            }
            (Returns::Pointer, _) => "NULL",
            (Returns::Count, _) => "0",
            (Returns::Enum, _) => "-1 (undefined)",
            (Returns::Void, _) => "nothing",
        }
    }
}

/// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`: the runtime's "not supported".
pub const ACL_ERROR_RT_FEATURE_NOT_SUPPORT: i32 =
    aclmem_core::AclError::RT_FEATURE_NOT_SUPPORT.code();
/// `HCCL_E_NOT_SUPPORT`: HCCL's "not supported".
pub const HCCL_E_NOT_SUPPORT: i32 = 5;
/// `atb::ERROR_OPERATION_NULL_RUNNER`: what an ATB operation the emulator
/// does not carry out answers.
pub const ATB_ERROR_OPERATION_NULL_RUNNER: i32 = 10;
/// `ACL_ERROR_OP_NOT_FOUND`: no kernel for the operator.
pub const ACL_ERROR_OP_NOT_FOUND: i32 = aclmem_core::AclError::OP_NOT_FOUND.code();

/// One function of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The C symbol.
    pub name: &'static str,
    /// The CANN library that holds it.
    pub library: Library,
    /// How the emulator answers it.
    pub answer: Answer,
    /// What it returns.
    pub returns: Returns,
    /// The first CANN release whose library has it, as its major and minor
    /// number, where not every release the project emulates does (it may be
    /// newer than all of them); `None` for a function of every release.
    pub since: Option<(u32, u32)>,
    /// Its C prototype as CANN's headers declare it; `None` for the typed
    /// functions, whose prototypes are the shipped headers (`include/acl`)
    /// and the `*_t` types of this crate.
    pub prototype: Option<&'static str>,
}

// The tables, from the lists of `functions.rs` and `operators.rs`.

macro_rules! operator_table {
    ($($name:ident: $what:literal;)*) => {
        /// The operators `aclopCompileAndExecute(V2)` carries out, with what
        /// each computes, in the order of
        /// [`with_operators!`](crate::with_operators).
        pub const OPERATORS: &[(&str, &str)] = &[$((stringify!($name), $what)),*];
    };
}
crate::with_operators!(operator_table);

macro_rules! framework_table {
    ($($name:ident in $lib:ident $(since ($smaj:literal, $smin:literal))?: $answer:ident -> $ret:ident = $proto:literal;)*) => {
        /// The framework functions, in the order of
        /// [`with_framework_functions!`](crate::with_framework_functions).
        pub const FRAMEWORK: &[Entry] = &[$(
            Entry {
                name: stringify!($name),
                library: Library::$lib,
                answer: Answer::$answer,
                returns: Returns::$ret,
                since: framework_table!(@since $(($smaj, $smin))?),
                prototype: Some($proto),
            }
        ),*];
    };
    (@since) => { None };
    (@since ($major:literal, $minor:literal)) => { Some(($major, $minor)) };
}
crate::with_framework_functions!(framework_table);

/// The typed function `name` as a catalogue entry.
fn typed(name: &'static str) -> Entry {
    Entry {
        name,
        library: Library::AscendCl,
        answer: Answer::Emulated,
        // aclrtGetSocName is the one typed function that returns a pointer.
        returns: if name == "aclrtGetSocName" {
            Returns::Pointer
        } else {
            Returns::Code
        },
        since: None,
        prototype: None,
    }
}

/// Every function of the catalogue: the typed ones, then the framework ones.
pub fn entries() -> impl Iterator<Item = Entry> {
    FUNCTIONS
        .iter()
        .map(|(name, _)| typed(name))
        .chain(FRAMEWORK.iter().copied())
}

/// The catalogue's entry for `name`.
pub fn find(name: &str) -> Option<Entry> {
    entries().find(|e| e.name == name)
}

impl Entry {
    /// Whether the library of `release` has the function (see
    /// [`Entry::since`]).
    pub fn in_release(&self, release: aclmem_core::CannVersion) -> bool {
        self.since
            .is_none_or(|first| release.major_minor() >= first)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::*;

    #[test]
    fn every_name_is_listed_once() {
        let names: Vec<&str> = entries().map(|e| e.name).collect();
        for (i, a) in names.iter().enumerate() {
            assert!(!names[i + 1..].contains(a), "{a} is listed twice");
        }
    }

    #[test]
    fn only_the_soc_name_returns_a_pointer_among_the_typed_functions() {
        let pointers: Vec<&str> = FUNCTIONS
            .iter()
            .map(|(n, _)| typed(n))
            .filter(|e| e.returns == Returns::Pointer)
            .map(|e| e.name)
            .collect();
        assert_eq!(pointers.as_slice(), ["aclrtGetSocName"]);
    }

    #[test]
    fn the_rules_tables_calls_are_in_the_catalogue_from_their_release() {
        // The typed API's release gates (aclmem-core's rules table) and the
        // catalogue's `since` (what the emulated library exports per
        // release) say the same.
        for api in aclmem_core::Api::ALL {
            for name in api.functions() {
                let entry = find(name).unwrap_or_else(|| panic!("{name} not catalogued"));
                assert_eq!(entry.since, Some(api.since().major_minor()), "{name}");
            }
        }
    }
}
