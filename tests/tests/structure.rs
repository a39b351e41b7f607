//! The workspace's structure, read from its files: the rooms each concern
//! lives in (`docs/architecture.md`) hold as the code grows.
//!
//! * no source file over 600 lines in `crates/*/src`, `python/src`,
//!   `xtask/src`;
//! * no two files of one crate import each other (as their `use` lines
//!   show), where neither is the other's ancestor: a parent that
//!   re-exports its child while the child imports from the parent is one
//!   room seen from two sides (its child's import runs back up, which the
//!   C ABI crate's layers forbid there);
//! * the emulated library's C ABI crate (`aclmem-emu-capi`) has two layers:
//!   its foundation imports only the foundation, and each module of C
//!   functions imports the foundation and its own directory, never another
//!   module of C functions nor the crate root;
//! * the operators (`aclmem-ops`) and HCCL (`aclmem-hccl`) depend on no C
//!   ABI crate;
//! * the emulator's owners (`aclmem-emu`): no `impl Process` outside
//!   `process/`, `process/` never uses `calls/`, `machine/` knows no
//!   process, `unsafe` only in `os/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a source file may be.
const MAX_LINES: usize = 600;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The `src` directories of the workspace's crates, and the other sources
/// the line limit covers.
fn source_dirs() -> Vec<PathBuf> {
    let root = root();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    dirs.push(root.join("python/src"));
    dirs.push(root.join("xtask/src"));
    dirs.sort();
    dirs
}

/// A crate's module path of a file under its `src` (`lib.rs`, `main.rs`:
/// the root; `a/mod.rs` and `a.rs`: `a`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("a file under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if parts.is_empty() && matches!(stem, "lib" | "main") {
        return Vec::new();
    }
    if stem != "mod" {
        parts.push(stem.to_owned());
    }
    parts
}

/// The top-level `use` statements of a file (items at column 0: uses
/// inside functions and inline modules are indented), without `use` and
/// the `;`.
fn use_statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(c) = current.as_mut() {
            c.push(' ');
            c.push_str(line.trim());
        } else {
            let rest = line
                .strip_prefix("pub use ")
                .or_else(|| line.strip_prefix("pub(crate) use "))
                .or_else(|| line.strip_prefix("pub(super) use "))
                .or_else(|| line.strip_prefix("use "));
            if let Some(rest) = rest {
                current = Some(rest.trim().to_owned());
            }
        }
        if current.as_ref().is_some_and(|c| c.ends_with(';')) {
            let c = current.take().unwrap_or_default();
            out.push(c.trim_end_matches(';').trim().to_owned());
        }
    }
    out
}

/// The paths a `use` tree names (`a::{b, c::{d, e}}` is `a::b`, `a::c::d`,
/// `a::c::e`), each as its segments (`self` in a group is the prefix).
fn expand(tree: &str) -> Vec<Vec<String>> {
    fn split_top(s: &str) -> Vec<&str> {
        let (mut depth, mut start, mut parts) = (0usize, 0usize, Vec::new());
        for (i, ch) in s.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    parts.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&s[start..]);
        parts
            .into_iter()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect()
    }
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        return vec![path.split("::").map(|s| s.trim().to_owned()).collect()];
    };
    let prefix: Vec<String> = tree[..open]
        .trim_end_matches("::")
        .split("::")
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().to_owned())
        .collect();
    let inner = tree[open + 1..].trim_end().trim_end_matches('}');
    let mut out = Vec::new();
    for part in split_top(inner) {
        for tail in expand(part) {
            let mut p = prefix.clone();
            p.extend(tail.into_iter().filter(|s| s != "self"));
            out.push(p);
        }
    }
    out
}

