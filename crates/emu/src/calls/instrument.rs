//! Instruments: call counts, injected faults, stats and leak reports.

use crate::Op;

use aclmem_core::AclError;

use crate::{Emulator, LeakReport, Stats};

impl Emulator {
    /// Makes the `nth` call of `op` from now (1 = the next one) fail with
    /// `code`, without side effects.
    pub fn inject_fault(&self, op: Op, nth: u64, code: AclError) {
        self.process.arm_fault(op, nth, code);
    }

    /// A snapshot of capacity use, live objects and call counts.
    pub fn stats(&self) -> Stats {
        self.process.stats()
    }

    /// What this process still holds.
    pub fn leak_report(&self) -> LeakReport {
        self.process.leak_report()
    }
}
