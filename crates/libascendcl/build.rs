//! Names the library by its soname, `libascendcl.so`, as CANN's is named:
//! a program or extension that links `-lascendcl` then binds to this one
//! library however it was loaded first (by path, from a wheel, through
//! `$ACLMEM_ASCENDCL`), so a process has one emulator.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libascendcl.so");
}
