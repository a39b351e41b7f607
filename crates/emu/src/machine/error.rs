//! Why a process could not join a machine.

use aclmem_core::AclError;

use super::MAX_PROCS;
use crate::config::EmuConfig;
use crate::errors::Situation;

/// Why a process could not join a machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JoinError {
    /// The name is not 1–64 characters of `[A-Za-z0-9._-]`.
    BadName(String),
    /// The machine runs with another configuration.
    ConfigMismatch {
        /// The machine's name.
        machine: String,
        /// What the machine runs.
        running: Box<EmuConfig>,
        /// What this process asked for.
        requested: Box<EmuConfig>,
    },
    /// The configuration itself is unusable.
    BadConfig(String),
    /// Every process slot of the machine is taken.
    Full,
    /// The machine file could not be created or mapped.
    Io(String),
    /// The machine's directory, file or state is not what this user's
    /// emulator made (another user's, a link, corrupt): refused.
    Unsafe(String),
}

impl JoinError {
    /// The code `aclInit` answers.
    pub fn code(&self) -> AclError {
        match self {
            JoinError::ConfigMismatch { .. } => Situation::ConfigMismatch.code(),
            JoinError::BadName(_) | JoinError::BadConfig(_) => AclError::INVALID_PARAM,
            JoinError::Full => Situation::TooManyProcesses.code(),
            JoinError::Io(_) => AclError::RT_RESOURCE_ALLOC_FAIL,
            JoinError::Unsafe(_) => AclError::RT_NO_PERMISSION,
        }
    }
}

impl std::fmt::Display for JoinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JoinError::BadName(n) => write!(
                f,
                "machine name `{n}` must be 1 to 64 characters of A-Z a-z 0-9 . _ -"
            ),
            JoinError::ConfigMismatch {
                machine,
                running,
                requested,
            } => write!(
                f,
                "machine `{machine}` runs {running}; this process asks for {requested} \
                 (use the same ACLMEM_EMU_* settings, or another ACLMEM_EMU_MACHINE)"
            ),
            JoinError::BadConfig(e) => f.write_str(e),
            JoinError::Full => write!(f, "the machine has {MAX_PROCS} processes already"),
            JoinError::Io(e) => write!(f, "cannot create the machine's shared state: {e}"),
            JoinError::Unsafe(e) => write!(f, "refusing the machine's files: {e}"),
        }
    }
}

impl std::error::Error for JoinError {}