/// One crate's files and the imports between them.
struct Crate {
    name: String,
    src: PathBuf,
    /// Module path of each file, and back.
    files: BTreeMap<Vec<String>, PathBuf>,
    /// Which file imports which (by module path), with the `use` text.
    imports: BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let name = src
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let files: BTreeMap<Vec<String>, PathBuf> = rust_files(src)
            .into_iter()
            .map(|f| (module_of(src, &f), f))
            .collect();
        let mut imports = BTreeMap::new();
        for (module, file) in &files {
            let text = std::fs::read_to_string(file).expect("a readable source file");
            let mut edges = BTreeMap::new();
            for statement in use_statements(&text) {
                for path in expand(&statement) {
                    if let Some(target) = resolve(&files, module, &path)
                        && &target != module
                    {
                        edges.entry(target).or_insert_with(|| statement.clone());
                    }
                }
            }
            imports.insert(module.clone(), edges);
        }
        Crate {
            name,
            src: src.to_path_buf(),
            files,
            imports,
        }
    }

    fn file(&self, module: &[String]) -> String {
        self.files
            .get(module)
            .map(|f| f.strip_prefix(&self.src).unwrap_or(f).display().to_string())
            .unwrap_or_else(|| module.join("::"))
    }
}

/// The file a path lands in: the longest prefix of the path that is a
/// file's module; `None` for another crate's path.
fn resolve(
    files: &BTreeMap<Vec<String>, PathBuf>,
    module: &[String],
    path: &[String],
) -> Option<Vec<String>> {
    let mut absolute: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("self") => module.to_vec(),
        Some("super") => module.to_vec(),
        Some(first) => {
            // A child module of this one, named without `self::` (2018+).
            let mut child = module.to_vec();
            child.push(first.to_owned());
            if !files.contains_key(&child) {
                return None;
            }
            module.to_vec()
        }
        None => return None,
    };
    let mut rest = path;
    if matches!(path.first().map(String::as_str), Some("crate" | "self")) {
        rest = &path[1..];
    }
    while rest.first().is_some_and(|s| s == "super") {
        absolute.pop();
        rest = &rest[1..];
    }
    absolute.extend(rest.iter().cloned());
    (0..=absolute.len())
        .rev()
        .map(|n| absolute[..n].to_vec())
        .find(|prefix| files.contains_key(prefix))
}

fn crates() -> Vec<Crate> {
    source_dirs().iter().map(|d| Crate::read(d)).collect()
}

