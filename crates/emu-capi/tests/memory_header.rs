//! The memory chapter's headers agree with the catalogue and the library:
//! `include/acl/acl_rt_memory_ext.h` (included by `acl_rt.h`),
//! `acl_rt_allocator.h` (included by `acl_rt.h`, as CANN's is) and
//! `acl_rt_memory_soma.h` (included on its own, as CANN's is). Each
//! declaration is a catalogue function's prototype, to the character, of
//! a function the library carries out; every catalogue function that
//! takes one of a header's types is declared there; the types' layouts
//! are the library's; and `<acl/acl_rt.h>` with
//! `<acl/acl_rt_memory_soma.h>` compiles with every declaration used as
//! C11 and C++17 (`-Wall -Wextra -Werror -pedantic`), as vllm-ascend's
//! build check of `aclrtMemcpyBatchAsync` includes it.
//!
//! The compilers are `$CC` / `$CXX` (default `cc` / `c++`).

use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use aclmem_emu_capi::{
    aclrtBarrierTaskInfo, aclrtMallocAttribute, aclrtMallocConfig, aclrtMemManagedLocation,
    aclrtMemPoolProps, aclrtMemUceInfo, aclrtMemcpyBatchAttr, aclrtServerPid,
};
use aclmem_sys::catalogue::{Answer, Library, entries, find};

/// Each header, with the types it defines that a prototype may take.
const HEADERS: &[(&str, &[&str])] = &[
    (
        "acl/acl_rt_memory_ext.h",
        &[
            "aclrtMemcpyBatchAttr",
            "aclrtMallocConfig",
            "aclrtMemManaged",
            "aclrtCmoType",
            "aclrtBarrierTaskInfo",
            "aclrtMemUceInfo",
            "aclrtMemLinkType",
            "aclrtHacType",
            "aclrtIpcMemAttrType",
            "aclrtServerPid",
        ],
    ),
    ("acl/acl_rt_allocator.h", &["aclrtAllocator"]),
    ("acl/acl_rt_memory_soma.h", &["aclrtMemPool"]),
];

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// A header's declarations: `(name, prototype)`, one line each.
fn declarations_of(header: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(include_dir().join(header)).expect(header);
    text.lines()
        .filter_map(|l| l.strip_prefix("ACL_FUNC_VISIBILITY "))
        .map(|l| {
            let proto = l.strip_suffix(';').expect("one declaration per line");
            let name = proto
                .split('(')
                .next()
                .and_then(|head| head.rsplit(' ').next())
                .expect("a name");
            (name.to_owned(), proto.to_owned())
        })
        .collect()
}

/// Every header's declarations.
fn declarations() -> Vec<(String, String)> {
    HEADERS
        .iter()
        .flat_map(|(h, _)| declarations_of(h))
        .collect()
}

#[test]
fn each_declaration_is_the_catalogue_s_prototype_of_an_emulated_function() {
    for (header, types) in HEADERS {
        each_declaration_of(header, types);
    }
}

fn each_declaration_of(header: &str, types: &[&str]) {
    let declared = declarations_of(header);
    assert!(!declared.is_empty());
    for (name, proto) in &declared {
        let e = find(name).unwrap_or_else(|| panic!("{name} is not in the catalogue"));
        assert_eq!(e.prototype, Some(proto.as_str()), "{name}");
        assert_eq!(
            e.answer,
            Answer::Emulated,
            "{name} is declared, so carried out"
        );
        assert_eq!(e.library, Library::AscendCl, "{name}");
    }
    for e in entries() {
        let takes = e
            .prototype
            .is_some_and(|p| types.iter().any(|t| p.contains(t)));
        if takes {
            assert!(
                declared.iter().any(|(n, _)| n == e.name),
                "{} takes a type of {header}, so it is declared there",
                e.name
            );
        }
    }
}

