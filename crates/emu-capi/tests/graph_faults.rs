//! Fault specs reach the graph functions (`ACLMEM_EMU_FAULTS`): an
//! injected failure of `aclmdlRICaptureEnd` ends the capture, as the
//! runtime's failing end does, and the next capture of the stream works.

mod common;

use std::ptr;

use aclmem_emu_capi::*;
use common::*;

#[test]
fn an_injected_capture_end_failure_ends_the_capture() {
    set("ACLMEM_EMU_FAULTS", "aclmdlRICaptureEnd@1=507903");
    init("graph-faults", "Ascend910B1", "9.0");
    let mut s = ptr::null_mut();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, 0);
    let (mut status, mut model) = (9u32, ptr::null_mut());
    assert_eq!(aclmdlRICaptureBegin(s, 0), 0);
    // SAFETY: live local out parameters.
    assert_eq!(unsafe { aclmdlRICaptureEnd(s, &mut model) }, 507_903);
    assert!(model.is_null());
    // SAFETY: live local out parameters.
    let info = unsafe { aclmdlRICaptureGetInfo(s, &mut status, &mut model) };
    assert_eq!(info, 0);
    assert_eq!(status, 0, "the capture is over");
    assert_eq!(aclrtSynchronizeStream(s), 0);
    assert_eq!(aclmdlRICaptureBegin(s, 0), 0);
    // SAFETY: as above.
    assert_eq!(unsafe { aclmdlRICaptureEnd(s, &mut model) }, 0);
    assert!(!model.is_null());
    assert_eq!(aclmdlRIDestroy(model), 0);
    assert_eq!(aclrtDestroyStream(s), 0);
    finalize();
}
