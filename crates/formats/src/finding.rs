//! Findings: what the sanitizer reports, one [`Record`] per line of its
//! log (`ACLMEM_SANITIZER_LOG`), and the [`Class`] of each, the one list
//! from which the sanitizer's README table, the JSON names and the tests'
//! lists come.

use serde::{Deserialize, Serialize};

/// What a finding is about. The JSON name is the kebab-case of the
/// variant (`double-free`); [`Class::description`] is the README's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// `rule`.
    Rule,
    /// `portability`.
    Portability,
    /// `double-free`.
    DoubleFree,
    /// `free-while-mapped`.
    FreeWhileMapped,
    /// `use-after-free`.
    UseAfterFree,
    /// `unmap-unmapped`.
    UnmapUnmapped,
    /// `release-while-mapped`.
    ReleaseWhileMapped,
    /// `release-unreserved`.
    ReleaseUnreserved,
    /// `overlapping-map`.
    OverlappingMap,
    /// `copy-unmapped`.
    CopyUnmapped,
    /// `import-own-export`.
    ImportOwnExport,
    /// `handle-type-as-device`.
    HandleTypeAsDevice,
    /// `ipc-key-on-vmm`.
    IpcKeyOnVmm,
    /// `import-after-free`.
    ImportAfterFree,
    /// `whitelisted-never-imported`.
    WhitelistedNeverImported,
    /// `import-held-at-exit`.
    ImportHeldAtExit,
    /// `exporter-exited-while-mapped`.
    ExporterExitedWhileMapped,
    /// `cycle-growth`.
    CycleGrowth,
    /// `out-of-memory`.
    OutOfMemory,
    /// `unsupported-call`.
    UnsupportedCall,
    /// `api-error`.
    ApiError,
    /// `leak`.
    Leak,
    /// `collective-unmapped`.
    CollectiveUnmapped,
    /// `comm-memory-released-while-active`.
    CommMemoryReleasedWhileActive,
    /// `communicator-not-destroyed`.
    CommunicatorNotDestroyed,
    /// `graph-memory-released`.
    GraphMemoryReleased,
    /// `graph-replay-released`.
    GraphReplayReleased,
    /// `graph-not-destroyed`.
    GraphNotDestroyed,
    /// `pool-use-after-free`.
    PoolUseAfterFree,
    /// `pool-use-after-destroy`.
    PoolUseAfterDestroy,
    /// `pool-destroyed-with-live-memory`.
    PoolDestroyedWithLiveMemory,
    /// `managed-memory-leaked`.
    ManagedMemoryLeaked,
    /// `pool-stream-unordered`.
    PoolStreamUnordered,
    /// `mstx-heap-unmapped`.
    MstxHeapUnmapped,
    /// `mstx-region-outside-heap`.
    MstxRegionOutsideHeap,
    /// `mstx-access-outside-region`.
    MstxAccessOutsideRegion,
    /// `mstx-freed-while-registered`.
    MstxFreedWhileRegistered,
    /// `mstx-unknown-handle`.
    MstxUnknownHandle,
}

impl Class {
    /// Every class, in the order the README lists them.
    pub const ALL: [Class; 38] = [
        Class::Rule,
        Class::Portability,
        Class::DoubleFree,
        Class::FreeWhileMapped,
        Class::UseAfterFree,
        Class::UnmapUnmapped,
        Class::ReleaseWhileMapped,
        Class::ReleaseUnreserved,
        Class::OverlappingMap,
        Class::CopyUnmapped,
        Class::ImportOwnExport,
        Class::HandleTypeAsDevice,
        Class::IpcKeyOnVmm,
        Class::ImportAfterFree,
        Class::WhitelistedNeverImported,
        Class::ImportHeldAtExit,
        Class::ExporterExitedWhileMapped,
        Class::CycleGrowth,
        Class::OutOfMemory,
        Class::UnsupportedCall,
        Class::ApiError,
        Class::Leak,
        Class::CollectiveUnmapped,
        Class::CommMemoryReleasedWhileActive,
        Class::CommunicatorNotDestroyed,
        Class::GraphMemoryReleased,
        Class::GraphReplayReleased,
        Class::GraphNotDestroyed,
        Class::PoolUseAfterFree,
        Class::PoolUseAfterDestroy,
        Class::PoolDestroyedWithLiveMemory,
        Class::ManagedMemoryLeaked,
        Class::PoolStreamUnordered,
        Class::MstxHeapUnmapped,
        Class::MstxRegionOutsideHeap,
        Class::MstxAccessOutsideRegion,
        Class::MstxFreedWhileRegistered,
        Class::MstxUnknownHandle,
    ];

