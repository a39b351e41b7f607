//! The C headers of `include/` agree with the project's tables:
//!
//! * they declare exactly the functions of `aclmem_sys::FUNCTIONS` (the one
//!   list, which `cargo xtask ci` also checks against the library's
//!   exports), once each;
//! * their error codes, attribute and location values, and struct layouts
//!   are those of `aclmem-core` and `aclmem-sys`: the test generates
//!   `static_assert`s from the Rust tables and compiles them as C++17, and
//!   the headers alone as C11 and C++17, all with `-Wall -Wextra -Werror
//!   -pedantic`.
//!
//! The compilers are `$CC` / `$CXX` (default `cc` / `c++`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use aclmem_core::{AclError, Location, MemAttr};
use aclmem_sys as sys;

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

fn headers() -> Vec<(String, String)> {
    [
        "acl/acl.h",
        "acl/acl_base.h",
        "acl/acl_rt.h",
        "acl/error_codes/rt_error_codes.h",
    ]
    .iter()
    .map(|h| {
        let text =
            std::fs::read_to_string(include_dir().join(h)).unwrap_or_else(|e| panic!("{h}: {e}"));
        (h.to_string(), text)
    })
    .collect()
}

/// The names of the functions the headers declare: every declaration
/// starts a line with `ACL_FUNC_VISIBILITY` (after an optional
/// deprecation line) and may span lines up to its `(`.
fn declared_functions() -> Vec<String> {
    let mut names = Vec::new();
    for (_, text) in headers() {
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            let Some(mut head) = line.strip_prefix("ACL_FUNC_VISIBILITY ").map(str::to_owned)
            else {
                continue;
            };
            while !head.contains('(') {
                match lines.next() {
                    Some(more) => head.push_str(more),
                    None => break,
                }
            }
            let before = head.split('(').next().unwrap_or_default();
            let name = before
                .trim_end()
                .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or_default();
            names.push(name.to_owned());
        }
    }
    names
}

#[test]
fn the_headers_declare_exactly_the_listed_functions() {
    let declared = declared_functions();
    let unique: BTreeSet<&str> = declared.iter().map(String::as_str).collect();
    assert_eq!(unique.len(), declared.len(), "a function is declared twice");
    let listed: BTreeSet<&str> = sys::FUNCTIONS.iter().map(|(n, _)| *n).collect();
    let missing: Vec<_> = listed.difference(&unique).collect();
    let extra: Vec<_> = unique.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "not declared in include/acl: {missing:?}"
    );
    assert!(
        extra.is_empty(),
        "declared but not in aclmem_sys::FUNCTIONS: {extra:?}"
    );
    assert_eq!(declared.len(), aclmem_sys::FUNCTIONS.len());
}

