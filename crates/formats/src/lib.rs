//! The files aclmem's sanitizer writes and its commands read, each defined
//! once and written and read by the same code:
//!
//! - [`trace`]: the memory timeline (`ACLMEM_SANITIZER_TRACE`), one
//!   [`trace::Record`] per call, read by `aclmem timeline` and `replay`;
//! - [`sharing`]: the sharing events of every process of a run
//!   (`ACLMEM_SANITIZER_SHARING`), one [`sharing::Event`] each, joined by
//!   `aclmem sanitize` for the cross-process checks;
//! - [`finding`]: the findings (`ACLMEM_SANITIZER_LOG`), one
//!   [`finding::Record`] each, and their [`finding::Class`]es, from which
//!   the sanitizer's README table and the tests' lists come;
//! - [`postmortem`]: where a process crashed or waits
//!   (`ACLMEM_SANITIZER_WHERE`), one [`postmortem::Where`] per process,
//!   read by `aclmem explore`;
//! - [`rank_table`]: HCCL's rank table, written by `aclmem run` and read
//!   by the emulated HCCL;
//! - [`across`]: the checks across processes over a run's sharing events;
//! - [`jsonl`]: reading any of them with a bound on a line;
//! - [`site`]: a call site's text (`function (file:line)`), read.
//!
//! Every file is JSON lines: one record per line, each line written with
//! one `write` to a file opened to append, so the records of several
//! processes never interleave.

pub mod across;
pub mod finding;
pub mod jsonl;
pub mod postmortem;
pub mod rank_table;
pub mod sharing;
pub mod site;
pub mod trace;

/// What a `leak` finding covers (`ACLMEM_SANITIZER_LEAK_CHECK`,
/// `aclmem sanitize --leak-check`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LeakCheck {
    /// What the program's own code made and still holds; memory a
    /// framework's caching allocator still caches is summed up in one
    /// line, not reported (the default).
    #[default]
    Program,
    /// Everything still held, a framework's cache included.
    Full,
    /// Nothing.
    None,
}

impl LeakCheck {
    /// Every setting, in the order the documentation lists them.
    pub const ALL: [LeakCheck; 3] = [LeakCheck::Program, LeakCheck::Full, LeakCheck::None];

    /// `program`, `full` or `none`.
    pub const fn name(self) -> &'static str {
        match self {
            LeakCheck::Program => "program",
            LeakCheck::Full => "full",
            LeakCheck::None => "none",
        }
    }

    /// The setting a name gives (`None` for anything else).
    pub fn from_name(name: &str) -> Option<LeakCheck> {
        LeakCheck::ALL.into_iter().find(|l| l.name() == name)
    }
}

impl std::fmt::Display for LeakCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leak_checks_round_trip_by_name() {
        for l in LeakCheck::ALL {
            assert_eq!(LeakCheck::from_name(l.name()), Some(l));
            assert_eq!(
                serde_json::to_string(&l).unwrap(),
                format!("\"{}\"", l.name())
            );
        }
        assert_eq!(LeakCheck::from_name("all"), None);
    }
}

// The README (this crate's page on crates.io) is compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
