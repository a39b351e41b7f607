//! Stream value operations: `aclrtValueWrite` and `aclrtValueWait`, a
//! 64-bit value written to or waited for in device memory by a stream.
//!
//! Every stream's work runs at once here, in call order, so a write is
//! stored before the call returns, and a wait is decided when it is
//! issued: a condition that holds succeeds; one that does not can only
//! become true through another thread or process writing the value, so
//! the wait polls it for a bounded time and then answers the stream's
//! timeout ([`Situation::ValueWaitTimeout`]).

use std::time::{Duration, Instant};

use aclmem_core::{AclError, Location};

use crate::errors::Situation;
use crate::process::Result;
use crate::{Emulator, Op};

/// How long `aclrtValueWait` polls a value whose condition does not hold
/// (the emulator's bound; see [`Situation::ValueWaitTimeout`]).
pub const VALUE_WAIT_BOUND: Duration = Duration::from_secs(2);

/// The conditions of `aclrtValueWait` (`ACL_STREAM_WAIT_VALUE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitCondition {
    /// `GEQ` (0): `(int64_t)(*addr - value) >= 0`.
    Geq,
    /// `EQ` (1): `*addr == value`.
    Eq,
    /// `AND` (2): `(*addr & value) != 0`.
    And,
    /// `NOR` (3): `~(*addr | value) != 0`.
    Nor,
}

impl WaitCondition {
    /// The condition a flag names; `None` for 4 and above (the runtime's
    /// `MEM_WAIT_VALUE_TYPE_MAX`, 107000).
    pub const fn from_flag(flag: u32) -> Option<WaitCondition> {
        match flag {
            0 => Some(WaitCondition::Geq),
            1 => Some(WaitCondition::Eq),
            2 => Some(WaitCondition::And),
            3 => Some(WaitCondition::Nor),
            _ => None,
        }
    }

    /// Whether `current`, the value in memory, satisfies the condition
    /// against `value`.
    pub const fn holds(self, current: u64, value: u64) -> bool {
        match self {
            WaitCondition::Geq => current.wrapping_sub(value) as i64 >= 0,
            WaitCondition::Eq => current == value,
            WaitCondition::And => current & value != 0,
            WaitCondition::Nor => !(current | value) != 0,
        }
    }
}

impl Emulator {
    /// The runtime's checks shared by both calls: the thread's device
    /// (107002), the stream (0 is the default stream), and the address,
    /// which must be device memory of this process (107000).
    fn value_target(&self, addr: usize, stream: u64) -> Result<()> {
        let p = &self.process;
        p.enter_rt(Op::Stream)?;
        self.check_stream(stream)?;
        match p.placed_at(addr) {
            Some(a) if a.location == Location::Device => Ok(()),
            _ => Err(AclError::RT_PARAM_INVALID),
        }
    }

    /// `aclrtValueWrite(devAddr, value, flag, stream)` after the ACL
    /// layer's NULL check: `flag` must be 0 (107000); the address must be
    /// device memory (107000) and 8-byte aligned
    /// ([`Situation::ValueWriteUnaligned`]); the 64-bit value is stored
    /// (little-endian, as the device stores it) before the call returns.
    pub fn value_write(&self, addr: usize, value: u64, flag: u32, stream: u64) -> Result<()> {
        if flag != 0 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        self.value_target(addr, stream)?;
        if !addr.is_multiple_of(8) {
            return Err(Situation::ValueWriteUnaligned.code());
        }
        self.write(addr, &value.to_le_bytes())
            .map_err(|_| Situation::BadCopyAddress.code())
    }

    /// `aclrtValueWait(devAddr, value, flag, stream)` after the ACL
    /// layer's NULL check: `flag` must name a condition (107000); the
    /// address must be device memory (107000). A condition that holds
    /// succeeds; otherwise the value is read again until it does or
    /// `bound` has passed ([`Situation::ValueWaitTimeout`]).
    pub fn value_wait(
        &self,
        addr: usize,
        value: u64,
        flag: u32,
        stream: u64,
        bound: Duration,
    ) -> Result<()> {
        let condition = WaitCondition::from_flag(flag).ok_or(AclError::RT_PARAM_INVALID)?;
        self.value_target(addr, stream)?;
        let start = Instant::now();
        let mut pause = Duration::from_micros(50);
        loop {
            let mut current = [0u8; 8];
            self.read(addr, &mut current)
                .map_err(|_| Situation::BadCopyAddress.code())?;
            if condition.holds(u64::from_le_bytes(current), value) {
                return Ok(());
            }
            if start.elapsed() >= bound {
                return Err(Situation::ValueWaitTimeout.code());
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WaitCondition;

    #[test]
    fn conditions_are_the_documented_ones() {
        assert!(WaitCondition::Geq.holds(5, 5));
        assert!(WaitCondition::Geq.holds(6, 5));
        assert!(!WaitCondition::Geq.holds(4, 5));
        // Signed difference: a value that wrapped round still counts.
        assert!(WaitCondition::Geq.holds(1, u64::MAX));
        assert!(WaitCondition::Eq.holds(7, 7));
        assert!(!WaitCondition::Eq.holds(7, 8));
        assert!(WaitCondition::And.holds(0b110, 0b010));
        assert!(!WaitCondition::And.holds(0b100, 0b010));
        assert!(WaitCondition::Nor.holds(0, 0));
        assert!(!WaitCondition::Nor.holds(u64::MAX, 0));
        assert_eq!(WaitCondition::from_flag(4), None);
    }
}
