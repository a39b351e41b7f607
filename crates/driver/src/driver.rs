//! One device of a runtime, [`Driver`], and how the threads that use it get
//! its device set.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;

use aclmem_core::AclError;

use crate::runtime::RuntimeInner;
use crate::{AscendCl, Runtime};

thread_local! {
    /// The (runtime id, device) this thread last set with `aclrtSetDevice`.
    pub(crate) static CURRENT: Cell<(usize, i32)> = const { Cell::new((0, -1)) };
}

/// One device of a [`Runtime`]: implements every `aclmem-hal` trait.
/// `Send + Sync`; see the crate docs for how threads get their device.
#[derive(Clone)]
pub struct Driver {
    pub(crate) rt: Arc<RuntimeInner>,
    pub(crate) device: i32,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("library", &self.rt.cl.path)
            .field("device", &self.device)
            .finish()
    }
}

impl Driver {
    /// The device this backend is bound to.
    pub fn device_id(&self) -> u32 {
        self.device as u32
    }

    /// The runtime.
    pub fn runtime(&self) -> Runtime {
        Runtime {
            inner: Arc::clone(&self.rt),
        }
    }

    /// Makes sure the calling thread has this driver's device set.
    pub(crate) fn enter(&self) -> Result<&AscendCl, AclError> {
        let want = (self.rt.id, self.device);
        if CURRENT.with(Cell::get) != want {
            let set = self.rt.cl.aclrtSetDevice()?;
            // SAFETY: documented prototype; plain integer argument.
            AclError::check(unsafe { set(self.device) })?;
            CURRENT.with(|c| c.set(want));
        }
        Ok(&self.rt.cl)
    }

    /// `aclrtGetDevice` on the calling thread (after making sure this
    /// driver's device is set there).
    pub fn current_device(&self) -> Result<i32, AclError> {
        let f = self.enter()?.aclrtGetDevice()?;
        let mut d = -1;
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(&mut d) })?;
        Ok(d)
    }

    /// Releases this driver's device on the calling thread
    /// (`aclrtResetDevice`), for threads that are about to end. The next call
    /// from this thread sets it again.
    pub fn release_thread(&self) -> Result<(), AclError> {
        if CURRENT.with(Cell::get) != (self.rt.id, self.device) {
            return Ok(());
        }
        let f = self.rt.cl.aclrtResetDevice()?;
        // SAFETY: documented prototype; plain integer argument.
        AclError::check(unsafe { f(self.device) })?;
        CURRENT.with(|c| c.set((0, -1)));
        Ok(())
    }

    /// `aclrtDeviceGetBareTgid`: the pid to whitelist for sharing (the host
    /// pid, even inside a container). Optional symbol: 207000 where absent.
    pub fn bare_tgid(&self) -> Result<i32, AclError> {
        let f = self.enter()?.aclrtDeviceGetBareTgid()?;
        let mut pid = 0;
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(&mut pid) })?;
        Ok(pid)
    }

    /// `aclrtGetMemInfo` for `attr` on this device.
    pub fn mem_info(&self, attr: aclmem_core::MemAttr) -> Result<(usize, usize), AclError> {
        let f = self.enter()?.aclrtGetMemInfo()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: documented prototype; the out pointers are live locals.
        AclError::check(unsafe { f(attr.raw(), &mut free, &mut total) })?;
        Ok((free, total))
    }
}
