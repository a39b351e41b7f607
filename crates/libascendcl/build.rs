//! Names the library by its soname, `libascendcl.so`, as CANN's is named:
//! a program or extension that links `-lascendcl` then binds to this one
//! library however it was loaded first (by path, from a wheel, through
//! `$ACLMEM_ASCENDCL`), so a process has one emulator.
//!
//! Beside it in the target directory, the other CANN libraries a framework
//! links (`libhccl.so`, `libacl_op_compiler.so`, ...; the catalogue's
//! `Library::ALL`) are made symbolic links to it: the dynamic loader knows
//! a file it has loaded by its inode, so each name is this one object. A
//! program run with `LD_LIBRARY_PATH=target/<profile>` then finds them all,
//! as under `aclmem run`, which lays the same links out wherever the
//! library is.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libascendcl.so");
    println!("cargo:rerun-if-changed=build.rs");
    for f in ["gloo/engine.cc", "gloo/engine.h", "gloo/engine.map"] {
        println!("cargo:rerun-if-changed={f}");
    }
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out.
    let Some(profile) = out.ancestors().nth(3) else {
        return;
    };
    if let Err(e) = build_engine(&out, profile) {
        println!(
            "cargo:warning=the Gloo engine (libaclmem_gloo.so) is not built, so HCCL answers HCCL_E_NOT_SUPPORT: {e}"
        );
    }
    for library in aclmem_sys::catalogue::Library::ALL {
        let name = library.soname();
        let link = profile.join(name);
        if name == "libascendcl.so" || link.symlink_metadata().is_ok() {
            continue;
        }
        // Relative: the link stays right if the directory moves. A failure
        // (a read-only target directory) only leaves the names to
        // `aclmem run`.
        let _ = std::os::unix::fs::symlink("libascendcl.so", &link);
    }
}

/// Compiles `gloo/engine.cc` into `<profile>/libaclmem_gloo.so` with the
/// C++ compiler `cc` finds for the target, exporting only the engine's
/// table (a version script) and linking Gloo.
fn build_engine(out: &Path, profile: &Path) -> Result<(), String> {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").ok_or("no manifest dir")?)
        .join("gloo");
    let compiler = cc::Build::new()
        .cpp(true)
        .cargo_warnings(false)
        .cargo_metadata(false)
        .try_get_compiler()
        .map_err(|e| e.to_string())?;
    let object = out.join("libaclmem_gloo.so");
    let output = compiler
        .to_command()
        .args([
            "-std=c++17",
            "-O2",
            "-fPIC",
            "-shared",
            "-fvisibility=hidden",
        ])
        .arg(dir.join("engine.cc"))
        .arg("-o")
        .arg(&object)
        .arg(format!(
            "-Wl,--version-script={}",
            dir.join("engine.map").display()
        ))
        .args(["-Wl,-z,defs", "-lgloo"])
        .output()
        .map_err(|e| format!("cannot run the C++ compiler: {e}"))?;
    if !output.status.success() {
        let text = String::from_utf8_lossy(&output.stderr);
        let first = text
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("failed");
        return Err(format!(
            "{first} (Gloo's headers and library: apt-get install libgloo-dev)"
        ));
    }
    // A new file renamed over the old: a process that has the old one
    // loaded keeps its pages.
    let staged = profile.join(".libaclmem_gloo.so.new");
    std::fs::copy(&object, &staged)
        .and_then(|_| std::fs::rename(&staged, profile.join("libaclmem_gloo.so")))
        .map_err(|e| format!("cannot place the engine: {e}"))
}
