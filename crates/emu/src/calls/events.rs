//! Events: created, recorded on a stream, waited for, timed, shared with
//! another process. Nothing runs asynchronously in the emulator, so an
//! event is complete the moment it is recorded; what the emulator keeps is
//! whether and when it was recorded (for `aclrtEventElapsedTime` and
//! `aclrtQueryEventStatus`) and which events are live (a destroyed or
//! made-up event is an error code, never a crash).

use std::time::Instant;

use crate::errors::Situation;
use crate::process::Result;
use crate::{Emulator, Op, Target};

/// Where an event handle shared with `aclrtIpcGetEventHandle` points: the
/// first 16 bytes of `aclrtIpcEventHandle` (the rest are zero).
const IPC_MAGIC: u32 = 0x4145_5645; // "EVEA"

impl Emulator {
    /// `aclrtCreateEvent(ExWithFlag|WithFlag)` on `device` (the C library
    /// passes the calling thread's). Flags change nothing: every event can
    /// be timed and waited for.
    pub fn create_event(&self, device: impl Into<Target>) -> Result<u64> {
        let p = &self.process;
        p.enter_rt(Op::Stream)?;
        let device = p.target(device.into())?;
        Ok(p.create_event(device))
    }

    /// `aclrtDestroyEvent`.
    pub fn destroy_event(&self, event: u64) -> Result<()> {
        self.process.enter(Op::Stream)?;
        self.process.destroy_event(event)
    }

    /// Runs `f` on a live event.
    fn with_event<R>(
        &self,
        event: u64,
        f: impl FnOnce(&mut crate::process::runtime::Event) -> R,
    ) -> Result<R> {
        self.process.enter(Op::Stream)?;
        self.process.with_event(event, f)
    }

    /// `aclrtRecordEvent(event, stream)`: complete at once (0 is the
    /// default stream).
    /// The event also stands for the memory-pool frees on `stream` so
    /// far (what a stream that waits for it may reuse).
    pub fn record_event(&self, event: u64, stream: u64) -> Result<()> {
        self.process.on_device()?;
        self.check_stream(stream)?;
        self.with_event(event, |e| e.recorded = Some(Instant::now()))?;
        self.process.pool_record(event, stream);
        Ok(())
    }

    /// `aclrtResetEvent(event, stream)`: not recorded any more.
    pub fn reset_event(&self, event: u64, stream: u64) -> Result<()> {
        self.check_stream(stream)?;
        self.with_event(event, |e| e.recorded = None)
    }

    /// `aclrtSynchronizeEvent` / `aclrtStreamWaitEvent`: there is never
    /// anything to wait for; the event must be live (and the stream too).
    pub fn wait_event(&self, event: u64, stream: u64) -> Result<()> {
        self.check_stream(stream)?;
        self.with_event(event, |_| ())
    }

    /// `aclrtStreamWaitEvent(stream, event)`: as [`Emulator::wait_event`];
    /// then `stream` is ordered after what the event stands for, so a
    /// memory pool that follows event dependencies lets it reuse blocks
    /// freed before the event on the recording stream.
    pub fn stream_wait_event(&self, event: u64, stream: u64) -> Result<()> {
        self.wait_event(event, stream)?;
        self.process.pool_wait(event, stream);
        Ok(())
    }

    /// `aclrtQueryEventStatus`: whether the event has been recorded (then
    /// it is complete).
    pub fn event_recorded(&self, event: u64) -> Result<bool> {
        self.with_event(event, |e| e.recorded.is_some())
    }

    /// `aclrtEventElapsedTime(start, end)` in milliseconds: both recorded
    /// (else 107000), negative when `end` was recorded first, as the
    /// runtime measures it.
    pub fn event_elapsed_ms(&self, start: u64, end: u64) -> Result<f32> {
        let a = self.with_event(start, |e| e.recorded)?;
        let b = self.with_event(end, |e| e.recorded)?;
        let (Some(a), Some(b)) = (a, b) else {
            return Err(Situation::EventNotRecorded.code());
        };
        let ms = if b >= a {
            b.duration_since(a).as_secs_f64() * 1e3
        } else {
            -(a.duration_since(b).as_secs_f64() * 1e3)
        };
        Ok(ms as f32)
    }

    /// The device a live event was created on.
    pub fn event_device(&self, event: u64) -> Option<u32> {
        self.process.with_event(event, |e| e.device).ok()
    }

    /// `aclrtIpcGetEventHandle`: the bytes of an `aclrtIpcEventHandle` that
    /// name this live event of this process.
    pub fn ipc_event_handle(&self, event: u64) -> Result<[u8; 64]> {
        self.with_event(event, |_| ())?;
        let mut out = [0u8; 64];
        out[..4].copy_from_slice(&IPC_MAGIC.to_le_bytes());
        out[4..8].copy_from_slice(&self.pid().to_le_bytes());
        out[8..16].copy_from_slice(&event.to_le_bytes());
        Ok(out)
    }

    /// `aclrtIpcOpenEventHandle`: an event of this process standing for the
    /// one `handle` names (recorded: work the other process recorded is
    /// complete, as everything is here). Bytes no
    /// [`Emulator::ipc_event_handle`] made are 107000.
    pub fn open_ipc_event(&self, handle: &[u8; 64]) -> Result<u64> {
        let magic = u32::from_le_bytes([handle[0], handle[1], handle[2], handle[3]]);
        if magic != IPC_MAGIC || handle[16..].iter().any(|&b| b != 0) {
            return Err(Situation::BadEvent.code());
        }
        let event = self.create_event(Target::Current)?;
        self.with_event(event, |e| e.recorded = Some(Instant::now()))?;
        Ok(event)
    }
}
