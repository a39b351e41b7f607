//! The runtime around memory: contexts and streams. No work runs on them
//! (copies are synchronous); they exist so that programs that create,
//! pass and destroy them get the runtime's answers.

use std::collections::BTreeMap;

use aclmem_core::Product;

use crate::errors::Situation;
use crate::process::Result;
use crate::{Emulator, Op};

/// Contexts and streams of a process.
#[derive(Debug, Default)]
pub(crate) struct Runtime {
    /// Contexts made by `aclrtCreateContext`: handle → device.
    contexts: BTreeMap<u64, u32>,
    /// Streams: handle → device.
    streams: BTreeMap<u64, u32>,
    next: u64,
}

impl Runtime {
    /// A new opaque handle above `base` (never dereferenced by anyone).
    fn issue(&mut self, base: u64) -> u64 {
        self.next += 1;
        base + self.next * 0x40
    }
}

/// Removes `key` from a table of contexts or streams (107000-class
/// `BadContextOrStream` if it is not there).
fn remove(table: &mut BTreeMap<u64, u32>, key: u64) -> Result<()> {
    table
        .remove(&key)
        .map(drop)
        .ok_or(Situation::BadContextOrStream.code())
}

/// Streams one device holds at once, per product (the runtime's limits).
fn stream_limit(product: Product) -> usize {
    match product {
        Product::Atlas200IA2 => 511,
        Product::AtlasInference => 1023,
        _ => 1983,
    }
}

impl Emulator {
    /// `aclrtCreateContext` on `device`: its opaque handle.
    pub fn create_context(&self, device: u32) -> Result<u64> {
        let p = &self.process;
        p.enter(Op::Context)?;
        p.device(device)?;
        let mut rt = p.runtime.lock();
        let handle = rt.issue(0xC0_0000);
        rt.contexts.insert(handle, device);
        Ok(handle)
    }

    /// `aclrtDestroyContext`.
    pub fn destroy_context(&self, context: u64) -> Result<()> {
        self.process.enter(Op::Context)?;
        remove(&mut self.process.runtime.lock().contexts, context)
    }

    /// The device of a context made by [`Emulator::create_context`].
    pub fn context_device(&self, context: u64) -> Option<u32> {
        self.process.runtime.lock().contexts.get(&context).copied()
    }

    /// `aclrtCreateStream` on `device`.
    pub fn create_stream(&self, device: u32) -> Result<u64> {
        let p = &self.process;
        p.enter(Op::Stream)?;
        let mut rt = p.runtime.lock();
        if rt.streams.values().filter(|&&d| d == device).count() >= stream_limit(p.machine.product)
        {
            return Err(Situation::StreamLimit.code());
        }
        let handle = rt.issue(0x5_0000);
        rt.streams.insert(handle, device);
        Ok(handle)
    }

    /// `aclrtDestroyStream(Force)`.
    pub fn destroy_stream(&self, stream: u64) -> Result<()> {
        self.process.enter(Op::Stream)?;
        remove(&mut self.process.runtime.lock().streams, stream)
    }

    /// The device of a live stream.
    pub fn stream_device(&self, stream: u64) -> Option<u32> {
        self.process.runtime.lock().streams.get(&stream).copied()
    }

    /// `aclrtResetDevice(Force)`: the device's streams go.
    pub fn reset_device(&self, device: u32) {
        self.process
            .runtime
            .lock()
            .streams
            .retain(|_, d| *d != device);
    }
}
