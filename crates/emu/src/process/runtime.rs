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
    contexts: BTreeMap<u64, u32>,
    /// Streams: handle → device.
    streams: BTreeMap<u64, u32>,
    /// Events (`calls::events`).
    events: BTreeMap<u64, Event>,
    next: u64,
    /// `aclrtSetDevice` minus `aclrtResetDevice`, per device.
    device_refs: BTreeMap<u32, u32>,
    /// Peer access enabled: (device, peer), machine ids.
    peers: std::collections::BTreeSet<(u32, u32)>,
}

impl Runtime {
    /// A new opaque handle above `base` (never dereferenced by anyone).
    fn issue(&mut self, base: u64) -> u64 {
        self.next += 1;
        base + self.next * 0x40
    }
}

/// Removes `key` from a table of contexts or streams.
fn remove(table: &mut BTreeMap<u64, u32>, key: u64) -> Result<()> {
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
    static CURRENT: Cell<(u64, i32, u64)> = const { Cell::new((0, -1, 0)) };
}

/// Streams one device holds at once, per product (the runtime's limits).
fn stream_limit(product: Product) -> usize {
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

    /// Calls need a device set on their thread from now on.
    pub(crate) fn use_thread_devices(&self) {
        self.thread_devices.store(true, Ordering::Relaxed);
    }

    /// The device (the machine's id) a thread without one gets, or none.
    pub(crate) fn set_default_device(&self, device: Option<u32>) {
        let value = device.map_or(-1, i64::from);
        self.default_device.store(value, Ordering::Release);
    }

    /// One more reference of device `d`, which becomes this thread's.
    pub(crate) fn set_device(&self, d: u32) {
        let mut rt = self.runtime.lock();
        let refs = rt.device_refs.entry(d).or_default();
        *refs = refs.saturating_add(1);
        self.set_current(d, 0);
    }

    /// One reference of device `d` goes (all with `force`); with the
    /// last, its streams go. The calling thread no longer has it set.
    pub(crate) fn reset_device(&self, d: u32, force: bool) {
        let mut rt = self.runtime.lock();
        let refs = rt.device_refs.entry(d).or_default();
        *refs = if force { 0 } else { refs.saturating_sub(1) };
        if *refs == 0 {
            rt.streams.retain(|_, s| *s != d);
        }
        CURRENT.with(|c| {
            let (token, current, _) = c.get();
            if token == self.token && current == d as i32 {
                c.set((0, -1, 0));
            }
        });
    }

    /// A new context on device `d`, current on this thread.
    pub(crate) fn create_context(&self, d: u32) -> u64 {
        let handle = {
            let mut rt = self.runtime.lock();
            let handle = rt.issue(0xC0_0000);
            rt.contexts.insert(handle, d);
            handle
        };
        self.set_current(d, handle);
        handle
    }

    /// Context `context` goes; a thread that had it current keeps its
    /// device.
    pub(crate) fn destroy_context(&self, context: u64) -> Result<()> {
        remove(&mut self.runtime.lock().contexts, context)?;
        CURRENT.with(|c| {
            let (token, device, current) = c.get();
            if token == self.token && current == context {
                c.set((token, device, 0));
            }
        });
        Ok(())
    }

    /// The device of a context made by [`Process::create_context`].
    pub(crate) fn context_device(&self, context: u64) -> Option<u32> {
        self.runtime.lock().contexts.get(&context).copied()
    }

    /// A new stream on `device` (the runtime's error when the device holds
    /// as many as the product allows).
    pub(crate) fn create_stream(&self, device: u32) -> Result<u64> {
        let mut rt = self.runtime.lock();
        if rt.streams.values().filter(|&&d| d == device).count()
            >= stream_limit(self.machine.product)
        {
            return Err(Situation::StreamLimit.code());
        }
        let handle = rt.issue(0x5_0000);
        rt.streams.insert(handle, device);
        Ok(handle)
    }

    /// Stream `stream` goes.
    pub(crate) fn destroy_stream(&self, stream: u64) -> Result<()> {
        remove(&mut self.runtime.lock().streams, stream)
    }

    /// The device of a live stream.
    pub(crate) fn stream_device(&self, stream: u64) -> Option<u32> {
        self.runtime.lock().streams.get(&stream).copied()
    }

    /// Records peer access from `device` to `peer` as enabled or not.
    pub(crate) fn set_peer(&self, device: u32, peer: u32, enable: bool) {
        let mut rt = self.runtime.lock();
        if enable {
            rt.peers.insert((device, peer));
        } else {
            rt.peers.remove(&(device, peer));
        }
    }

    /// Whether peer access from `device` to `peer` is enabled.
    pub(crate) fn peer_enabled(&self, device: u32, peer: u32) -> bool {
        self.runtime.lock().peers.contains(&(device, peer))
    }

    /// A new event on `device`, not recorded.
    pub(crate) fn create_event(&self, device: u32) -> u64 {
        let mut rt = self.runtime.lock();
        let handle = rt.issue(0xe_0000);
        rt.events.insert(
            handle,
            Event {
                device,
                recorded: None,
            },
        );
        handle
    }

    /// Event `event` goes.
    pub(crate) fn destroy_event(&self, event: u64) -> Result<()> {
        self.runtime
            .lock()
            .events
            .remove(&event)
            .map(drop)
            .ok_or(Situation::BadEvent.code())
    }

    /// Runs `f` on a live event.
    pub(crate) fn with_event<R>(&self, event: u64, f: impl FnOnce(&mut Event) -> R) -> Result<R> {
        let mut rt = self.runtime.lock();
        rt.events
            .get_mut(&event)
            .map(f)
            .ok_or(Situation::BadEvent.code())
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
