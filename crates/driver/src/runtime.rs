//! The initialised ACL runtime: `aclInit` and `aclFinalize`, and the
//! queries of the whole runtime (platform, CANN release, ACL version,
//! devices).

use std::ffi::CStr;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use aclmem_core::{AclError, Product, RunMode};

use crate::version;
use crate::{AscendCl, CannSource, DetectedCann, Driver, sys};

pub(crate) struct RuntimeInner {
    pub(crate) cl: Arc<AscendCl>,
    pub(crate) owns_init: bool,
    pub(crate) id: usize,
    pub(crate) cann: OnceLock<Result<DetectedCann, AclError>>,
}

impl Drop for RuntimeInner {
    fn drop(&mut self) {
        if !self.owns_init {
            return;
        }
        if let Ok(finalize) = self.cl.aclFinalize() {
            // SAFETY: the runtime was initialised by this handle and no
            // driver of it is left (they hold this `Arc`). The result cannot
            // be reported from Drop; a failed finalize leaves nothing for us
            // to release.
            let _ = unsafe { finalize() };
        }
    }
}

/// An initialised ACL runtime. Dropping the last [`Runtime`] or [`Driver`]
/// of it calls `aclFinalize`.
#[derive(Clone)]
pub struct Runtime {
    pub(crate) inner: Arc<RuntimeInner>,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("library", &self.inner.cl.path)
            .field("owns_init", &self.inner.owns_init)
            .finish()
    }
}

impl Runtime {
    /// The loaded library.
    pub fn library(&self) -> &Arc<AscendCl> {
        &self.inner.cl
    }

    /// `aclrtGetSocName`. NULL (failure) is reported as
    /// `ACL_ERROR_RT_INTERNAL_ERROR`.
    pub fn soc_name(&self) -> Result<String, AclError> {
        let f = self.inner.cl.aclrtGetSocName()?;
        // SAFETY: documented prototype, no arguments.
        let p = unsafe { f() };
        if p.is_null() {
            return Err(AclError::RT_INTERNAL_ERROR);
        }
        // SAFETY: a non-NULL return is a NUL-terminated string owned by the
        // runtime; we copy it out at once.
        Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    /// `aclrtGetRunMode`, as a [`RunMode`]. An unknown value is
    /// `ACL_ERROR_RT_INTERNAL_ERROR`.
    pub fn run_mode(&self) -> Result<RunMode, AclError> {
        let f = self.inner.cl.aclrtGetRunMode()?;
        let mut raw = u32::MAX;
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(&mut raw) })?;
        RunMode::from_acl_run_mode(raw).ok_or(AclError::RT_INTERNAL_ERROR)
    }

    /// The product (from the SoC name) and run mode. An unknown SoC name is
    /// `ACL_ERROR_INVALID_PARAM`.
    pub fn platform(&self) -> Result<(Product, RunMode), AclError> {
        let soc = self.soc_name()?;
        let product = Product::from_soc_name(&soc).map_err(|e| e.code())?;
        Ok((product, self.run_mode()?))
    }

    /// The installed CANN release (detected once per runtime; see
    /// [`DetectedCann`] for the order of sources). Nothing found is
    /// `ACL_ERROR_INVALID_FILE` (100003); a bad `$ACLMEM_CANN` is 100000.
    pub fn cann(&self) -> Result<DetectedCann, AclError> {
        self.inner.cann.get_or_init(|| self.detect_cann()).clone()
    }

    fn detect_cann(&self) -> Result<DetectedCann, AclError> {
        if let Some(overridden) = version::from_override() {
            return overridden;
        }
        if let Ok(f) = self.inner.cl.aclsysGetCANNVersion() {
            let mut v = sys::aclCANNPackageVersion::default();
            // SAFETY: documented prototype; the out pointer is a live local
            // of the documented 512-byte layout.
            if unsafe { f(sys::ACL_PKG_NAME_CANN, &mut v) } == sys::ACL_SUCCESS
                && let Some(release) = version::from_c_field(&v.version)
            {
                return Ok(DetectedCann::new(release, CannSource::LibraryCall));
            }
        }
        version::from_files(&version::toolkit_dirs(Path::new(&self.inner.cl.path)))
            .ok_or(AclError::INVALID_FILE)
    }

    /// `aclrtGetVersion`: the ACL interface version (major, minor, patch),
    /// which is not the CANN release (see [`Runtime::cann`]).
    pub fn acl_version(&self) -> Result<(i32, i32, i32), AclError> {
        let f = self.inner.cl.aclrtGetVersion()?;
        let (mut major, mut minor, mut patch) = (0, 0, 0);
        // SAFETY: documented prototype; the out pointers are live locals.
        AclError::check(unsafe { f(&mut major, &mut minor, &mut patch) })?;
        Ok((major, minor, patch))
    }

    /// `aclrtGetDeviceCount`.
    pub fn device_count(&self) -> Result<u32, AclError> {
        let f = self.inner.cl.aclrtGetDeviceCount()?;
        let mut n = 0u32;
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(&mut n) })?;
        Ok(n)
    }

    /// A backend for device `device_id` (checked against the device count:
    /// `ACL_ERROR_RT_INVALID_DEVICEID` otherwise).
    pub fn device(&self, device_id: u32) -> Result<Driver, AclError> {
        if device_id >= self.device_count()? {
            return Err(AclError::RT_INVALID_DEVICEID);
        }
        let device = i32::try_from(device_id).map_err(|_| AclError::RT_INVALID_DEVICEID)?;
        let driver = Driver {
            rt: Arc::clone(&self.inner),
            device,
        };
        driver.enter()?;
        Ok(driver)
    }
}