fn compile(compiler: &str, std: &str, file_name: &str, source: &str) {
    let dir =
        std::env::temp_dir().join(format!("aclmem-memhdr-{}-{file_name}", std::process::id()));
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

#[test]
fn acl_rt_h_compiles_with_every_declaration_and_the_library_s_layouts() {
    let layouts = [
        (
            "sizeof(aclrtMemcpyBatchAttr)",
            size_of::<aclrtMemcpyBatchAttr>(),
        ),
        (
            "offsetof(aclrtMemcpyBatchAttr, dstLoc)",
            offset_of!(aclrtMemcpyBatchAttr, dst_loc),
        ),
        (
            "offsetof(aclrtMemcpyBatchAttr, srcLoc)",
            offset_of!(aclrtMemcpyBatchAttr, src_loc),
        ),
        (
            "offsetof(aclrtMemcpyBatchAttr, rsv)",
            offset_of!(aclrtMemcpyBatchAttr, rsv),
        ),
        (
            "sizeof(aclrtMallocAttribute)",
            size_of::<aclrtMallocAttribute>(),
        ),
        (
            "offsetof(aclrtMallocAttribute, value)",
            offset_of!(aclrtMallocAttribute, value),
        ),
        ("sizeof(aclrtMallocConfig)", size_of::<aclrtMallocConfig>()),
        (
            "offsetof(aclrtMallocConfig, numAttrs)",
            offset_of!(aclrtMallocConfig, num_attrs),
        ),
        ("sizeof(aclrtMemPoolProps)", size_of::<aclrtMemPoolProps>()),
        (
            "offsetof(aclrtMemPoolProps, location)",
            offset_of!(aclrtMemPoolProps, location),
        ),
        (
            "offsetof(aclrtMemPoolProps, maxSize)",
            offset_of!(aclrtMemPoolProps, max_size),
        ),
        (
            "offsetof(aclrtMemPoolProps, reserved)",
            offset_of!(aclrtMemPoolProps, reserved),
        ),
        ("ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH", 8),
        (
            "sizeof(aclrtBarrierTaskInfo)",
            size_of::<aclrtBarrierTaskInfo>(),
        ),
        ("sizeof(aclrtMemUceInfo)", size_of::<aclrtMemUceInfo>()),
        ("sizeof(aclrtServerPid)", size_of::<aclrtServerPid>()),
        (
            "offsetof(aclrtServerPid, num)",
            offset_of!(aclrtServerPid, num),
        ),
        ("ACL_RT_HAC_TYPE_CCU", 9),
        ("ACL_RT_MEM_ACCESS_UB_MULTI_PORT_PATH", 3),
        (
            "sizeof(aclrtMemManagedLocation)",
            size_of::<aclrtMemManagedLocation>(),
        ),
        (
            "offsetof(aclrtMemManagedLocation, id)",
            offset_of!(aclrtMemManagedLocation, id),
        ),
        ("ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID", 8),
        ("ACL_MEM_ADVISE_UNSET_ACCESSED_BY", 5),
        ("ACL_STREAM_WAIT_VALUE_NOR", 3),
        ("ACL_RT_MEM_ATTR_VA_FLAG", 3),
        ("ACL_MEM_LOCATION_TYPE_HOST", 0),
    ];
    let cc = |var: &str, default: &str| {
        std::env::var(var)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| default.to_owned())
    };
    for (cpp, var, default, std, ext) in [
        (false, "CC", "cc", "-std=c11", "c"),
        (true, "CXX", "c++", "-std=c++17", "cpp"),
    ] {
        let linkage = if cpp { "extern \"C\" " } else { "" };
        let assert = if cpp {
            "static_assert"
        } else {
            "_Static_assert"
        };
        let mut c = String::from(
            "#include <stddef.h>\n#include <acl/acl_rt.h>\n#include <acl/acl_rt_memory_soma.h>\n\n",
        );
        for (what, value) in layouts {
            c += &format!("{assert}({what} == {value}, \"{what}\");\n");
        }
        c += &format!(
            "\n{linkage}size_t aclmem_every(void);\n{linkage}size_t aclmem_every(void) {{\n    size_t sum = 0;\n"
        );
        for (name, _) in declarations() {
            c += &format!("    sum += (size_t)&{name};\n");
        }
        c += "    return sum;\n}\n";
        compile(&cc(var, default), std, &format!("memory_ext.{ext}"), &c);
    }
}
