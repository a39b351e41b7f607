//! One physical handle mapped at two virtual addresses on an emulated Atlas
//! A2: bytes written through one mapping are read through the other.
//!
//! Run with `cargo run -p aclmem --example alias --features emu`.

use aclmem::emu::Emulator;
use aclmem::hal::Session;
use aclmem::{AlignedSize, AtlasA2, Device, HbmHuge, MIB, PhysicalMemProp, Product};

fn main() -> Result<(), aclmem::AclError> {
    let emu = Emulator::preset(Product::AtlasA2);
    println!(
        "emulated {} ({}), {} devices",
        emu.config().soc_name,
        emu.product(),
        emu.config().devices
    );
    {
        let session = Session::<_, AtlasA2>::new(&emu)?;

        // 2 MiB of HBM on device 0: allowed on A2, checked at compile time.
        let prop = PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0);
        let memory = session.malloc(prop, AlignedSize::new::<{ 2 * MIB }>())?;
        println!("allocated {:?}", memory);

        // One reservation, the same handle mapped twice.
        let range = session.reserve(4 * MIB)?;
        let first = range.map(0, &memory)?;
        let second = range.map(2 * MIB, &memory)?;
        println!(
            "mapped handle {:#x} at {:#x} and {:#x}",
            memory.handle().0,
            first.addr().get(),
            second.addr().get()
        );

        let message = b"hello from the first mapping";
        emu.write(first.addr().get(), message)?;
        let mut seen = vec![0u8; message.len()];
        emu.read(second.addr().get(), &mut seen)?;
        println!(
            "wrote {:?} at {:#x}, read {:?} at {:#x}",
            String::from_utf8_lossy(message),
            first.addr().get(),
            String::from_utf8_lossy(&seen),
            second.addr().get()
        );
        assert_eq!(&seen, message, "the two mappings alias");

        // Clean up explicitly, in the only order that compiles.
        first.unmap()?;
        second.unmap()?;
        range.release()?;
        memory.free()?;
        if let Some(e) = session.take_deferred_error() {
            return Err(e);
        }
    }
    let leaks = emu.leak_report();
    println!("leak report: {leaks}");
    assert!(leaks.is_empty());
    Ok(())
}
