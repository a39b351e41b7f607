//! ACL graph capture in the engine: where synchronous calls are refused,
//! by capture mode and thread (the runtime's `IsCaptureModeSupport`), the
//! products without capture, and what a replay runs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use aclmem_core::{AclError, Product};
use aclmem_emu::{CaptureStatus, Emulator, TaskFn};

const GLOBAL: u32 = 0;
const THREAD_LOCAL: u32 = 1;
const RELAXED: u32 = 2;

fn emu(product: Product) -> (Emulator, u64) {
    let emu = Emulator::preset(product);
    emu.set_device(0).unwrap();
    let s = emu.create_stream(0).unwrap();
    (emu, s)
}

/// Whether another thread (with a device set) may make a synchronous call
/// while `emu` captures.
fn other_thread_may_sync(emu: &Emulator) -> Result<(), AclError> {
    let e = emu.clone();
    std::thread::spawn(move || {
        e.set_device(0).unwrap();
        e.capture_permits_sync()
    })
    .join()
    .unwrap()
}

#[test]
fn the_capture_mode_decides_where_synchronous_calls_are_refused() {
    for (mode, here, there) in [
        (
            GLOBAL,
            Err(AclError::RT_CAPTURE_MODE_NOT_SUPPORT),
            Err(AclError::RT_CAPTURE_MODE_NOT_SUPPORT),
        ),
        (
            THREAD_LOCAL,
            Err(AclError::RT_CAPTURE_MODE_NOT_SUPPORT),
            Ok(()),
        ),
        (RELAXED, Ok(()), Ok(())),
    ] {
        let (emu, s) = emu(Product::AtlasA2);
        assert_eq!(emu.capture_permits_sync(), Ok(()));
        emu.capture_begin(s, mode).unwrap();
        assert_eq!(emu.capture_permits_sync(), here, "mode {mode}, this thread");
        assert_eq!(
            other_thread_may_sync(&emu),
            there,
            "mode {mode}, another thread"
        );
        // This thread relaxed: allowed whatever the capture's mode.
        assert_eq!(emu.capture_exchange_mode(RELAXED), Ok(GLOBAL));
        assert_eq!(emu.capture_permits_sync(), Ok(()));
        assert_eq!(emu.capture_exchange_mode(GLOBAL), Ok(RELAXED));
        let model = emu.capture_end(s).unwrap();
        assert_eq!(emu.capture_permits_sync(), Ok(()));
        emu.destroy_model(model).unwrap();
    }
}

#[test]
fn a_capture_ended_in_another_thread_fails_and_is_over_unless_relaxed() {
    for (mode, answer) in [
        (GLOBAL, Err(AclError::RT_STREAM_CAPTURE_WRONG_THREAD)),
        (RELAXED, Ok(())),
    ] {
        let (emu, s) = emu(Product::AtlasA2);
        emu.capture_begin(s, mode).unwrap();
        let e = emu.clone();
        let ended = std::thread::spawn(move || e.capture_end(s).map(drop))
            .join()
            .unwrap();
        assert_eq!(ended, answer, "mode {mode}");
        assert_eq!(emu.capture_info(s).unwrap().0, CaptureStatus::None);
    }
}

#[test]
fn a_replay_runs_the_recorded_tasks_in_order_each_time() {
    let (emu, s) = emu(Product::AtlasA2);
    let log = Arc::new(AtomicUsize::new(0));
    emu.capture_begin(s, GLOBAL).unwrap();
    for k in 1..=3 {
        let log = log.clone();
        let work: Arc<TaskFn> = Arc::new(move |_| {
            // Each task appends its digit: the order is visible.
            let v = log.load(Ordering::SeqCst);
            log.store(v * 10 + k, Ordering::SeqCst);
            Ok(())
        });
        assert!(
            emu.capture_record(s, "HOST_FUNC", || format!("task {k}"), work)
                .unwrap()
                .is_none()
        );
    }
    let model = emu.capture_end(s).unwrap();
    assert_eq!(log.load(Ordering::SeqCst), 0, "nothing ran while captured");
    emu.execute_model(model, s).unwrap();
    assert_eq!(log.load(Ordering::SeqCst), 123);
    emu.execute_model(model, s).unwrap();
    assert_eq!(log.load(Ordering::SeqCst), 123_123);
    let lines = emu.model_description(model).unwrap();
    assert_eq!(lines.len(), 4);
    assert!(lines[2].contains("HOST_FUNC task 2"), "{lines:?}");
    emu.destroy_model(model).unwrap();
    assert_eq!(emu.execute_model(model, s), Err(AclError::INVALID_PARAM));
}

#[test]
fn products_without_capture_refuse_it() {
    for (product, answer) in [
        (Product::AtlasA2, Ok(())),
        (Product::AtlasA3, Ok(())),
        (Product::Atlas200IA2, Err(AclError::RT_FEATURE_NOT_SUPPORT)),
        (
            Product::AtlasTraining,
            Err(AclError::RT_FEATURE_NOT_SUPPORT),
        ),
    ] {
        let (emu, s) = emu(product);
        assert_eq!(emu.capture_begin(s, GLOBAL), answer, "{product:?}");
    }
}

#[test]
fn two_threads_capture_two_streams_at_once() {
    let emu = Emulator::preset(Product::AtlasA2);
    let barrier = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (emu, barrier) = (emu.clone(), barrier.clone());
            std::thread::spawn(move || {
                emu.set_device(0).unwrap();
                let s = emu.create_stream(0).unwrap();
                emu.capture_begin(s, THREAD_LOCAL).unwrap();
                barrier.wait();
                let model = emu.capture_end(s).unwrap();
                emu.destroy_model(model).unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
