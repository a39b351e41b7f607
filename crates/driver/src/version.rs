//! Which CANN release is installed, and so which rules apply.
//!
//! In order: the `ACLMEM_CANN` override; the library's own
//! `aclsysGetCANNVersion(ACL_PKG_NAME_CANN)` (present in every release
//! aclmem models, deprecated from 8.5); the toolkit's version files
//! (`share/info/runtime/version.info`, then `version.cfg`) under
//! `$ASCEND_HOME_PATH`, `$ASCEND_TOOLKIT_HOME` and the directory above the
//! loaded library's `lib64`. Facts and sources: `docs/facts.md`, "Version
//! queries".

use std::ffi::CStr;
use std::fmt;
use std::path::{Path, PathBuf};

use aclmem_core::{AclError, CannVersion};

/// Environment variable that names the CANN release to assume (`8.3`,
/// `8.3.RC1`, `9.0.0`), overriding detection.
pub const CANN_OVERRIDE: &str = "ACLMEM_CANN";

/// Where the installed release was learnt from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CannSource {
    /// The `ACLMEM_CANN` environment variable.
    Override,
    /// `aclsysGetCANNVersion` of the loaded library.
    LibraryCall,
    /// A version file of the toolkit.
    VersionFile(PathBuf),
}

impl fmt::Display for CannSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CannSource::Override => write!(f, "${CANN_OVERRIDE}"),
            CannSource::LibraryCall => f.write_str("aclsysGetCANNVersion"),
            CannSource::VersionFile(p) => write!(f, "{}", p.display()),
        }
    }
}

/// The installed CANN release and the rules aclmem applies to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetectedCann {
    /// The release string as found (`"8.3.RC1"`).
    pub release: String,
    /// The modelled version whose rules apply: the release itself, or the
    /// newest modelled version for a newer release. `None` for a release
    /// aclmem does not model (older than 8.0).
    pub rules: Option<CannVersion>,
    /// Where it was found.
    pub source: CannSource,
}

impl DetectedCann {
    pub(crate) fn new(release: String, source: CannSource) -> DetectedCann {
        DetectedCann {
            rules: CannVersion::for_installed(&release),
            release,
            source,
        }
    }

    /// The rules version, or 207000 for a release aclmem does not model.
    pub fn rules_or_err(&self) -> Result<CannVersion, AclError> {
        self.rules.ok_or(AclError::RT_FEATURE_NOT_SUPPORT)
    }
}

/// The release string from an `aclCANNPackageVersion.version` field.
pub(crate) fn from_c_field(field: &[std::ffi::c_char]) -> Option<String> {
    let bytes: Vec<u8> = field.iter().map(|&c| c as u8).collect();
    let text = CStr::from_bytes_until_nul(&bytes)
        .ok()?
        .to_str()
        .ok()?
        .trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The value of the first `key=` line of a `key=value` file.
fn key_value(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
    })
}

/// `runtime_running_version=[7.6.0.1.220:8.0.0]` → `8.0.0`.
fn from_version_cfg(text: &str) -> Option<String> {
    let value = key_value(text, "runtime_running_version")?;
    let inner = value.trim_start_matches('[').trim_end_matches(']');
    let (_, cann) = inner.split_once(':')?;
    let cann = cann.trim();
    (!cann.is_empty()).then(|| cann.to_owned())
}

/// The toolkit directories to look in, in order.
pub(crate) fn toolkit_dirs(library: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"]
        .into_iter()
        .filter_map(std::env::var_os)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .collect();
    // `<toolkit>/lib64/libascendcl.so` → `<toolkit>`.
    if let Some(toolkit) = library.parent().and_then(Path::parent) {
        dirs.push(toolkit.to_path_buf());
    }
    dirs
}

/// The release recorded in the version files under `dirs`.
pub(crate) fn from_files(dirs: &[PathBuf]) -> Option<DetectedCann> {
    for dir in dirs {
        let info = dir.join("share/info/runtime/version.info");
        if let Some(v) = std::fs::read_to_string(&info)
            .ok()
            .and_then(|t| key_value(&t, "Version"))
        {
            return Some(DetectedCann::new(v, CannSource::VersionFile(info)));
        }
        let cfg = dir.join("version.cfg");
        if let Some(v) = std::fs::read_to_string(&cfg)
            .ok()
            .and_then(|t| from_version_cfg(&t))
        {
            return Some(DetectedCann::new(v, CannSource::VersionFile(cfg)));
        }
    }
    None
}

/// The `ACLMEM_CANN` override, if set: a modelled version or 100000.
pub(crate) fn from_override() -> Option<Result<DetectedCann, AclError>> {
    let value = std::env::var(CANN_OVERRIDE)
        .ok()
        .filter(|v| !v.is_empty())?;
    Some(match CannVersion::parse(&value) {
        Ok(_) => Ok(DetectedCann::new(value, CannSource::Override)),
        Err(_) => Err(AclError::INVALID_PARAM),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_files_parse() {
        assert_eq!(
            key_value("Version=8.5.0-beta.1\nversion_dir=8.5\n", "Version"),
            Some("8.5.0-beta.1".into())
        );
        assert_eq!(
            from_version_cfg("# version: 1.0\nruntime_running_version=[7.6.0.1.220:8.0.0]\n"),
            Some("8.0.0".into())
        );
        assert_eq!(from_version_cfg("runtime_running_version=[]"), None);
        let d = DetectedCann::new("9.2.0".into(), CannSource::LibraryCall);
        assert_eq!(d.rules, Some(CannVersion::V9_1), "newer: the newest rules");
        let d = DetectedCann::new("7.0.0".into(), CannSource::LibraryCall);
        assert_eq!(d.rules_or_err(), Err(AclError::RT_FEATURE_NOT_SUPPORT));
    }

    #[test]
    fn files_are_found_under_a_toolkit_directory() {
        let dir =
            std::env::temp_dir().join(format!("aclmem-driver-version-{}", std::process::id()));
        let info = dir.join("share/info/runtime");
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(info.join("version.info"), "Version=8.3.RC1\n").unwrap();
        let found = from_files(std::slice::from_ref(&dir)).unwrap();
        assert_eq!(found.rules, Some(CannVersion::V8_3));
        assert_eq!(found.release, "8.3.RC1");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(from_files(&[dir]), None);
    }
}