    /// The name in reports and in the log (`double-free`).
    pub const fn name(self) -> &'static str {
        match self {
            Class::Rule => "rule",
            Class::Portability => "portability",
            Class::DoubleFree => "double-free",
            Class::FreeWhileMapped => "free-while-mapped",
            Class::UseAfterFree => "use-after-free",
            Class::UnmapUnmapped => "unmap-unmapped",
            Class::ReleaseWhileMapped => "release-while-mapped",
            Class::ReleaseUnreserved => "release-unreserved",
            Class::OverlappingMap => "overlapping-map",
            Class::CopyUnmapped => "copy-unmapped",
            Class::ImportOwnExport => "import-own-export",
            Class::HandleTypeAsDevice => "handle-type-as-device",
            Class::IpcKeyOnVmm => "ipc-key-on-vmm",
            Class::ImportAfterFree => "import-after-free",
            Class::WhitelistedNeverImported => "whitelisted-never-imported",
            Class::ImportHeldAtExit => "import-held-at-exit",
            Class::ExporterExitedWhileMapped => "exporter-exited-while-mapped",
            Class::CycleGrowth => "cycle-growth",
            Class::OutOfMemory => "out-of-memory",
            Class::UnsupportedCall => "unsupported-call",
            Class::ApiError => "api-error",
            Class::Leak => "leak",
            Class::CollectiveUnmapped => "collective-unmapped",
            Class::CommMemoryReleasedWhileActive => "comm-memory-released-while-active",
            Class::CommunicatorNotDestroyed => "communicator-not-destroyed",
            Class::GraphMemoryReleased => "graph-memory-released",
            Class::GraphReplayReleased => "graph-replay-released",
            Class::GraphNotDestroyed => "graph-not-destroyed",
            Class::PoolUseAfterFree => "pool-use-after-free",
            Class::PoolUseAfterDestroy => "pool-use-after-destroy",
            Class::PoolDestroyedWithLiveMemory => "pool-destroyed-with-live-memory",
            Class::ManagedMemoryLeaked => "managed-memory-leaked",
            Class::PoolStreamUnordered => "pool-stream-unordered",
            Class::MstxHeapUnmapped => "mstx-heap-unmapped",
            Class::MstxRegionOutsideHeap => "mstx-region-outside-heap",
            Class::MstxAccessOutsideRegion => "mstx-access-outside-region",
            Class::MstxFreedWhileRegistered => "mstx-freed-while-registered",
            Class::MstxUnknownHandle => "mstx-unknown-handle",
        }
    }

    /// The class a name gives (`None` for anything else).
    pub fn from_name(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }

    /// What the sanitizer reports under the class, as the README's table
    /// says it (Markdown).
    pub const fn description(self) -> &'static str {
        match self {
            Class::Rule => {
                "`aclrtMallocPhysical` with a location or attribute the product and CANN release it runs on refuse (detected with `aclrtGetSocName`, `aclrtGetRunMode`, `aclsysGetCANNVersion`, or `$ACLMEM_CANN`); the rule in words and the code the runtime answers"
            }
            Class::Portability => {
                "the same for each `product[:ep\\|rc][@release]` of `ACLMEM_SANITIZER_TARGETS` (`a2,a3@8.3,Ascend910B3@8.0,200i-a2:rc`; without a run mode or release: the ones it runs on). `aclmem sanitize --targets` refuses a misspelt entry (exit 2, with the closest name) before the program starts"
            }
            Class::DoubleFree => {
                "`aclrtFreePhysical` of a handle already freed (the last 4096 freed values are remembered)"
            }
            Class::FreeWhileMapped => {
                "`aclrtFreePhysical` of a mapped handle (legal: the memory stays until the last unmap, which is rarely what was meant)"
            }
            Class::UseAfterFree => "map or export of a freed handle",
            Class::UnmapUnmapped => "`aclrtUnmapMem` where no mapping starts",
            Class::ReleaseWhileMapped => "`aclrtReleaseMemAddress` of a range with mappings",
            Class::ReleaseUnreserved => {
                "`aclrtReleaseMemAddress` where no reservation of the process starts: says whether the range was released already (a double release; the last 4096 released addresses are remembered)"
            }
            Class::OverlappingMap => "`aclrtMapMem` over a live mapping",
            Class::CopyUnmapped => {
                "`aclrtMemcpy(Async)` or `aclrtMemset` whose device side is not mapped or `aclrtMalloc` memory of the process"
            }
            Class::ImportOwnExport => "a process importing its own shareable handle",
            Class::HandleTypeAsDevice => {
                "`aclrtMemImportFromShareableHandle` whose device id is not the calling thread's device but the value of a handle type (`ACL_MEM_HANDLE_TYPE_NONE` 0, `ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT` 1, `_FABRIC` and `ACL_MEM_HANDLE_TYPE_POSIX` 2): the runtime takes any device of the machine, so the import lands on the wrong one silently (the confusion of simpler's PR #1334). A deliberate import onto another device 0, 1 or 2 is reported too: the conservative side. Under `aclmem sanitize`, the finding also names the exporter's export (its pid and line) and the handle's lifecycle"
            }
            Class::IpcKeyOnVmm => {
                "`aclrtIpcMemGetExportKey` on an address inside a mapping made with `aclrtMapMem`: legacy IPC keys share `aclrtMalloc` memory only; the finding names the handle and where it was mapped"
            }
            Class::ImportAfterFree => {
                "(across processes) an import of a shareable handle after its exporter freed the handle or exited; names the importer's call and the exporter's free, both with stacks"
            }
            Class::WhitelistedNeverImported => {
                "(across processes) a pid whitelisted for a shareable handle (`aclrtMemSetPidToShareableHandle(V2)`, `aclrtIpcMemSetImportPid`) that never tried to import it: says whether that pid was a process of the run, the exporter itself, or none of the run's"
            }
            Class::ImportHeldAtExit => {
                "(across processes) a process that ended still mapping, or holding, a handle it imported; names the exporter"
            }
            Class::ExporterExitedWhileMapped => {
                "(across processes) a process that exited, holding a handle it exported or having freed it, while another process still mapped it (a forked child that exports to its parent, frees, finalises and exits): names the exit's line and the mapping's"
            }
            Class::CycleGrowth => {
                "at `aclFinalize` and at exit: across sleep/wake cycles, what the process held at the end of each of at least 3 sleeps grew at every one: the growth per cycle, what was held after each sleep (the first 32), and the place that made, in most wakes, memory still held (at the end, or at the last wake when the program frees it all at teardown). Cycles are found by a heuristic (a sleep unmaps ranges whose addresses stay reserved, a wake maps memory at one of them again, as vllm-ascend's and sglang's memory savers do), or marked by the program: `aclmem_sanitizer_phase(\"sleep\")` and `(\"wake\")` (a weak symbol in C, `ctypes.CDLL(None).aclmem_sanitizer_phase` in Python), or the mstx markers and ranges Ascend's profilers read (`mstxRangeStartA`, `mstxRangeEnd`, `mstxMarkA` of `libms_tools_ext.so`, however the program reaches them): a range or marker whose message contains `sleep` (any case) starts a sleep and the end of such a range is the wake; one that contains `wake` is a wake. All of them also appear as markers in the timeline"
            }
            Class::OutOfMemory => {
                "an allocation of device memory (`aclrtMallocPhysical`, `aclrtMalloc`, `aclrtMallocAlign32`) refused for lack of memory (207001, torch_npu's OOM): what held the device in the process then, grouped by the call site that made it, largest first, each with bytes, count and stack (all of them as `\"holders\": [{\"site\", \"bytes\", \"count\", \"stack\"}]` in the log, with `\"requested\"`, `\"held\"` and the process's `\"address_space\"`: reserved, mapped, largest unmapped run)"
            }
            Class::UnsupportedCall => {
                "at exit, on the emulated library: a function the emulator does not carry out (an operator, a graph, ...; docs/catalogue.md), once per function, with its count, the code it answered and where it was first called"
            }
            Class::ApiError => {
                "with `--report-api-errors` (`ACLMEM_SANITIZER_REPORT_API_ERRORS=1`): a call the library refused, with its code and call site"
            }
            Class::Leak => {
                "at `aclFinalize` and at exit: handles, reservations, mappings, `aclrtMalloc` and `aclrtMallocHost` memory still held, each with the call that made it. Under `aclmem sanitize`, exported and imported handles are judged with the other processes' events instead: an exported handle never freed is a `leak` unless another process still mapped it at the exporter's exit (`exporter-exited-while-mapped`); an import still held is `import-held-at-exit` (with the reservation that holds its mapping)"
            }
            Class::CollectiveUnmapped => {
                "an HCCL collective or transfer (`HcclAllReduce`, `HcclBroadcast`, `HcclAllGather`, `HcclReduceScatter`, `HcclReduce`, `HcclSend`, `HcclRecv`) whose buffer, by its count and data type, is not mapped or `aclrtMalloc` memory of the process (freed, unmapped, or too small): names the buffer, the rank and size of the communicator, and the call site"
            }
            Class::CommMemoryReleasedWhileActive => {
                "`aclrtFree` or `aclrtUnmapMem` of memory a communicator still has activated (`HcclCommActivateCommMemory` without `HcclCommDeactivateCommMemory`, torch_npu's zero-copy registration): names the activation"
            }
            Class::CommunicatorNotDestroyed => {
                "at exit: an HCCL communicator made (`HcclCommInitRootInfo(Config)`, `HcclCommInitAll`) and never destroyed with `HcclCommDestroy`, with the call that made it"
            }
            Class::GraphMemoryReleased => {
                "`aclrtFree`, `aclrtFreeHost` or `aclrtUnmapMem` of memory an ACL graph still alive captured (a copy, set or operator recorded by `aclmdlRICaptureBegin`..`aclmdlRICaptureEnd`, the graph not yet destroyed with `aclmdlRIDestroy`): names the graph and where the memory was captured"
            }
            Class::GraphReplayReleased => {
                "`aclmdlRIExecuteAsync` of a graph whose captured memory was released since the capture: the replay would read or write memory the process no longer holds; names the range and where it was captured"
            }
            Class::GraphNotDestroyed => {
                "at exit: an ACL graph captured (`aclmdlRICaptureEnd`) and never destroyed with `aclmdlRIDestroy`, with where its capture began"
            }
            Class::PoolUseAfterFree => {
                "a copy or fill (`aclrtMemcpy`, `aclrtMemcpyAsync`, `aclrtMemset`) of stream-ordered pool memory after `aclrtMemPoolFreeAsync` gave it back to its pool (the block may be another allocation's by then): names the block and where it was allocated and freed"
            }
            Class::PoolUseAfterDestroy => {
                "a copy or fill of memory of a stream-ordered pool destroyed since (`aclrtMemPoolDestroy`): names the block and where it was allocated and its pool destroyed"
            }
            Class::PoolDestroyedWithLiveMemory => {
                "`aclrtMemPoolDestroy` of a pool with blocks still allocated (`aclrtMemPoolMallocAsync` without `aclrtMemPoolFreeAsync`): the runtime frees them with the pool; names the first and where it was allocated"
            }
            Class::ManagedMemoryLeaked => {
                "at exit: managed memory (`aclrtMemAllocManaged`) never freed with `aclrtFree`, with where it was allocated"
            }
            Class::PoolStreamUnordered => {
                "a copy (`aclrtMemcpyAsync`) or free (`aclrtMemPoolFreeAsync`) on one stream of pool memory allocated on another (`aclrtMemPoolMallocAsync`), with nothing ordering the second stream after the allocation (an event recorded on the allocating stream and waited for with `aclrtStreamWaitEvent`, or a synchronisation of that stream or the device): names the block, its stream and where it was allocated; once per block and stream"
            }
            Class::MstxHeapUnmapped => {
                "`mstxMemHeapRegister` of a pool over memory that is not mapped or `aclrtMalloc` memory of the process (the mstx memory API, docs/mstx.md: a heap must be allocated before it is registered)"
            }
            Class::MstxRegionOutsideHeap => {
                "`mstxMemRegionsRegister` of a region that does not lie inside its heap: names the heap's registration"
            }
            Class::MstxAccessOutsideRegion => {
                "`aclrtMemcpy(Async)` or `aclrtMemset` whose device side, inside a registered heap over mapped memory, leaves the regions registered in it: it crosses a region's end (the overflow a pool hides from `copy-unmapped`), or touches heap memory no region covers (a block never handed out, or unregistered already: the use after free a pool hides); names the region or the heap and where it was registered"
            }
            Class::MstxFreedWhileRegistered => {
                "`aclrtFree` or `aclrtUnmapMem` of memory under a heap or region still registered (`mstxMemHeapUnregister`, `mstxMemRegionsUnregister` not called first): names the registration"
            }
            Class::MstxUnknownHandle => {
                "an mstx memory call naming a heap or region that is not registered (never, or not any more) in its domain: `mstxMemRegionsRegister` in such a heap, `mstxMemHeapUnregister` of one, `mstxMemRegionsUnregister` of a pointer or handle no region has"
            }
        }
    }

    /// Whether the finding is about what a run left held (a leak in any
    /// of its forms, growth across cycles included), rather than a misuse.
    pub const fn is_leak(self) -> bool {
        matches!(
            self,
            Class::Leak
                | Class::CommunicatorNotDestroyed
                | Class::GraphNotDestroyed
                | Class::ImportHeldAtExit
                | Class::ExporterExitedWhileMapped
                | Class::CycleGrowth
        )
    }

    /// The README's table of classes (Markdown rows, without the header).
    pub fn table() -> String {
        Class::ALL
            .iter()
            .map(|c| format!("| `{}` | {} |\n", c.name(), c.description()))
            .collect()
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One finding as the log has it: the class, the call with its arguments,
/// what is wrong, the code the runtime answers (if it refuses), where, and
/// what more the class tells (`holders` of an out-of-memory, the two sides
/// of a cross-process finding, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// What it is about.
    pub class: Class,
    /// The ACL function.
    #[serde(default)]
    pub call: String,
    /// Its arguments, as written in the report.
    #[serde(default)]
    pub args: String,
    /// What is wrong, in words.
    #[serde(default)]
    pub message: String,
    /// The code the runtime answers, if it refuses.
    #[serde(default)]
    pub code: Option<i32>,
    /// Where the call was made (`function (file:line)`).
    #[serde(default)]
    pub site: String,
    /// The stack below it, innermost first.
    #[serde(default)]
    pub stack: Vec<String>,
    /// The process.
    #[serde(default)]
    pub pid: u32,
    /// What more the class tells.
    #[serde(flatten)]
    pub more: serde_json::Map<String, serde_json::Value>,
}

