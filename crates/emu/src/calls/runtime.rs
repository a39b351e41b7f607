//! The runtime around memory: devices set per thread, contexts and
//! streams (events are in `calls::events`). No work runs on a stream (copies are synchronous); they exist
//! so that programs that create, pass and destroy them get the runtime's
//! answers.
//!
//! A process that follows the C runtime's rule
//! ([`Emulator::use_thread_devices`]) needs a device set on the calling
//! thread (`aclrtSetDevice`, or a context) for every memory call: 107002
//! (`ACL_ERROR_RT_CONTEXT_NULL`) without one. The Rust API names devices
//! explicitly and has no such rule.

use crate::Target;
use crate::process::runtime::DEFAULT_CONTEXT;

use aclmem_core::AclError;

use crate::errors::Situation;
use crate::process::Result;
use crate::{Emulator, Op};

impl Emulator {
    /// From now on, every memory call of this process needs a device set on
    /// its thread ([`Emulator::set_device`] or a context), as in the C
    /// runtime: 107002 (`ACL_ERROR_RT_CONTEXT_NULL`) without one. What the
    /// emulated C library turns on at `aclInit`.
    pub fn use_thread_devices(&self) {
        self.process.use_thread_devices();
    }

    /// The default device of `aclInit`'s configuration
    /// (`{"defaultDevice": {"default_device": "N"}}`), or none: from now on
    /// a call that needs a device, on a thread that has none, sets this one
    /// on its thread first instead of answering 107002 (the runtime's
    /// implicit `aclrtSetDevice`). 107001 for a device the machine lacks.
    pub fn set_default_device(&self, device: Option<u32>) -> Result<()> {
        let device = device.map(|d| self.process.device(d)).transpose()?;
        self.process.set_default_device(device);
        Ok(())
    }

    /// `aclrtSetDevice`: `device` becomes the calling thread's (with its
    /// default context).
    pub fn set_device(&self, device: i32) -> Result<()> {
        let d = self.process.device_id(device)?;
        self.process.set_device(d);
        Ok(())
    }

    /// `aclrtResetDevice` (`aclrtResetDeviceForce` with `force`): one
    /// reference (all) of the device goes; with the last, its default
    /// context and streams go. The calling thread no longer has it set.
    pub fn reset_device(&self, device: i32, force: bool) -> Result<()> {
        let d = self.process.device_id(device)?;
        self.process.reset_device(d, force);
        Ok(())
    }

    /// `aclrtGetDevice`: the device set on the calling thread (its user
    /// id).
    pub fn current_device(&self) -> Result<u32> {
        let p = &self.process;
        p.current().map(|(d, _)| p.user_device(d))
    }

    /// `aclrtGetCurrentContext`: the context set on this thread, or the
    /// default context of its device.
    pub fn current_context(&self) -> Result<u64> {
        let (device, context) = self.process.current()?;
        Ok(if context != 0 {
            context
        } else {
            DEFAULT_CONTEXT + u64::from(device)
        })
    }

    /// `aclrtSetCurrentContext`: the context's device becomes this
    /// thread's.
    pub fn set_current_context(&self, context: u64) -> Result<()> {
        let p = &self.process;
        let devices = u64::from(p.machine().config.devices);
        if (DEFAULT_CONTEXT..DEFAULT_CONTEXT + devices).contains(&context) {
            p.set_current((context - DEFAULT_CONTEXT) as u32, 0);
            return Ok(());
        }
        let d = self
            .context_device(context)
            .ok_or(Situation::BadContextOrStream.code())?;
        p.set_current(d, context);
        Ok(())
    }

    /// `aclrtCreateContext` on `device`: its opaque handle; it becomes
    /// current on this thread.
    pub fn create_context(&self, device: i32) -> Result<u64> {
        let p = &self.process;
        p.enter(Op::Context)?;
        let d = p.device_id(device)?;
        Ok(p.create_context(d))
    }

    /// `aclrtDestroyContext` (only contexts made by `aclrtCreateContext`);
    /// a thread that had it current keeps its device.
    pub fn destroy_context(&self, context: u64) -> Result<()> {
        let p = &self.process;
        p.enter(Op::Context)?;
        p.destroy_context(context)
    }

    /// The device of a context made by [`Emulator::create_context`].
    pub fn context_device(&self, context: u64) -> Option<u32> {
        self.process.context_device(context)
    }

    /// `aclrtCreateStream` on `device`.
    pub fn create_stream(&self, device: impl Into<Target>) -> Result<u64> {
        let p = &self.process;
        p.enter_rt(Op::Stream)?;
        let device = p.target(device.into())?;
        p.create_stream(device)
    }

    /// `aclrtDestroyStream(Force)`.
    /// A capturing stream is 107027.
    pub fn destroy_stream(&self, stream: u64) -> Result<()> {
        self.process.enter(Op::Stream)?;
        self.refuse_if_capturing(stream)?;
        self.process.destroy_stream(stream)
    }

    /// The device of a live stream.
    pub fn stream_device(&self, stream: u64) -> Option<u32> {
        self.process.stream_device(stream)
    }

    /// Whether `stream` is 0 (the default stream) or a live stream.
    pub fn check_stream(&self, stream: u64) -> Result<()> {
        if stream == 0 || self.stream_device(stream).is_some() {
            Ok(())
        } else {
            Err(Situation::BadContextOrStream.code())
        }
    }

    /// `aclrtSynchronizeDevice(WithTimeout)`: nothing runs asynchronously,
    /// so there is nothing to wait for (a timeout is checked by
    /// [`args::sync_timeout`](crate::args::sync_timeout)); the memory
    /// pools of the thread's device release cached memory above their
    /// release threshold, as at a stream synchronisation. While any stream
    /// captures: 107027.
    pub fn synchronize_device(&self) -> Result<()> {
        let p = &self.process;
        p.on_device()?;
        self.refuse_if_any_capturing()?;
        if let Ok((device, _)) = p.current() {
            p.pool_sync(device);
        }
        Ok(())
    }

    /// `aclrtSynchronizeStream(WithTimeout)` (0 is the default stream):
    /// the memory pools of the stream's device release cached memory
    /// above their release threshold (`ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD`,
    /// documented as released at the next stream synchronisation). A
    /// capturing stream is 107027.
    pub fn synchronize_stream(&self, stream: u64) -> Result<()> {
        let p = &self.process;
        p.on_device()?;
        self.check_stream(stream)?;
        self.refuse_if_capturing(stream)?;
        let device = match self.stream_device(stream) {
            Some(d) => Some(d),
            None => p.current().ok().map(|(d, _)| d),
        };
        if let Some(device) = device {
            p.pool_sync(device);
        }
        Ok(())
    }

    /// `aclrtDeviceCanAccessPeer`: every pair of distinct devices can; a
    /// device with itself is 100000.
    pub fn can_access_peer(&self, device: i32, peer: i32) -> Result<bool> {
        if device == peer {
            return Err(AclError::INVALID_PARAM);
        }
        self.process.device_id(device)?;
        self.process.device_id(peer)?;
        Ok(true)
    }
}
