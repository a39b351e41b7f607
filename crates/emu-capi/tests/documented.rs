//! What the documentation and the C headers claim, read from them and
//! held against the behaviour: a claim that stops being true fails here,
//! not in a user's hands.
//!
//! * A header comment that says when a function without arguments may be
//!   called relative to `aclInit` ("before aclInit ... NULL", "answered
//!   before aclInit") is checked by calling it before `aclInit`. This test
//!   file is its own process, and it never calls `aclInit`.
//! * A sentence of the docs that says something is "not emulated" names
//!   nothing the catalogue emulates: neither a function in backticks, nor
//!   an operator of the list, nor HCCL's collectives when it says
//!   "collectives".

use std::ffi::c_char;
use std::path::{Path, PathBuf};

use aclmem_sys::catalogue::{self, Answer};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root")
}

/// Each function declared `(void)` in a header, with the comment just
/// above its declaration (empty when there is none).
fn void_functions(header: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut comment = String::new();
    let mut in_comment = false;
    for line in header.lines() {
        let t = line.trim();
        if t.starts_with("/*") {
            in_comment = true;
            comment.clear();
        }
        if in_comment {
            comment.push_str(t.trim_start_matches("/*").trim_start_matches('*'));
            comment.push(' ');
            if t.ends_with("*/") {
                in_comment = false;
            }
            continue;
        }
        if let Some(decl) = t.strip_prefix("ACL_FUNC_VISIBILITY ")
            && decl.ends_with("(void);")
            && let Some(name) = decl.trim_end_matches("(void);").rsplit([' ', '*']).next()
        {
            out.push((name.to_owned(), std::mem::take(&mut comment)));
        } else if !t.is_empty() {
            comment.clear();
        }
    }
    out
}

/// What a comment claims of a call before `aclInit`: `Some(true)` answered,
/// `Some(false)` refused, `None` nothing.
fn claim_before_init(comment: &str) -> Option<bool> {
    let sentence = comment.split(". ").find(|s| s.contains("before aclInit"))?;
    let refused = [
        "NULL",
        "100001",
        "UNINITIALIZE",
        "fails",
        "refused",
        "after aclInit",
    ]
    .iter()
    .any(|w| sentence.contains(w));
    Some(!refused)
}

#[test]
fn header_claims_about_aclinit_hold() {
    let dir = root().join("crates/emu-capi/include/acl");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("the headers") {
        let path = entry.expect("a header").path();
        if path.extension().is_none_or(|e| e != "h") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a readable header");
        for (name, comment) in void_functions(&text) {
            let Some(answered) = claim_before_init(&comment) else {
                continue;
            };
            // The functions of this kind the library has, called before
            // aclInit (this process never initialises).
            let got = match name.as_str() {
                "aclrtGetSocName" => !aclmem_emu_capi::aclrtGetSocName().is_null(),
                other => panic!(
                    "{}: {other} claims when it answers; add it to this test",
                    path.display()
                ),
            };
            assert_eq!(
                got,
                answered,
                "{}: {name}'s comment says it is {} before aclInit: {comment}",
                path.display(),
                if answered { "answered" } else { "refused" }
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no header claim about aclInit was read");
    // And the answer is the configured name, not any pointer.
    let name = aclmem_emu_capi::aclrtGetSocName();
    // SAFETY: a NUL-terminated name the library keeps for the process.
    let name = unsafe { std::ffi::CStr::from_ptr(name.cast::<c_char>()) };
    assert!(name.to_string_lossy().starts_with("Ascend"), "{name:?}");
}

/// The docs' sentences: paragraphs split at ". ", a table's rows each
/// apart, headings left out.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for p in text.split("\n\n") {
        if p.trim_start().starts_with('#') {
            continue;
        }
        let (rows, prose): (Vec<&str>, Vec<&str>) =
            p.lines().partition(|l| l.trim_start().starts_with('|'));
        out.extend(rows.into_iter().map(str::to_owned));
        out.extend(prose.join(" ").split(". ").map(str::to_owned));
    }
    out
}

fn emulated(name: &str) -> Option<bool> {
    if let Some(entry) = catalogue::find(name) {
        return Some(entry.answer == Answer::Emulated);
    }
    catalogue::OPERATORS
        .iter()
        .any(|(op, _)| *op == name)
        .then_some(true)
}

#[test]
fn what_the_docs_call_not_emulated_is_not() {
    let mut files = vec![root().join("README.md"), root().join("python/README.md")];
    for dir in ["docs", "crates/emu-capi", "crates/ops", "crates/hccl"] {
        for entry in std::fs::read_dir(root().join(dir)).expect("a docs directory") {
            let p = entry.expect("an entry").path();
            if p.extension().is_some_and(|e| e == "md") {
                files.push(p);
            }
        }
    }
    let collectives = [
        "HcclAllReduce",
        "HcclBroadcast",
        "HcclAllGather",
        "HcclReduceScatter",
    ];
    let mut wrong = Vec::new();
    let mut read = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a readable doc");
        for s in sentences(&text) {
            let lower = s.to_lowercase();
            if !lower.contains("not emulated") {
                continue;
            }
            read += 1;
            let named = s
                .split('`')
                .skip(1)
                .step_by(2)
                .map(|n| n.trim_end_matches("()"));
            // Operators are often named without backticks: every word.
            let words = s
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| catalogue::OPERATORS.iter().any(|(op, _)| op == w));
            for name in named.chain(words) {
                if emulated(name) == Some(true) {
                    wrong.push(format!("{}: `{name}` is emulated: {s}", file.display()));
                }
            }
            if lower.contains("collectives") {
                for c in collectives {
                    if emulated(c) == Some(true) {
                        wrong.push(format!("{}: {c} is emulated: {s}", file.display()));
                    }
                }
            }
        }
    }
    assert!(read > 0, "no sentence saying \"not emulated\" was read");
    assert!(
        wrong.is_empty(),
        "docs that disagree with the catalogue:\n{}",
        wrong.join("\n")
    );
}
