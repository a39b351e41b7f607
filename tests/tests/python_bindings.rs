//! The Python module's bindings against the one list of ACL functions
//! (`aclmem_sys::FUNCTIONS`): every function is bound under pyACL's name or
//! listed, with its reason, in `python/README.md`'s table of functions not
//! bound; every binding has a stub in `python/aclmem/_native.pyi` and every
//! stub a binding. (The Python package builds outside this workspace, so
//! its sources are read as text.)

use std::collections::BTreeSet;
use std::path::Path;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// pyACL's name of an ACL function: the name without `aclrt`, `aclsys` or
/// `acl`, in snake case, runs of capitals as one word (`GetCANNVersion`
/// is `get_cann_version`); pyACL's own names where they differ.
fn python_name(acl: &str) -> String {
    match acl {
        "aclrtSetCurrentContext" => return "set_context".into(),
        "aclrtGetCurrentContext" => return "get_context".into(),
        _ => {}
    }
    let rest = ["aclrt", "aclsys", "acl"]
        .iter()
        .find_map(|p| acl.strip_prefix(p))
        .unwrap_or(acl);
    let chars: Vec<char> = rest.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let starts_word = c.is_ascii_uppercase()
            && i > 0
            && (chars[i - 1].is_ascii_lowercase()
                || chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase()));
        if starts_word {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The functions the native module registers (`add!(...)` in its
/// `#[pymodule]`).
fn bindings() -> BTreeSet<String> {
    let src = read("python/src/lib.rs");
    let start = src.find("add!(").expect("the module's add! list") + "add!(".len();
    let end = start + src[start..].find(");").expect("its end");
    src[start..end]
        .split(',')
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The functions `_native.pyi` declares at its top level.
fn stubs() -> BTreeSet<String> {
    read("python/aclmem/_native.pyi")
        .lines()
        .filter_map(|l| l.strip_prefix("def "))
        .map(|l| l.split('(').next().unwrap_or_default().to_owned())
        .collect()
}

/// The functions `python/README.md` says Python does not bind.
fn not_bound() -> BTreeSet<String> {
    let readme = read("python/README.md");
    let table = readme
        .split("## The ACL functions bound, and those not bound")
        .nth(1)
        .expect("the README's section on bindings");
    table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_acl_function_is_bound_or_listed_as_not_bound() {
    let bound = bindings();
    let listed = not_bound();
    let mut missing = Vec::new();
    for (acl, _) in aclmem_sys::FUNCTIONS {
        let py = python_name(acl);
        match (bound.contains(&py), listed.contains(*acl)) {
            (true, true) => panic!("{acl} is bound as {py} and listed as not bound"),
            (false, false) => missing.push(format!("{acl} (as {py})")),
            _ => {}
        }
    }
    assert!(
        missing.is_empty(),
        "neither bound nor listed in python/README.md: {missing:?}"
    );
    let known: BTreeSet<&str> = aclmem_sys::FUNCTIONS.iter().map(|(n, _)| *n).collect();
    for acl in &listed {
        assert!(
            known.contains(acl.as_str()),
            "python/README.md lists {acl}, which is no ACL function aclmem types"
        );
    }
}

#[test]
fn every_binding_has_a_stub_and_every_stub_a_binding() {
    let (bound, stubs) = (bindings(), stubs());
    assert!(bound.len() > 40, "{bound:?}");
    assert_eq!(
        bound.difference(&stubs).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "bound without a stub in _native.pyi"
    );
    assert_eq!(
        stubs.difference(&bound).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "stubs in _native.pyi without a binding"
    );
}

#[test]
fn pyacl_names_follow_the_acl_names() {
    for (acl, py) in [
        ("aclrtMallocPhysical", "malloc_physical"),
        ("aclsysGetCANNVersion", "get_cann_version"),
        ("aclrtMallocAlign32", "malloc_align32"),
        ("aclrtIpcMemGetExportKey", "ipc_mem_get_export_key"),
        ("aclInit", "init"),
        ("aclrtSetCurrentContext", "set_context"),
    ] {
        assert_eq!(python_name(acl), py);
    }
}
