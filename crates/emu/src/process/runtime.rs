//! The runtime state of a process: contexts, streams, events, device
//! references, and the device current on each thread.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

use aclmem_core::{AclError, Product};

use super::{Process, Result};
use crate::errors::Situation;

/// Contexts, streams and device references of a process.
#[derive(Debug, Default)]
pub(crate) struct Runtime {
    /// Contexts made by `aclrtCreateContext`: handle → device.
    pub(crate) contexts: BTreeMap<u64, u32>,
    /// Streams: handle → device.
    pub(crate) streams: BTreeMap<u64, u32>,
    /// Events (`calls::events`).
    pub(crate) events: BTreeMap<u64, Event>,
    next: u64,
    /// `aclrtSetDevice` minus `aclrtResetDevice`, per device.
    pub(crate) device_refs: BTreeMap<u32, u32>,
}

impl Runtime {
    /// A new opaque handle above `base` (never dereferenced by anyone).
    pub(crate) fn issue(&mut self, base: u64) -> u64 {
        self.next += 1;
        base + self.next * 0x40
    }
}

/// Removes `key` from a table of contexts or streams.
pub(crate) fn remove(table: &mut BTreeMap<u64, u32>, key: u64) -> Result<()> {
    table
        .remove(&key)
        .map(drop)
        .ok_or(Situation::BadContextOrStream.code())
}

/// The base of default-context handles: `aclrtSetDevice(d)`'s context is
/// `DEFAULT_CONTEXT + d` (an opaque value, never dereferenced).
pub const DEFAULT_CONTEXT: u64 = 0x7dc0_0000_0000;

thread_local! {
    /// (process token, device, context) current on this thread; context 0
    /// is the device's default context.
    pub(crate) static CURRENT: Cell<(u64, i32, u64)> = const { Cell::new((0, -1, 0)) };
}

/// Streams one device holds at once, per product (the runtime's limits).
pub(crate) fn stream_limit(product: Product) -> usize {
    match product {
        Product::Atlas200IA2 => 511,
        Product::AtlasInference => 1023,
        _ => 1983,
    }
}

/// The device a call acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The one set on the calling thread (107002 without one).
    Current,
    /// This one.
    Device(u32),
}

impl From<u32> for Target {
    fn from(device: u32) -> Target {
        Target::Device(device)
    }
}

impl Process {
    /// The device set on this thread (107002 when none since it joined).
    /// With a default device configured ([`Emulator::set_default_device`])
    /// a thread without one gets it set here, as the runtime's implicit
    /// `aclrtSetDevice` does (a reference of the device, its default
    /// context).
    pub(crate) fn current(&self) -> Result<(u32, u64)> {
        let (token, device, context) = CURRENT.with(Cell::get);
        if token == self.token && device >= 0 {
            return Ok((device as u32, context));
        }
        let default = self.default_device.load(Ordering::Acquire);
        let d = u32::try_from(default).map_err(|_| AclError::RT_CONTEXT_NULL)?;
        let d = self.device(d).map_err(|_| AclError::RT_CONTEXT_NULL)?;
        let mut rt = self.runtime.lock();
        let refs = rt.device_refs.entry(d).or_default();
        *refs = refs.saturating_add(1);
        self.set_current(d, 0);
        Ok((d, 0))
    }

    /// 107002 when the process follows the C runtime's rule and this thread
    /// has no device.
    pub(crate) fn on_device(&self) -> Result<()> {
        if self.thread_devices.load(Ordering::Relaxed) {
            self.current()?;
        }
        Ok(())
    }

    /// The device `target` names: checked against the machine (107001), or
    /// the thread's.
    pub(crate) fn target(&self, target: Target) -> Result<u32> {
        match target {
            Target::Device(d) => self.device(d),
            Target::Current => self.current().map(|(d, _)| d),
        }
    }

    /// A device id from C (107001 outside the machine).
    pub(crate) fn device_id(&self, device: i32) -> Result<u32> {
        u32::try_from(device)
            .map_err(|_| AclError::RT_INVALID_DEVICEID)
            .and_then(|d| self.device(d))
    }

    pub(crate) fn set_current(&self, device: u32, context: u64) {
        CURRENT.with(|c| c.set((self.token, device as i32, context)));
    }
}

/// A live event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Event {
    /// The device it was created on.
    pub(crate) device: u32,
    /// When it was last recorded (`None`: never, or reset since).
    pub(crate) recorded: Option<Instant>,
}
