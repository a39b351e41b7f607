//! Checking the aarch64 wheel on x86_64 under qemu: installed for Debian's
//! aarch64 Python, pyACL and a C extension sharing one emulator, and two
//! HCCL ranks over the wheel's aarch64 Gloo engine.

use std::path::Path;

use xshell::{Shell, cmd};

use super::{GLIBC, tools};
use crate::workspace::{Result, run};

/// Debian's packages of an aarch64 Python with what `ctypes` and the
/// standard library need, for the interpreter's version.
fn python_packages(version: &str) -> Vec<String> {
    [
        format!("python{version}-minimal:arm64"),
        format!("libpython{version}-minimal:arm64"),
        format!("libpython{version}-stdlib:arm64"),
        "libffi8:arm64".into(),
        "zlib1g:arm64".into(),
        "libexpat1:arm64".into(),
    ]
    .into()
}

/// Installs the aarch64 `wheel` for Debian's aarch64 Python (unpacked from
/// its packages, not installed) and uses it under qemu: the module imports
/// and binds to the wheel's library, and a C extension built with the
/// cross compiler against the wheel's headers shares one emulator with
/// pyACL through three sleep/wake cycles.
pub(super) fn check_under_qemu(sh: &Shell, wheel: &Path) -> Result<()> {
    let root = crate::workspace::target_dir().join("wheel-qemu");
    // Debian's aarch64 Python of the same release as the host's.
    let version = std::process::Command::new("python3")
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .map_err(|e| e.to_string())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())?;
    let sysroot = root.join(format!("python{version}"));
    let python = sysroot.join("usr/bin").join(format!("python{version}"));
    if !python.exists() {
        let debs = root.join("debs");
        sh.create_dir(&debs).map_err(|e| e.to_string())?;
        {
            let _in = sh.push_dir(&debs);
            let packages = python_packages(&version);
            run(cmd!(sh, "apt-get download -q {packages...}"))?;
        }
        for deb in std::fs::read_dir(&debs)
            .map_err(|e| e.to_string())?
            .flatten()
        {
            let deb = deb.path();
            run(cmd!(sh, "dpkg -x {deb} {sysroot}"))?;
        }
    }
    let site = root.join("site");
    crate::workspace::remove_dir_if_present(&site)?;
    let pip = tools().join("bin").join("pip");
    let tag = format!("manylinux_{}_aarch64", GLIBC.replace('.', "_"));
    run(cmd!(
        sh,
        "{pip} install --quiet --target {site} --platform {tag} --python-version {version} --implementation cp --only-binary=:all: --no-deps {wheel}"
    ))?;
    let kit = crate::workspace::workspace_root().join("python/tests/kit");
    let package = site.join("aclmem");
    let camem = root.join("camem.so");
    let (src, include, lib) = (
        kit.join("camem.c"),
        package.join("include"),
        package.join("_lib"),
    );
    run(cmd!(
        sh,
        "aarch64-linux-gnu-gcc -shared -fPIC -std=c11 -Wall -Werror -I{include} {src} -o {camem} -L{lib} -lascendcl"
    ))?;
    let libs = [
        "/usr/aarch64-linux-gnu/lib".to_owned(),
        sysroot
            .join("usr/lib/aarch64-linux-gnu")
            .display()
            .to_string(),
        sysroot.join("lib/aarch64-linux-gnu").display().to_string(),
        lib.display().to_string(),
    ]
    .join(":");
    let script = kit.join("sleep_wake.py");
    let _home = sh.push_env("PYTHONHOME", sysroot.join("usr"));
    let _path = sh.push_env("PYTHONPATH", &site);
    let _lib = sh.push_env("ACLMEM_ASCENDCL", "");
    let _machine = sh.push_env(
        "ACLMEM_EMU_MACHINE",
        format!("wheel-qemu-{}", std::process::id()),
    );
    for order in ["python-first", "c-first"] {
        let out = cmd!(
            sh,
            "qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH={libs} {python} {script} {camem} {order}"
        )
        .read()
        .map_err(|e| format!("the aarch64 wheel under qemu ({order}): {e}"))?;
        let bound = format!(
            "backend: emulator ({})",
            lib.join("libascendcl.so").display()
        );
        if !out.contains(&bound) || !out.contains("3 cycles, weights intact") {
            return Err(format!("the aarch64 wheel under qemu ({order}):\n{out}"));
        }
    }
    hccl_under_qemu(sh, &root, &include, &lib, &libs)?;
    eprintln!(
        "the aarch64 wheel works under qemu (Python {version}): pyACL + C extension, one emulator, \
         and HCCL over the wheel's Gloo engine on two ranks"
    );
    Ok(())
}

/// Two ranks of `tests/programs/hccl.c` (every collective and data type,
/// checked on the host), each an aarch64 process under qemu bound to the
/// wheel's library in `lib` (`libs` is their `LD_LIBRARY_PATH`): the
/// wheel's aarch64 engine loads and carries them. The aarch64 sysroot has
/// no Gloo, so nothing else could.
fn hccl_under_qemu(sh: &Shell, root: &Path, include: &Path, lib: &Path, libs: &str) -> Result<()> {
    let program = root.join("hccl");
    let src = crate::workspace::workspace_root().join("tests/programs/hccl.c");
    run(cmd!(
        sh,
        "aarch64-linux-gnu-gcc -std=c11 -O1 -Wall -Werror -I{include} {src} -o {program} -L{lib} -lascendcl"
    ))?;
    let root_info = root.join("hccl-root-info");
    let _ = std::fs::remove_file(&root_info);
    let machine = format!("wheel-qemu-hccl-{}", std::process::id());
    let ranks: Vec<_> = (0..2)
        .map(|rank| {
            std::process::Command::new("qemu-aarch64")
                .args(["-L", "/usr/aarch64-linux-gnu", "-E"])
                .arg(format!("LD_LIBRARY_PATH={libs}"))
                .arg(&program)
                .args([rank.to_string().as_str(), "2"])
                .arg(&root_info)
                .arg("all")
                .env("ACLMEM_EMU_MACHINE", &machine)
                .env("ACLMEM_EMU_DEVICES", "2")
                .env("ACLMEM_EMU_HBM", "1GiB")
                .env("ACLMEM_ASCENDCL", "")
                .env_remove("ACLMEM_GLOO_ENGINE")
                // A defect fails the check instead of hanging it.
                .env("HCCL_CONNECT_TIMEOUT", "120")
                .env("HCCL_EXEC_TIMEOUT", "120")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| format!("qemu-aarch64: {e}"))
        })
        .collect::<Result<_>>()?;
    for (rank, child) in ranks.into_iter().enumerate() {
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() || out.stdout != b"ok\n" {
            return Err(format!(
                "HCCL from the aarch64 wheel under qemu, rank {rank} ({:?}):\n{}{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let _ = std::fs::remove_file(&root_info);
    Ok(())
}