#[test]
fn no_source_file_is_over_600_lines() {
    let mut long = Vec::new();
    for dir in source_dirs() {
        for file in rust_files(&dir) {
            let text = std::fs::read_to_string(&file).expect("a readable source file");
            let lines = text.lines().count();
            if lines > MAX_LINES {
                long.push(format!("{} ({lines} lines)", file.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "split by responsibility, each file at most {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn no_two_files_of_a_crate_import_each_other() {
    let mut circles = Vec::new();
    for c in crates() {
        for (a, edges) in &c.imports {
            for (b, why) in edges {
                let related = a.starts_with(b) || b.starts_with(a);
                if a < b
                    && !related
                    && let Some(back) = c.imports.get(b).and_then(|e| e.get(a))
                {
                    circles.push(format!(
                        "{}: {} (`use {why}`) and {} (`use {back}`)",
                        c.name,
                        c.file(a),
                        c.file(b)
                    ));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "files that import each other:\n{}",
        circles.join("\n")
    );
}

/// The foundation of `aclmem-emu-capi`: what every C function uses.
const CAPI_FOUNDATION: &[&str] = &[
    "capture", "cptr", "entry", "faults", "fork", "record", "shared", "site", "state",
];

#[test]
fn the_c_abi_crate_imports_only_down_its_layers() {
    let c = Crate::read(&root().join("crates/emu-capi/src"));
    let foundation: BTreeSet<&str> = CAPI_FOUNDATION.iter().copied().collect();
    // Every file is the root, of the foundation, or of C functions.
    let top = |m: &[String]| m.first().cloned().unwrap_or_default();
    let mut wrong = Vec::new();
    for (module, edges) in &c.imports {
        if module.is_empty() {
            // The root declares and re-exports: it may name anything.
            continue;
        }
        let in_foundation = foundation.contains(top(module).as_str());
        for (target, why) in edges {
            let target_foundation = foundation.contains(top(target).as_str());
            // An ancestor (the root, or a directory's `mod.rs`) is up.
            let ancestor = target.len() < module.len() && module.starts_with(target);
            let ok = if target.is_empty() || ancestor {
                false
            } else if in_foundation {
                target_foundation
            } else {
                target_foundation || top(target) == top(module)
            };
            if !ok {
                wrong.push(format!(
                    "{} imports {} (`use {why}`)",
                    c.file(module),
                    c.file(target)
                ));
            }
        }
    }
    // Every top-level module is declared in one of the two layers (a new
    // one must be placed).
    for module in c.files.keys().filter(|m| m.len() == 1) {
        let name = module[0].as_str();
        let c_functions = [
            "atb",
            "device",
            "framework",
            "graphs",
            "hccl",
            "memory",
            "opapi",
            "ops",
            "sharing",
            "stand_ins",
        ];
        if !foundation.contains(name) && !c_functions.contains(&name) {
            wrong.push(format!("{} is in neither layer", c.file(module)));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that run back up:\n{}",
        wrong.join("\n")
    );
}

/// The normal dependencies a crate's manifest names.
fn dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).expect("a manifest");
    let mut out = Vec::new();
    let mut in_deps = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
            continue;
        }
        if in_deps && let Some((name, _)) = line.split_once(['=', '.']) {
            out.push(name.trim().to_owned());
        }
    }
    out
}

#[test]
fn operators_and_hccl_depend_on_no_c_abi_crate() {
    for krate in ["ops", "hccl"] {
        let deps = dependencies(&root().join("crates").join(krate).join("Cargo.toml"));
        assert!(!deps.is_empty(), "{krate}: no dependencies read");
        for forbidden in ["aclmem-emu-capi", "aclmem-libascendcl", "aclmem-sanitizer"] {
            assert!(
                !deps.iter().any(|d| d == forbidden),
                "crates/{krate} depends on {forbidden}"
            );
        }
    }
}

#[test]
fn the_emulators_owners_hold() {
    let src = root().join("crates/emu/src");
    let mut wrong = Vec::new();
    for file in rust_files(&src) {
        let rel = file
            .strip_prefix(&src)
            .unwrap_or(&file)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        let code: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect();
        let has = |needle: &str| code.iter().any(|l| l.contains(needle));
        // A word of the code (`Process`, not `TooManyProcesses`).
        let word = |w: &str| {
            code.iter().any(|l| {
                l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|t| t == w)
            })
        };
        if !rel.starts_with("process/") && has("impl Process") {
            wrong.push(format!("{rel}: `impl Process` outside process/"));
        }
        if rel.starts_with("process/") && has("calls::") {
            wrong.push(format!("{rel}: process/ uses calls/"));
        }
        if rel.starts_with("machine/") && (has("crate::process") || word("Process")) {
            wrong.push(format!("{rel}: machine/ knows a process"));
        }
        if !rel.starts_with("os/")
            && code
                .iter()
                .any(|l| l.contains("unsafe {") || l.contains("unsafe fn"))
        {
            wrong.push(format!("{rel}: unsafe outside os/"));
        }
    }
    assert!(
        wrong.is_empty(),
        "the emulator's owners:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_import_reader_sees_what_it_must() {
    // The reader itself: groups, renames, `self` in a group, nesting.
    let paths = expand("crate::{cptr, entry::{self, guard as g}, state::with_global}");
    let text: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        text,
        [
            "crate::cptr",
            "crate::entry",
            "crate::entry::guard",
            "crate::state::with_global"
        ]
    );
    let files: BTreeMap<Vec<String>, PathBuf> = [
        (vec![], PathBuf::from("lib.rs")),
        (vec!["a".to_owned()], PathBuf::from("a/mod.rs")),
        (
            vec!["a".to_owned(), "b".to_owned()],
            PathBuf::from("a/b.rs"),
        ),
    ]
    .into_iter()
    .collect();
    let a = vec!["a".to_owned()];
    let ab = vec!["a".to_owned(), "b".to_owned()];
    let p = |s: &str| s.split("::").map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(resolve(&files, &ab, &p("super::*")), Some(a.clone()));
    assert_eq!(resolve(&files, &a, &p("b::f")), Some(ab.clone()));
    assert_eq!(
        resolve(&files, &ab, &p("crate::a::b::Thing")),
        Some(ab.clone())
    );
    assert_eq!(resolve(&files, &ab, &p("crate::f")), Some(vec![]));
    assert_eq!(resolve(&files, &a, &p("std::io")), None);
    assert_eq!(
        use_statements("use a::{\n    b,\n    c,\n};\n    use inner::x;\npub use d::e;\n"),
        ["a::{ b, c, }", "d::e"]
    );
}
