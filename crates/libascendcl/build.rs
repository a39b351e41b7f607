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

use std::path::PathBuf;

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libascendcl.so");
    println!("cargo:rerun-if-changed=build.rs");
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out.
    let Some(profile) = out.ancestors().nth(3) else {
        return;
    };
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
