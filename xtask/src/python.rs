//! The Python package (`python/`): installed with pip into a virtual
//! environment of its own, as a user installs it from a clone, and tested
//! with pytest against the emulated machine.

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::workspace::{Result, run, target_dir};

/// The virtual environment CI uses (created when missing).
pub(crate) fn venv() -> PathBuf {
    target_dir().join("py-venv")
}

fn python3() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Creates the venv with maturin and pytest from the package registry.
pub(crate) fn ensure_venv(sh: &Shell) -> Result<PathBuf> {
    let venv = venv();
    let pip = venv.join("bin").join("pip");
    if !pip.exists() {
        let python = python3();
        run(cmd!(sh, "{python} -m venv {venv}"))
            .map_err(|e| format!("{e} (on Debian/Ubuntu: apt-get install python3-venv)"))?;
    }
    run(cmd!(sh, "{pip} install --quiet --upgrade maturin pytest"))?;
    Ok(venv)
}

/// `pip install ./python` into [`venv`], as the wheel ships it: the kit
/// built beside `lib`. Returns the venv's Python, which imports `aclmem`
/// and its pyACL (`acl`).
pub(crate) fn install(sh: &Shell, lib: &Path) -> Result<PathBuf> {
    let venv = ensure_venv(sh)?;
    let pip = venv.join("bin").join("pip");
    let cargo = crate::workspace::cargo();
    let packages: Vec<String> = crate::wheels::kit_packages()
        .flat_map(|p| ["-p".into(), p.to_owned()])
        .collect();
    run(cmd!(sh, "{cargo} build {packages...}"))?;
    crate::wheels::stage_kit(sh, lib.parent().ok_or("the library has no directory")?)?;
    // The native module in the dev profile, as the kit beside it: twice as
    // quick to build, and the release build is what the wheel steps build
    // and check.
    let _profile = sh.push_env("MATURIN_PEP517_ARGS", "--profile dev");
    run(cmd!(
        sh,
        "{pip} install --quiet --force-reinstall --no-deps ./python"
    ))?;
    Ok(venv.join("bin").join("python"))
}

/// [`install`], then pytest with the emulated library at `lib` (the tests
/// compile a C program against it). Returns the venv's Python.
pub(crate) fn test(sh: &Shell, lib: &Path) -> Result<PathBuf> {
    let python = install(sh, lib)?;
    let pytest = venv().join("bin").join("pytest");
    let _lib = sh.push_env("ACLMEM_ASCENDCL", lib);
    // The sanitizer tests run `aclmem sanitize`, built beside the library.
    let cli = lib.with_file_name("aclmem");
    let _cli = sh.push_env("ACLMEM_CLI", &cli);
    let _dir = sh.push_dir("python");
    run(cmd!(sh, "{pytest} -q -p no:cacheprovider tests"))?;
    Ok(python)
}
