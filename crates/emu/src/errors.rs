//! The emulator's error table: the code it answers in every situation whose
//! code CANN does not document, in one place.
//!
//! Codes the runtime fixes before any driver is involved (its ACL-layer
//! argument checks, 100000, and its runtime-layer checks, 107000 / 107001 /
//! 107016) are facts and are implemented where the arguments are checked;
//! they are listed in `docs/facts.md`. Everything below is decided by the
//! closed driver on real hardware. The scheme, where nothing is documented:
//!
//! * a value or state the driver would reject as invalid: **107000**
//!   (`ACL_ERROR_RT_PARAM_INVALID`), because the runtime maps the driver's
//!   `EINVAL` to it (its own unit tests show the mapping);
//! * a handle that is not live: **107017** (`ACL_ERROR_RT_INVALID_HANDLE`,
//!   the driver's invalid-handle code);
//! * a feature the product or form lacks: **207000**; a permission the
//!   whitelist denies: **207006**; a limit of the emulator: **207012**
//!   (`ACL_ERROR_RT_OVER_LIMIT`); a kernel resource of the host (file
//!   descriptors): **207005** (`ACL_ERROR_RT_RESOURCE_ALLOC_FAIL`) with the
//!   limit named on stderr. Out of (emulated) device memory is 207001 and
//!   nothing else.
//!
//! `cargo test -p aclmem-emu-capi --test error_table` provokes every entry and
//! checks the code.

use aclmem_core::AclError;

/// Why the code is what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Documented; the source is in `docs/facts.md`.
    Documented,
    /// Not documented; chosen by the scheme above.
    Unconfirmed,
}