/// `static_assert`s of every value and layout the Rust side relies on.
fn agreement_checks() -> String {
    let mut c = String::from(
        "#include <acl/acl.h>\n#include <cstddef>\n\n\
         #define SAME(name, value) static_assert((name) == (value), #name \" differs from the Rust tables\")\n\n",
    );
    for e in AclError::KNOWN {
        let name = e.name().expect("known codes have names");
        c += &format!("SAME({name}, {});\n", e.code());
    }
    for attr in MemAttr::ALL {
        c += &format!("SAME({}, {});\n", attr.c_name(), attr.raw());
    }
    for location in Location::ALL {
        c += &format!("SAME({}, {});\n", location.c_name(), location.raw());
    }
    let values: &[(&str, u64)] = &[
        ("ACL_SUCCESS", sys::ACL_SUCCESS as u64),
        (
            "ACL_MEM_LOCATION_TYPE_UNREGISTERED",
            sys::ACL_MEM_LOCATION_TYPE_UNREGISTERED.into(),
        ),
        (
            "ACL_MEM_LOCATION_TYPE_MANAGED",
            sys::ACL_MEM_LOCATION_TYPE_MANAGED.into(),
        ),
        (
            "ACL_MEM_HANDLE_TYPE_NONE",
            sys::ACL_MEM_HANDLE_TYPE_NONE.into(),
        ),
        (
            "ACL_MEM_HANDLE_TYPE_POSIX",
            sys::ACL_MEM_HANDLE_TYPE_POSIX.into(),
        ),
        (
            "ACL_MEM_ALLOCATION_TYPE_PINNED",
            sys::ACL_MEM_ALLOCATION_TYPE_PINNED.into(),
        ),
        (
            "ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM",
            sys::ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM.into(),
        ),
        (
            "ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED",
            sys::ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED.into(),
        ),
        (
            "ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF",
            sys::ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF.into(),
        ),
        (
            "ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT",
            sys::ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT.into(),
        ),
        (
            "ACL_MEM_SHARE_HANDLE_TYPE_FABRIC",
            sys::ACL_MEM_SHARE_HANDLE_TYPE_FABRIC.into(),
        ),
        (
            "ACL_RT_MEM_ACCESS_FLAGS_NONE",
            sys::ACL_RT_MEM_ACCESS_FLAGS_NONE.into(),
        ),
        (
            "ACL_RT_MEM_ACCESS_FLAGS_READ",
            sys::ACL_RT_MEM_ACCESS_FLAGS_READ.into(),
        ),
        (
            "ACL_RT_MEM_ACCESS_FLAGS_READWRITE",
            sys::ACL_RT_MEM_ACCESS_FLAGS_READWRITE.into(),
        ),
        ("ACL_DEVICE", sys::ACL_DEVICE.into()),
        ("ACL_HOST", sys::ACL_HOST.into()),
        (
            "ACL_RT_VMM_EXPORT_FLAG_DEFAULT",
            sys::ACL_RT_VMM_EXPORT_FLAG_DEFAULT,
        ),
        (
            "ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION",
            sys::ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
        ),
        (
            "ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT",
            sys::ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT,
        ),
        (
            "ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION",
            sys::ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
        ),
        (
            "ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT",
            sys::ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT,
        ),
        (
            "ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS",
            sys::ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS,
        ),
        (
            "ACL_MEM_MALLOC_HUGE_FIRST",
            sys::ACL_MEM_MALLOC_HUGE_FIRST.into(),
        ),
        (
            "ACL_MEM_MALLOC_HUGE_ONLY",
            sys::ACL_MEM_MALLOC_HUGE_ONLY.into(),
        ),
        (
            "ACL_MEM_MALLOC_NORMAL_ONLY",
            sys::ACL_MEM_MALLOC_NORMAL_ONLY.into(),
        ),
        (
            "ACL_MEM_MALLOC_HUGE_FIRST_P2P",
            sys::ACL_MEM_MALLOC_HUGE_FIRST_P2P.into(),
        ),
        (
            "ACL_MEM_MALLOC_HUGE_ONLY_P2P",
            sys::ACL_MEM_MALLOC_HUGE_ONLY_P2P.into(),
        ),
        (
            "ACL_MEM_MALLOC_NORMAL_ONLY_P2P",
            sys::ACL_MEM_MALLOC_NORMAL_ONLY_P2P.into(),
        ),
        (
            "ACL_MEM_MALLOC_HUGE1G_ONLY",
            sys::ACL_MEM_MALLOC_HUGE1G_ONLY.into(),
        ),
        (
            "ACL_MEM_MALLOC_HUGE1G_ONLY_P2P",
            sys::ACL_MEM_MALLOC_HUGE1G_ONLY_P2P.into(),
        ),
        (
            "ACL_MEMCPY_HOST_TO_HOST",
            sys::ACL_MEMCPY_HOST_TO_HOST.into(),
        ),
        (
            "ACL_MEMCPY_HOST_TO_DEVICE",
            sys::ACL_MEMCPY_HOST_TO_DEVICE.into(),
        ),
        (
            "ACL_MEMCPY_DEVICE_TO_HOST",
            sys::ACL_MEMCPY_DEVICE_TO_HOST.into(),
        ),
        (
            "ACL_MEMCPY_DEVICE_TO_DEVICE",
            sys::ACL_MEMCPY_DEVICE_TO_DEVICE.into(),
        ),
        ("ACL_MEMCPY_DEFAULT", sys::ACL_MEMCPY_DEFAULT.into()),
        (
            "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE",
            sys::ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE.into(),
        ),
        (
            "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE",
            sys::ACL_MEMCPY_INNER_DEVICE_TO_DEVICE.into(),
        ),
        (
            "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE",
            sys::ACL_MEMCPY_INTER_DEVICE_TO_DEVICE.into(),
        ),
        ("ACL_PKG_NAME_CANN", sys::ACL_PKG_NAME_CANN.into()),
        ("ACL_PKG_NAME_RUNTIME", sys::ACL_PKG_NAME_RUNTIME.into()),
        ("ACL_PKG_NAME_COMPILER", sys::ACL_PKG_NAME_COMPILER.into()),
        ("ACL_PKG_NAME_HCCL", sys::ACL_PKG_NAME_HCCL.into()),
        ("ACL_PKG_NAME_TOOLKIT", sys::ACL_PKG_NAME_TOOLKIT.into()),
        ("ACL_PKG_NAME_OPP", sys::ACL_PKG_NAME_OPP.into()),
        (
            "ACL_PKG_NAME_OPP_KERNEL",
            sys::ACL_PKG_NAME_OPP_KERNEL.into(),
        ),
        ("ACL_PKG_NAME_DRIVER", sys::ACL_PKG_NAME_DRIVER.into()),
        (
            "ACL_PKG_VERSION_MAX_SIZE",
            sys::ACL_PKG_VERSION_MAX_SIZE as u64,
        ),
        (
            "ACL_PKG_VERSION_PARTS_MAX_SIZE",
            sys::ACL_PKG_VERSION_PARTS_MAX_SIZE as u64,
        ),
    ];
    for (name, value) in values {
        c += &format!("SAME({name}, {value}ULL);\n");
    }
    use std::mem::{offset_of, size_of};
    let layouts: &[(&str, usize)] = &[
        (
            "sizeof(aclrtPhysicalMemProp)",
            size_of::<sys::aclrtPhysicalMemProp>(),
        ),
        (
            "offsetof(aclrtPhysicalMemProp, memAttr)",
            offset_of!(sys::aclrtPhysicalMemProp, mem_attr),
        ),
        (
            "offsetof(aclrtPhysicalMemProp, location)",
            offset_of!(sys::aclrtPhysicalMemProp, location),
        ),
        (
            "offsetof(aclrtPhysicalMemProp, reserve)",
            offset_of!(sys::aclrtPhysicalMemProp, reserve),
        ),
        (
            "sizeof(aclrtMemLocation)",
            size_of::<sys::aclrtMemLocation>(),
        ),
        (
            "sizeof(aclrtMemAccessDesc)",
            size_of::<sys::aclrtMemAccessDesc>(),
        ),
        (
            "offsetof(aclrtMemAccessDesc, rsv)",
            offset_of!(sys::aclrtMemAccessDesc, rsv),
        ),
        (
            "sizeof(aclrtPtrAttributes)",
            size_of::<sys::aclrtPtrAttributes>(),
        ),
        (
            "offsetof(aclrtPtrAttributes, pageSize)",
            offset_of!(sys::aclrtPtrAttributes, pageSize),
        ),
        (
            "sizeof(aclrtMemFabricHandle)",
            size_of::<sys::aclrtMemFabricHandle>(),
        ),
        (
            "sizeof(aclCANNPackageVersion)",
            size_of::<sys::aclCANNPackageVersion>(),
        ),
        (
            "sizeof(aclrtDrvMemHandle)",
            size_of::<sys::aclrtDrvMemHandle>(),
        ),
        ("sizeof(aclrtMemAttr)", size_of::<sys::aclrtMemAttr>()),
        ("sizeof(aclrtMemcpyKind)", size_of::<sys::aclrtMemcpyKind>()),
    ];
    for (expr, value) in layouts {
        c += &format!("SAME({expr}, {value}u);\n");
    }
    c
}

