//! Real torch_npu on aclmem's emulated CANN libraries: a virtual
//! environment with torch and the newest torch_npu from the package
//! registry (`tests/torch_npu/requirements.txt`), kept under
//! `target/torch-venv` between runs (downloads cached in
//! `target/pip-cache`), then the scenarios of `tests/torch_npu` under
//! `aclmem run`.
//!
//! On x86_64 the registry's torch is the CUDA build; the test-only
//! workaround it needs (`tests/torch_npu/cuda_build_workaround.py`) is
//! applied to this environment's copy of torch, never to anything aclmem
//! ships.

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::workspace::{Result, run, target_dir, workspace_root};

/// The virtual environment (created, or brought up to date with the
/// requirements, when they changed).
pub(crate) fn ensure_venv(sh: &Shell) -> Result<PathBuf> {
    let venv = target_dir().join("torch-venv");
    let tests = workspace_root().join("tests").join("torch_npu");
    let requirements = tests.join("requirements.txt");
    let wanted = std::fs::read_to_string(&requirements).map_err(|e| e.to_string())?;
    let stamp = venv.join("aclmem-requirements.txt");
    let python = venv.join("bin").join("python");
    if !python.exists() {
        let python3 = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        run(cmd!(sh, "{python3} -m venv {venv}"))
            .map_err(|e| format!("{e} (on Debian/Ubuntu: apt-get install python3-venv)"))?;
    }
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(wanted.as_str()) {
        let cache = target_dir().join("pip-cache");
        let _cache = sh.push_env("PIP_CACHE_DIR", &cache);
        run(cmd!(
            sh,
            "{python} -m pip install --quiet --disable-pip-version-check -r {requirements}"
        ))?;
        std::fs::write(&stamp, &wanted).map_err(|e| e.to_string())?;
    }
    // TEST-ONLY: the CUDA build of torch registers torch_npu's allocator
    // keys too (see the script); idempotent, and a no-op on a CPU build.
    let site = cmd!(
        sh,
        "{python} -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'"
    )
    .read()
    .map_err(|e| e.to_string())?;
    let workaround = tests.join("cuda_build_workaround.py");
    run(cmd!(sh, "{python} {workaround} {site}"))?;
    Ok(venv)
}

/// Builds the test's pluggable allocator (vllm-ascend's sleep-mode
/// pattern, in C against the shipped headers) beside the library.
fn build_allocator(sh: &Shell, lib: &Path) -> Result<PathBuf> {
    let root = workspace_root();
    let source = root.join("tests/torch_npu/camem_allocator.c");
    let include = root.join("crates/emu-capi/include");
    let dir = lib.parent().ok_or("the library has no directory")?;
    let out = target_dir().join("torch-npu");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let so = out.join("camem_allocator.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    run(cmd!(
        sh,
        "{cc} -shared -fPIC -O2 -Wall -Wextra -Werror -I {include} -o {so} {source} -L {dir} -lascendcl"
    ))?;
    Ok(so)
}

/// The torch_npu scenarios, each asserted, against the library at `lib`;
/// `pyacl` is a Python with the aclmem package installed, for the tests that
/// run a pyACL script and read its trace with torch's code.
pub(crate) fn test(sh: &Shell, lib: &Path, pyacl: &Path) -> Result<()> {
    let venv = ensure_venv(sh)?;
    let allocator = build_allocator(sh, lib)?;
    let aclmem = lib.with_file_name("aclmem");
    let python = venv.join("bin").join("python");
    let tests = workspace_root().join("tests").join("torch_npu");
    let _alloc = sh.push_env("CAMEM_ALLOCATOR", &allocator);
    let _cli = sh.push_env("ACLMEM_CLI", &aclmem);
    let _pyacl = sh.push_env("ACLMEM_PYACL_PYTHON", pyacl);
    let _quiet_pip = sh.push_env("PYTHONDONTWRITEBYTECODE", "1");
    let _dir = sh.push_dir(&tests);
    run(cmd!(
        sh,
        "{aclmem} run --lib {lib} -- {python} -m pytest -q -p no:cacheprovider ."
    ))
}
