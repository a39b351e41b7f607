//! The sanitizer sits in front of every function of the catalogue
//! (`aclmem_sys::FUNCTIONS`): each is exported by `libaclmem_sanitizer.so`
//! itself, checked by a hook or forwarded unchanged. The forwarding is
//! generated from the catalogue's rows, so a function added there is
//! exported without a line in the sanitizer; this test fails if one is
//! not.
//!
//! Needs `cargo build -p aclmem-sanitizer` (the library in the target
//! directory).

use std::ffi::{CStr, CString};

#[test]
fn every_function_of_the_catalogue_is_the_sanitizers_own_export() {
    let path = aclmem_tests::sanitizer_path();
    let c_path = CString::new(path.to_str().expect("UTF-8 path")).unwrap();
    // SAFETY: a NUL-terminated path; the library's constructors do nothing
    // before `aclInit` (it forwards lazily).
    let lib = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
    if lib.is_null() {
        // SAFETY: dlerror's text is valid until the next dl call.
        let why = unsafe { CStr::from_ptr(libc::dlerror()) };
        panic!(
            "{} does not load: {}",
            path.display(),
            why.to_string_lossy()
        );
    }
    let mut missing = Vec::new();
    for (name, _) in aclmem_sys::FUNCTIONS {
        let c_name = CString::new(*name).unwrap();
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(lib, c_name.as_ptr()) };
        // SAFETY: `info` is a live local dladdr fills in.
        let own = !p.is_null()
            && unsafe {
                let mut info: libc::Dl_info = std::mem::zeroed();
                libc::dladdr(p, &mut info) != 0
                    && !info.dli_fname.is_null()
                    && CStr::from_ptr(info.dli_fname)
                        .to_string_lossy()
                        .ends_with("libaclmem_sanitizer.so")
            };
        if !own {
            missing.push(*name);
        }
    }
    assert!(
        missing.is_empty(),
        "not exported by the sanitizer: {missing:?}"
    );
    assert!(!aclmem_sys::FUNCTIONS.is_empty());
}
