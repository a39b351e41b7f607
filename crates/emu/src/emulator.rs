//! [`Emulator`]: one process on an emulated machine. Its calls are
//! implemented in `crate::calls`, one module per area of the API.

use std::fmt;
use std::sync::Arc;

use aclmem_core::{AclError, CannVersion, Product, RunMode};
use aclmem_hal::{DeviceInfo, ErrorType};

use crate::config::EmuConfig;
use crate::env::OpsMode;
use crate::machine::{JoinError, PoolId};
use crate::process::{Process, Result};

/// One process on an emulated machine. Implements every `aclmem-hal`
/// trait; `Send + Sync`.
#[derive(Clone)]
pub struct Emulator {
    pub(crate) process: Arc<Process>,
    /// What the device does with operators and the data of copies
    /// ([`OpsMode`]): this handle's, `ACLMEM_EMU_OPS`'s at `aclInit`.
    pub(crate) ops: OpsMode,
}

impl fmt::Debug for Emulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.process.machine();
        f.debug_struct("Emulator")
            .field("machine", &m.name.as_deref().unwrap_or("(private)"))
            .field("soc_name", &m.config.soc_name)
            .field("product", &m.product)
            .field("run_mode", &m.config.run_mode)
            .field("cann", &m.config.cann)
            .field("pid", &self.process.pid())
            .field("ops", &self.ops)
            .finish()
    }
}

impl Emulator {
    /// A private machine built from `config`, inside this process, and its
    /// first process. An unusable configuration is
    /// `ACL_ERROR_INVALID_PARAM`.
    pub fn new(config: EmuConfig) -> std::result::Result<Emulator, AclError> {
        Ok(Emulator {
            process: crate::process::join::private(&config)?,
            ops: OpsMode::Compute,
        })
    }

    /// The private preset machine of `product`, in EP form.
    pub fn preset(product: Product) -> Emulator {
        Emulator::new(EmuConfig::preset(product)).expect("presets are valid")
    }

    /// Joins the named machine `name` (creating it with `config` if no
    /// process of it is alive), as this OS process. Joining a machine this
    /// process joined already returns the same process.
    pub fn join(name: &str, config: &EmuConfig) -> std::result::Result<Emulator, JoinError> {
        Ok(Emulator {
            process: crate::process::join::join(name, config)?,
            ops: OpsMode::Compute,
        })
    }

    /// Joins the machine the environment names (`ACLMEM_EMU_MACHINE`, or
    /// [`DEFAULT_MACHINE`](crate::DEFAULT_MACHINE)) with the configuration
    /// the environment describes ([`EmuConfig::from_env`]), seeing the
    /// devices `ASCEND_RT_VISIBLE_DEVICES` leaves it
    /// ([`env::visible_devices`](crate::env::visible_devices)), in the
    /// mode `ACLMEM_EMU_OPS` names ([`env::ops`](crate::env::ops)): what
    /// the emulated C library does at `aclInit`.
    pub fn join_from_env() -> std::result::Result<Emulator, JoinError> {
        let config = EmuConfig::from_env().map_err(|e| JoinError::BadConfig(e.to_string()))?;
        let ops = crate::env::ops().map_err(JoinError::BadConfig)?;
        let emu = Emulator::join(&crate::env::machine_name(), &config)?.with_ops(ops);
        // A fresh process: the cell is empty, so this cannot fail.
        let _ = emu.set_visible_devices(crate::env::visible_devices(config.devices));
        Ok(emu)
    }

    /// Another (simulated) process on the same private machine: shared
    /// capacity and shareable handles, separate handles and mappings. As on
    /// the real runtime, a process cannot import what it exported itself.
    /// On a named machine, processes are real: `ACL_ERROR_API_NOT_SUPPORT`.
    pub fn spawn_process(&self) -> std::result::Result<Emulator, AclError> {
        Ok(Emulator {
            process: self.process.spawn_sibling()?,
            ops: self.ops,
        })
    }

    /// This handle in `mode`: in [`OpsMode::Plan`], copies and sets
    /// through it move no data (device memory reads as zeros and is never
    /// written, so its pages stay unbacked); the callers of operators ask
    /// [`Emulator::ops`] before computing.
    pub fn with_ops(mut self, mode: OpsMode) -> Emulator {
        self.ops = mode;
        self
    }

    /// The mode of this handle ([`Emulator::with_ops`]).
    pub fn ops(&self) -> OpsMode {
        self.ops
    }

    /// The configuration.
    pub fn config(&self) -> &EmuConfig {
        &self.process.machine().config
    }

    /// The emulated product.
    pub fn product(&self) -> Product {
        self.process.machine().product
    }

    /// The machine's name (`None` for a private machine).
    pub fn machine_name(&self) -> Option<&str> {
        self.process.machine().name.as_deref()
    }

    /// This process's pid (to whitelist with `set_pids`;
    /// `aclrtDeviceGetBareTgid`).
    pub fn pid(&self) -> i32 {
        self.process.pid()
    }

    /// Leaves the machine now, as process exit does: everything this
    /// process holds is torn down and its capacity returned. Every later
    /// call of this process answers `ACL_ERROR_UNINITIALIZE`.
    pub fn leave(&self) {
        self.process.leave();
    }

    /// Applies `ASCEND_RT_VISIBLE_DEVICES` as read by
    /// [`env::parse_visible_devices`](crate::env::parse_visible_devices):
    /// from now on device ids in calls are user ids. Once per process, before
    /// any device is set (the runtime reads it once, when it starts); a
    /// second call is 100000.
    pub fn set_visible_devices(&self, visible: crate::env::VisibleDevices) -> Result<()> {
        self.process.set_visible_devices(visible)
    }

    /// Counts one more call for the `index`-th `@machine` item of the fault
    /// spec, for every process of the machine together; the count, from 1.
    pub fn count_machine_fault(&self, index: usize) -> u64 {
        self.process.machine().region.count_fault_call(index)
    }

    /// Caps a pool's capacity, machine-wide (what is allocated stays).
    pub fn set_capacity(&self, pool: PoolId, bytes: usize) -> std::result::Result<(), AclError> {
        if let PoolId::Device(d) | PoolId::Huge1G(d) = pool {
            self.process.device(d)?;
        }
        self.process
            .machine()
            .region
            .set_capacity(pool, bytes as u64);
        Ok(())
    }

    /// The arenas (start, length) this process reserved: what a forked
    /// child loses.
    pub fn arenas(&self) -> Vec<(usize, usize)> {
        self.process.arenas()
    }
}

impl ErrorType for Emulator {
    type Error = AclError;
}

impl DeviceInfo for Emulator {
    fn platform(&self) -> Result<(Product, RunMode)> {
        Ok((self.product(), self.config().run_mode))
    }
    fn cann(&self) -> Result<CannVersion> {
        Ok(self.config().cann)
    }
    fn device_count(&self) -> Result<u32> {
        self.process.device_count()
    }
}