impl Record {
    /// The records of a log's text (a line that does not parse is left
    /// out: a process killed while it wrote).
    pub fn parse_all(text: &str) -> Vec<Record> {
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_json_names_and_unique() {
        for c in Class::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.name());
            assert_eq!(Class::from_name(c.name()), Some(c));
            assert!(!c.description().is_empty());
        }
        let names: std::collections::BTreeSet<_> = Class::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), Class::ALL.len());
        assert_eq!(Class::from_name("no-such-class"), None);
    }

    /// The sanitizer's README lists every class, as [`Class::table`] makes
    /// the rows (edit the descriptions here, then paste the table there).
    #[test]
    fn the_readme_table_is_the_enum() {
        let readme = include_str!("../../sanitizer/README.md");
        let rows: String = readme
            .lines()
            .filter(|l| {
                l.starts_with("| `")
                    && l[3..]
                        .split('`')
                        .next()
                        .is_some_and(|n| n.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'))
            })
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            rows,
            Class::table(),
            "crates/sanitizer/README.md's table of classes"
        );
    }

    #[test]
    fn a_record_keeps_what_its_class_adds() {
        let line = r#"{"class":"out-of-memory","call":"aclrtMalloc","args":"","message":"m","code":207001,"site":"main (a.c:3)","stack":[],"pid":7,"requested":4096}"#;
        let r: Record = serde_json::from_str(line).unwrap();
        assert_eq!(r.class, Class::OutOfMemory);
        assert_eq!(r.more["requested"], 4096);
        let back: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert_eq!(
            back,
            serde_json::from_str::<serde_json::Value>(line).unwrap()
        );
    }
}
