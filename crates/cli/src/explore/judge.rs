//! Judging a run against the clean one: its outcome (hang, crash, misuse,
//! leak or handled), the findings the clean run did not have, and where it
//! crashed or waits.

use aclmem_formats::finding::Class;
use aclmem_formats::postmortem::{self, Where};
use std::collections::BTreeSet;

use super::learn::Point;
use super::runner::{Found, Ran};

/// What one run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Outcome {
    Hang,
    Crash,
    Misuse,
    Leak,
    Handled,
}

impl Outcome {
    pub(super) fn name(self) -> &'static str {
        match self {
            Outcome::Hang => "hang",
            Outcome::Crash => "crash",
            Outcome::Misuse => "misuse",
            Outcome::Leak => "leak",
            Outcome::Handled => "handled",
        }
    }
}

/// One fault tried, and what came of it.
pub(super) struct Tried {
    /// Its place in the order faults were planned.
    pub(super) index: usize,
    pub(super) point: Point,
    pub(super) nth: u64,
    pub(super) code: i32,
    /// The fault as given to the library: what reproduces the run.
    pub(super) spec: String,
    pub(super) outcome: Outcome,
    pub(super) findings: Vec<Found>,
    pub(super) exit: Option<i32>,
    /// Where the run crashed or waits, for those outcomes.
    pub(super) place: Option<Where>,
}

/// Where a run that crashed or hung was: for a crash, the record of the
/// signal that ended it (the first crash signal recorded); for a hang, the
/// first process that answered the probe. `None` for other outcomes, or
/// when no process could say (a handler of the program's own, or a program
/// without the sanitizer's `aclInit`).
pub(super) fn place_of(ran: &Ran, outcome: Outcome) -> Option<Where> {
    let wanted = |w: &&Where| match outcome {
        Outcome::Hang => w.signal == postmortem::PROBE_SIGNAL,
        Outcome::Crash => {
            w.signal != postmortem::PROBE_SIGNAL && ran.code.is_some_and(|c| c - 128 == w.signal)
        }
        _ => false,
    };
    ran.places.iter().find(wanted).cloned().or_else(|| {
        // Another process of the program crashed (a forked child).
        (outcome == Outcome::Crash)
            .then(|| crashes(ran).next().cloned())
            .flatten()
    })
}

/// The crash records of a run's processes (a hang's probe is not one).
pub(super) fn crashes(ran: &Ran) -> impl Iterator<Item = &Where> {
    ran.places
        .iter()
        .filter(|w| w.signal != postmortem::PROBE_SIGNAL)
}

/// A finding's identity across runs: its class and site.
pub(super) fn key(f: &Found) -> (String, String) {
    (f.class.clone(), f.site.clone())
}

/// The outcome of a run, against the clean run's findings.
/// `baseline`: the clean run's findings; `crashed`: whether a process of
/// the clean run crashed (then a crash of another process is not new).
pub(super) fn judge(
    ran: &Ran,
    baseline: &BTreeSet<(String, String)>,
    crashed: bool,
) -> (Outcome, Vec<Found>) {
    let Some(code) = ran.code else {
        return (Outcome::Hang, Vec::new());
    };
    let new: Vec<Found> = ran
        .findings
        .iter()
        .filter(|f| f.class != Class::OutOfMemory.name() && !baseline.contains(&key(f)))
        .cloned()
        .collect();
    // `aclmem sanitize` answers 128 + the signal for a program killed by
    // one (the shell's convention).
    // A process of the program (a forked child too) that died of a crash
    // signal left a record of it.
    let child_crashed = !crashed && crashes(ran).next().is_some();
    let outcome = if (129..=128 + 64).contains(&code) || child_crashed {
        Outcome::Crash
    } else if new.iter().any(|f| !f.leak) {
        Outcome::Misuse
    } else if !new.is_empty() {
        Outcome::Leak
    } else {
        Outcome::Handled
    };
    (outcome, new)
}