fn compiler(var: &str, default: &str) -> String {
    std::env::var(var)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| default.to_owned())
}

/// Compiles `source` (as `file_name`) to an object file; panics with the
/// compiler's messages on failure.
fn compile(compiler: &str, std: &str, file_name: &str, source: &str) {
    let dir =
        std::env::temp_dir().join(format!("aclmem-headers-{}-{file_name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = dir.join(file_name);
    std::fs::write(&src, source).expect("write source");
    let out = Command::new(compiler)
        .args([std, "-Wall", "-Wextra", "-Werror", "-pedantic", "-c"])
        .arg("-I")
        .arg(include_dir())
        .arg(&src)
        .arg("-o")
        .arg(dir.join(format!("{file_name}.o")))
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{compiler}` (install gcc and g++): {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{compiler} {std} rejected {file_name}:\n{}\n--- source ---\n{source}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A translation unit that takes the address of every declared function,
/// so each declaration is used, not only parsed.
fn every_function(lang_cpp: bool) -> String {
    let linkage = if lang_cpp { "extern \"C\" " } else { "" };
    let mut c = format!(
        "#include <acl/acl.h>\n\n\
         /* aclsysGetCANNVersion is deprecated, as in CANN's header. */\n\
         #pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"\n\n\
         {linkage}size_t aclmem_every_function(void);\n\
         {linkage}size_t aclmem_every_function(void) {{\n    size_t sum = 0;\n"
    );
    for (name, _) in sys::FUNCTIONS {
        c += &format!("    sum += (size_t)&{name};\n");
    }
    c += "    return sum;\n}\n";
    c
}

#[test]
fn the_headers_compile_as_c11_and_cpp17() {
    compile(
        &compiler("CC", "cc"),
        "-std=c11",
        "functions.c",
        &every_function(false),
    );
    compile(
        &compiler("CXX", "c++"),
        "-std=c++17",
        "functions.cpp",
        &every_function(true),
    );
}

#[test]
fn the_headers_hold_the_values_of_the_rust_tables() {
    compile(
        &compiler("CXX", "c++"),
        "-std=c++17",
        "values.cpp",
        &agreement_checks(),
    );
}

#[test]
fn the_readme_describes_every_function() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let missing: Vec<&str> = sys::FUNCTIONS
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !readme.contains(&format!("`{n}`")) && !n.ends_with("V2"))
        .collect();
    assert!(
        missing.is_empty(),
        "README.md does not describe {missing:?}"
    );
}

/// A framework header declares every function of its libraries in the
/// catalogue with the catalogue's prototype, and nothing else; it compiles
/// as C11 and C++17 with each function used and `checks` (statements in a
/// function body returning `size_t` into `sum`) holding.
fn holds_to_the_catalogue(
    header: &str,
    libraries: &[aclmem_sys::catalogue::Library],
    checks: &str,
) {
    use aclmem_sys::catalogue::entries;
    let text = std::fs::read_to_string(include_dir().join(header)).expect(header);
    let listed: Vec<_> = entries()
        .filter(|e| libraries.contains(&e.library))
        .collect();
    for e in &listed {
        let proto = e.prototype.expect("framework functions have prototypes");
        assert!(
            text.contains(&format!("{proto};")),
            "{header} does not declare {proto}"
        );
    }
    let declared = text
        .lines()
        .filter(|l| l.ends_with(");") && !l.starts_with([' ', '\t']))
        .count();
    assert_eq!(
        declared,
        listed.len(),
        "{header} declares a function the catalogue lacks"
    );
    let stem = header.replace(['/', '.'], "_");
    for (lang_cpp, compiler_var, default, std, ext) in [
        (false, "CC", "cc", "-std=c11", "c"),
        (true, "CXX", "c++", "-std=c++17", "cpp"),
    ] {
        let linkage = if lang_cpp { "extern \"C\" " } else { "" };
        let mut c = format!(
            "#include <{header}>\n{linkage}size_t aclmem_every(void);\n\
             {linkage}size_t aclmem_every(void) {{\n    size_t sum = 0;\n{checks}"
        );
        for e in &listed {
            c += &format!("    sum += (size_t)&{};\n", e.name);
        }
        c += "    return sum;\n}\n";
        compile(
            &compiler(compiler_var, default),
            std,
            &format!("{stem}.{ext}"),
            &c,
        );
    }
}

/// `include/hccl/hccl.h` declares every HCCL function of the catalogue
/// (`libhccl.so`'s and `libhcomm.so`'s) with the catalogue's prototype,
/// and nothing else; it compiles as C11 and C++17, each function used.
#[test]
fn the_hccl_header_declares_the_catalogue_s_hccl_functions() {
    use aclmem_sys::catalogue::{Library, entries};
    assert!(
        entries()
            .filter(|e| matches!(e.library, Library::Hccl | Library::Hcomm))
            .count()
            > 40
    );
    holds_to_the_catalogue(
        "hccl/hccl.h",
        &[Library::Hccl, Library::Hcomm],
        "    HcclCommConfig c;\n    HcclCommConfigInit(&c);\n    sum += c.hcclBufferSize;\n",
    );
}

/// `include/mstx/ms_tools_ext.h` declares every mstx function of the
/// catalogue, and its structures have the layout of `aclmem_sys::mstx`
/// (sizes and the offsets a misplaced field would move).
#[test]
fn the_mstx_header_declares_the_catalogue_s_mstx_functions_and_layouts() {
    use aclmem_sys::catalogue::Library;
    use aclmem_sys::mstx::*;
    use std::mem::{offset_of, size_of};
    let mut checks = String::new();
    let mut check = |what: String, value: usize| {
        checks +=
            &format!("    {{ typedef char a[({what}) == {value} ? 1 : -1]; (void)sizeof(a); }}\n");
    };
    check(
        "sizeof(mstxMemVirtualRangeDesc_t)".into(),
        size_of::<mstxMemVirtualRangeDesc_t>(),
    );
    check(
        "offsetof(mstxMemVirtualRangeDesc_t, ptr)".into(),
        offset_of!(mstxMemVirtualRangeDesc_t, ptr),
    );
    check(
        "offsetof(mstxMemVirtualRangeDesc_t, size)".into(),
        offset_of!(mstxMemVirtualRangeDesc_t, size),
    );
    check(
        "sizeof(mstxMemHeapDesc_t)".into(),
        size_of::<mstxMemHeapDesc_t>(),
    );
    check(
        "offsetof(mstxMemHeapDesc_t, typeSpecificDesc)".into(),
        offset_of!(mstxMemHeapDesc_t, type_specific_desc),
    );
    check(
        "sizeof(mstxMemRegionsRegisterBatch_t)".into(),
        size_of::<mstxMemRegionsRegisterBatch_t>(),
    );
    check(
        "offsetof(mstxMemRegionsRegisterBatch_t, regionCount)".into(),
        offset_of!(mstxMemRegionsRegisterBatch_t, region_count),
    );
    check(
        "offsetof(mstxMemRegionsRegisterBatch_t, regionDescArray)".into(),
        offset_of!(mstxMemRegionsRegisterBatch_t, region_desc_array),
    );
    check(
        "offsetof(mstxMemRegionsRegisterBatch_t, regionHandleArrayOut)".into(),
        offset_of!(mstxMemRegionsRegisterBatch_t, region_handle_array_out),
    );
    check(
        "sizeof(mstxMemRegionRef_t)".into(),
        size_of::<mstxMemRegionRef_t>(),
    );
    check(
        "offsetof(mstxMemRegionRef_t, pointer)".into(),
        offset_of!(mstxMemRegionRef_t, pointer_or_handle),
    );
    check(
        "sizeof(mstxMemRegionsUnregisterBatch_t)".into(),
        size_of::<mstxMemRegionsUnregisterBatch_t>(),
    );
    check(
        "offsetof(mstxMemRegionsUnregisterBatch_t, refArray)".into(),
        offset_of!(mstxMemRegionsUnregisterBatch_t, ref_array),
    );
    check(
        "MSTX_MEM_REGION_REF_TYPE_HANDLE".into(),
        MSTX_MEM_REGION_REF_TYPE_HANDLE as usize,
    );
    check(
        "MSTX_MEM_REGION_REF_TYPE_POINTER".into(),
        MSTX_MEM_REGION_REF_TYPE_POINTER as usize,
    );
    check(
        "MSTX_MEM_TYPE_VIRTUAL_ADDRESS".into(),
        MSTX_MEM_TYPE_VIRTUAL_ADDRESS as usize,
    );
    check(
        "MSTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR".into(),
        MSTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR as usize,
    );
    holds_to_the_catalogue("mstx/ms_tools_ext.h", &[Library::MsToolsExt], &checks);
}
