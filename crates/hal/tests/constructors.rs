//! Every public way to obtain a typed value, and what guards it. Each
//! compile-time guard is proven by a compile-fail case of the UI suite
//! (`ui-tests/cases/fail`); this test keeps the list, the cases and the
//! table in `typed.rs`'s module docs in step.

use std::path::Path;

/// (constructor, the guard, the UI case that proves a compile-time guard).
const CONSTRUCTORS: &[(&str, &str, Option<&str>)] = &[
    ("on_device", "P: Supports<Device, A>", Some("ddr_on_device")),
    ("on_host", "P: Supports<Host, A>", Some("huge1g_on_host")),
    (
        "on_numa_node",
        "P: Supports<HostNuma, A>",
        Some("hbm_huge1g_on_host_numa"),
    ),
    ("checked", "the rules table at run time", None),
    (
        "Session::new",
        "the backend's platform and CANN release",
        None,
    ),
    (
        "malloc",
        "takes a PhysicalMemProp<P, L, A>",
        Some("prop_of_another_product"),
    ),
    (
        "import",
        "P: Supports<Device, A>",
        Some("import_ddr_as_device_memory"),
    ),
    (
        "import",
        "P: Supports<Device, A>",
        Some("import_huge1g_on_training"),
    ),
    ("export", "device memory only", Some("export_host_memory")),
    ("reserve", "the backend", None),
    ("map", "same session, range, binding (run time)", None),
    (
        "expandable_segment",
        "takes a PhysicalMemProp<P, L, A>",
        None,
    ),
    ("stream", "the backend", None),
    (
        "mem_pool",
        "P: HasApi<MemPoolCreate>",
        Some("mem_pool_on_cann85"),
    ),
    (
        "mem_pool",
        "P: HasApi<MemPoolCreate>",
        Some("mem_pool_on_atlas_a3"),
    ),
    (
        "malloc_async",
        "P: HasApi<MemPoolMallocAsync>",
        Some("pool_malloc_async_on_cann90"),
    ),
    (
        "malloc_managed",
        "P: HasApi<MemAllocManaged>",
        Some("managed_on_cann85"),
    ),
    (
        "malloc_managed",
        "P: HasApi<MemAllocManaged>",
        Some("managed_on_training"),
    ),
];

#[test]
fn every_compile_time_guard_has_a_failing_case() {
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui-tests/cases/fail");
    for (constructor, guard, case) in CONSTRUCTORS {
        let Some(case) = case else { continue };
        let source = cases.join(format!("{case}.rs"));
        let text = std::fs::read_to_string(&source)
            .unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        let name = constructor.rsplit("::").next().unwrap();
        assert!(
            text.contains(name),
            "{case}.rs does not call `{constructor}` ({guard})"
        );
        let stderr = cases.join(format!("{case}.stderr"));
        assert!(stderr.exists(), "{} missing", stderr.display());
    }
}

#[test]
fn the_module_docs_list_the_same_constructors() {
    let typed = include_str!("../src/typed.rs");
    let table: String = typed
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    for (constructor, _, _) in CONSTRUCTORS {
        let name = constructor.rsplit("::").next().unwrap();
        assert!(
            table.contains(name),
            "`{constructor}` missing from typed.rs docs"
        );
    }
}