macro_rules! error_table {
    ($($(#[$doc:meta])* $name:ident => $code:ident, $basis:ident, $what:literal;)*) => {
        /// A situation whose code the emulator decides.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Situation {
            $($(#[$doc])* $name,)*
        }

        impl Situation {
            /// Every situation, in table order.
            pub const ALL: &'static [Situation] = &[$(Situation::$name),*];

            /// The code the emulator answers.
            pub const fn code(self) -> AclError {
                match self { $(Situation::$name => AclError::$code,)* }
            }

            /// Whether the code is documented or chosen.
            pub const fn basis(self) -> Basis {
                match self { $(Situation::$name => Basis::$basis,)* }
            }

            /// The situation in words.
            pub const fn what(self) -> &'static str {
                match self { $(Situation::$name => $what,)* }
            }
        }
    };
}

error_table! {
    /// `aclrtReleaseMemAddress` / `aclrtMapMem` / `aclrtUnmapMem` of an
    /// address no reservation of this process contains.
    NotReserved => RT_PARAM_INVALID, Unconfirmed, "address not inside a reservation of this process";
    /// `aclrtUnmapMem` of an address where no mapping starts.
    NotMapped => RT_PARAM_INVALID, Unconfirmed, "no mapping starts at this address";
    /// `aclrtMapMem` over a live mapping.
    Overlap => RT_PARAM_INVALID, Unconfirmed, "the range overlaps a live mapping";
    /// `aclrtMapMem` of a range that leaves its reservation.
    OutsideReservation => RT_PARAM_INVALID, Unconfirmed, "the range leaves its reservation";
    /// `aclrtMapMem` with a size other than the handle's, or at an address
    /// not aligned to the handle's page size: 2 MiB, and 1 GiB for 1 GiB
    /// pages (documented as required; the code is not).
    PartialMap => RT_PARAM_INVALID, Unconfirmed, "size differs from the handle's, or the address is not aligned to its pages (1 GiB for 1 GiB pages)";
    /// `aclrtMapMem` with an offset other than 0 (documented as required).
    MapOffset => RT_PARAM_INVALID, Unconfirmed, "offset must be 0";
    /// `aclrtMapMem` of memory of a second device, or of imported next to
    /// local memory, into one reservation (documented as forbidden).
    MixedReservation => RT_PARAM_INVALID, Unconfirmed, "one reservation holds memory of one device and one origin";
    /// `aclrtReleaseMemAddress` while mappings are live (documented as
    /// forbidden).
    ReleaseWhileMapped => RT_PARAM_INVALID, Unconfirmed, "unmap every mapping before releasing";
    /// `aclrtUnmapMem` while a copy of this process is using the mapping.
    MappingInUse => RT_PARAM_INVALID, Unconfirmed, "a copy is using the mapping";
    /// A handle that is not live in this process: freed, stale (from before
    /// `aclFinalize`), of another process, or made up.
    StaleHandle => RT_INVALID_HANDLE, Unconfirmed, "the handle is not live in this process";
    /// `aclrtMallocPhysical` with a size that is not a multiple of the
    /// granularity (whether the driver rounds or rejects is not documented:
    /// rejecting means code that passes here passes there).
    UnalignedSize => RT_PARAM_INVALID, Unconfirmed, "size must be a multiple of the granularity";
    /// A host-NUMA location id without such a node.
    UnknownNumaNode => RT_PARAM_INVALID, Unconfirmed, "no such NUMA node";
    /// `aclrtReserveMemAddress` with a non-zero alignment (documented as
    /// reserved; passed to the driver unchecked).
    ReserveAlignment => RT_PARAM_INVALID, Unconfirmed, "alignment is reserved and must be 0";
    /// A non-NULL expected address the release does not accept: before 8.5
    /// (NULL only), on Atlas 350 (NULL only), or misaligned / outside the
    /// 16–24 TiB window (8.5 documents 107000 for a misaligned one).
    ExpectedAddress => RT_PARAM_INVALID, Documented, "expected address refused (release rules: NULL only before 8.5 and on Atlas 350; 1 GiB aligned in 8.5; 16-24 TiB window in 9.0)";
    /// An expected address that is already in use (documented in a CANN
    /// 9.0 reference as ACL_ERROR_RT_MEMORY_ALLOCATION).
    ExpectedAddressTaken => RT_MEMORY_ALLOCATION, Documented, "the expected address is in use";
    /// Exporting a handle that was exported already (documented as an
    /// error).
    ExportTwice => RT_PARAM_INVALID, Unconfirmed, "a handle is exported once";
    /// Exporting an imported handle.
    ExportImported => RT_PARAM_INVALID, Unconfirmed, "only memory allocated here can be exported";
    /// Exporting host memory (only device memory is shareable).
    ExportHostMemory => RT_FEATURE_NOT_SUPPORT, Documented, "only device memory can be shared";
    /// A shareable handle or IPC key that is unknown, freed, or whose
    /// exporter is gone.
    UnknownShareable => RT_PARAM_INVALID, Unconfirmed, "unknown or released shareable handle";
    /// Importing without being on the whitelist.
    NotWhitelisted => RT_NO_PERMISSION, Unconfirmed, "this process is not on the whitelist";
    /// Importing what this process exported (documented as unsupported).
    ImportOwnExport => RT_FEATURE_NOT_SUPPORT, Unconfirmed, "a process cannot import its own export";
    /// Importing one shareable handle twice in one process.
    ImportTwice => RT_PARAM_INVALID, Unconfirmed, "already imported by this process";
    /// Setting pids on a shareable handle another process exported.
    NotExporter => RT_NO_PERMISSION, Unconfirmed, "only the exporting process sets the whitelist";
    /// A pid of 0 or below.
    BadPid => RT_PARAM_INVALID, Unconfirmed, "pids are positive";
    /// More pids on one whitelist than the emulator keeps (128).
    WhitelistFull => RT_OVER_LIMIT, Unconfirmed, "a whitelist holds at most 128 pids";
    /// More live shareable handles on the machine than it keeps (16384).
    TooManyExports => RT_OVER_LIMIT, Unconfirmed, "at most 16384 shareable handles per machine";
    /// More processes on the machine than it keeps (256).
    TooManyProcesses => RT_RESOURCE_ALLOC_FAIL, Unconfirmed, "at most 256 processes per machine";
    /// A mapping that would exceed this process's share of
    /// `vm.max_map_count` (named on stderr).
    MapCountLimit => RT_OVER_LIMIT, Unconfirmed, "vm.max_map_count would be exceeded";
    /// No file descriptor left (RLIMIT_NOFILE, named on stderr).
    FdLimit => RT_RESOURCE_ALLOC_FAIL, Unconfirmed, "out of file descriptors";
    /// A copy or fill whose device range is not mapped, or whose host range
    /// the process may not read or write.
    BadCopyAddress => RT_PARAM_INVALID, Unconfirmed, "address not mapped, or not readable/writable";
    /// A copy whose kind contradicts the addresses (H2D with a host
    /// destination, ...).
    CopyKindMismatch => RT_PARAM_INVALID, Unconfirmed, "the copy kind does not match the addresses";
    /// `aclrtMemset` with count > maxCount.
    MemsetOverflow => RT_PARAM_INVALID, Unconfirmed, "count exceeds maxCount";
    /// `aclrtFree` / `aclrtFreeHost` of an address that is not the start of
    /// such an allocation.
    NotAllocated => RT_PARAM_INVALID, Unconfirmed, "not an allocation of this kind";
    /// `aclrtDestroyContext` of the default context or an unknown one, or a
    /// stream or context that is not live.
    BadContextOrStream => RT_PARAM_INVALID, Unconfirmed, "not a live context or stream made by the caller";
    /// An event that is not live (never created, or destroyed).
    BadEvent => RT_PARAM_INVALID, Unconfirmed, "not a live event made by the caller";
    /// `aclrtEventElapsedTime` with an event that was never recorded.
    EventNotRecorded => RT_PARAM_INVALID, Unconfirmed, "the event has not been recorded";
    /// More streams than the product allows.
    StreamLimit => RT_RESOURCE_ALLOC_FAIL, Unconfirmed, "too many streams";
    /// IPC export of a range that is not page-table aligned (documented as an
    /// error) or not inside one aclrtMalloc block.
    IpcRange => RT_PARAM_INVALID, Unconfirmed, "the range must be a page-aligned part of one aclrtMalloc block";
    /// The IPC key buffer length is too short (documented: fixed to 65).
    IpcKeyLength => RT_PARAM_INVALID, Unconfirmed, "the key buffer must hold 65 bytes";
    /// V2 sharing with the FABRIC handle type on a product other than A3
    /// (documented as A3 only).
    FabricNotA3 => RT_FEATURE_NOT_SUPPORT, Documented, "FABRIC handles are A3 only";
    /// `aclrtMemRetainAllocationHandle` / `aclrtMemSetAccess` /
    /// `aclrtMemGetAccess` at an address where no mapping starts, or a size
    /// other than the mapping's.
    NotAMappingStart => RT_PARAM_INVALID, Unconfirmed, "virPtr (and size) must be those of an aclrtMapMem call";
    /// An access descriptor other than READWRITE on the device or host.
    BadAccessDesc => RT_PARAM_INVALID, Unconfirmed, "only READWRITE access, on the device or host, with rsv zero";
    /// `aclrtMemGetAddressRange` of an address no allocation contains.
    UnknownAddress => RT_PARAM_INVALID, Unconfirmed, "no allocation contains the address";
    /// `aclrtHostRegister*` of a range that overlaps one already
    /// registered (the runtime's range check and the driver's busy answer).
    HostRangeRegistered => HOST_MEMORY_ALREADY_REGISTERED, Documented, "the host range overlaps a registered one";
    /// `aclrtHostUnregister` of an address that is not the start of a
    /// registered range.
    HostNotRegistered => HOST_MEMORY_NOT_REGISTERED, Documented, "no registered host range starts at this address";
    /// `aclrtHostGetDevicePointer` of an address that is not the start of a
    /// registered range.
    HostPointerNotRegistered => RT_PARAM_INVALID, Documented, "the host pointer has not been registered";
    /// `aclrtHostRegister*` of an address not aligned to 4 KiB (documented
    /// as required; the code is not).
    HostRegisterUnaligned => RT_PARAM_INVALID, Unconfirmed, "the host address must be 4 KiB aligned";
    /// `aclrtHostRegister*` of a range that is not wholly mapped memory of
    /// the process (the driver cannot pin it; the code is not documented).
    HostRangeNotMapped => RT_PARAM_INVALID, Unconfirmed, "the host range is not mapped memory of the process";
    /// `aclrtValueWrite` at an address that is not 8-byte aligned
    /// (documented as required; the runtime's code has no check, so the
    /// conservative answer refuses it).
    ValueWriteUnaligned => RT_PARAM_INVALID, Unconfirmed, "the device address must be 8-byte aligned";
    /// `aclrtValueWait` whose condition does not hold and is not made true
    /// by another thread or process within the emulator's bound (2 s): every
    /// stream's work has run by the time the call returns, so the stream
    /// would wait for ever; the runtime's answer to a stream task that does
    /// not finish is the stream's timeout.
    ValueWaitTimeout => RT_STREAM_SYNC_TIMEOUT, Unconfirmed, "the waited-for value was not written within 2 s";
    /// A call through an emulator object of a parent process, in a forked
    /// child.
    ForkedChild => UNINITIALIZE, Unconfirmed, "a forked child must call aclInit itself";
    /// `aclInit` in a process whose configuration differs from the
    /// machine's (both are printed on stderr).
    ConfigMismatch => INVALID_PARAM, Unconfirmed, "the machine runs another configuration";
    /// A call that needs the machine's lock while one live process has held
    /// it for longer than a critical section ever takes (stopped with
    /// `SIGSTOP`, or a lock word scribbled to name it): answered after
    /// `LOCK_WAIT` instead of waiting forever.
    MachineStuck => RT_DRV_INTERNAL_ERROR, Unconfirmed, "a stopped or stuck process holds the machine's lock";
}

impl From<Situation> for AclError {
    fn from(s: Situation) -> AclError {
        s.code()
    }
}
