//! Two real processes share device memory through the typed API on one
//! emulated Atlas A2 machine.
//!
//! The parent joins a machine named after itself, allocates 4 MiB of HBM,
//! writes a message, exports it with the whitelist enforced, starts this
//! same program again as its child, whitelists the child's pid (the pid the
//! machine knows it by: the kernel's, not what the child says) and sends it
//! the shareable handle on stdin. The child joins the same machine and
//! imports the handle; the parent then frees its own handle (the child's
//! import keeps the memory alive), and the child maps it and reads the
//! message back.
//!
//! Run with `cargo run -p aclmem --example share --features emu`.

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};

use aclmem::emu::{EmuConfig, Emulator};
use aclmem::hal::{EXPORT_FLAG_DEFAULT, Exported, Session, ShareableHandle};
use aclmem::{AclError, AlignedSize, AtlasA2, Device, HbmHuge, MIB, PhysicalMemProp, Product};

const MESSAGE: &[u8] = b"written by the parent, read by the child";
const SIZE: AlignedSize<HbmHuge> = AlignedSize::new::<{ 4 * MIB }>();

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (Some("child"), Some(machine)) => child(&machine),
        _ => parent(),
    }
}

fn join(machine: &str) -> Result<Emulator, Error> {
    Ok(Emulator::join(
        machine,
        &EmuConfig::preset(Product::AtlasA2),
    )?)
}

fn parent() -> Result<(), Error> {
    let machine = format!("share-example-{}", std::process::id());
    let emu = join(&machine)?;
    let session = Session::<_, AtlasA2>::new(&emu)?;
    let exported = write_and_export(&session, &emu)?;
    println!(
        "parent {}: exported shareable handle {:#x} on machine `{machine}`",
        emu.pid(),
        exported.shareable().0
    );

    let mut child = Command::new(std::env::current_exe()?)
        .args(["child", &machine])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let child_pid = i32::try_from(child.id())?;
    exported.set_pids(&[child_pid])?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    writeln!(stdin, "{}", exported.shareable().0)?;
    let mut lines = std::io::BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let imported = lines.next().ok_or("the child ended early")??;
    println!("{imported}");
    // The child's import holds the memory from here on: free ours.
    exported.free().map_err(|e| e.into_error())?;
    println!("parent: freed its handle");
    writeln!(stdin, "freed")?;
    drop(stdin);
    for line in lines {
        println!("{}", line?);
    }
    let status = child.wait()?;
    if !status.success() {
        return Err(format!("the child failed: {status}").into());
    }
    session
        .take_deferred_error()
        .map_or(Ok(()), |e| Err(e.into()))
}

fn child(machine: &str) -> Result<(), Error> {
    let emu = join(machine)?;
    let session = Session::<_, AtlasA2>::new(&emu)?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    let shareable = ShareableHandle(line.trim().parse()?);
    let seen = import_and_read(&session, &emu, shareable, || {
        println!("child {}: imported {:#x}", emu.pid(), shareable.0);
        // Wait until the parent has freed its handle.
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
    })?;
    println!(
        "child {}: read {:?}",
        emu.pid(),
        String::from_utf8_lossy(&seen)
    );
    if seen != MESSAGE {
        return Err("the child read other bytes than the parent wrote".into());
    }
    Ok(())
}

type A2Session<'e> = Session<&'e Emulator, AtlasA2>;

/// Allocates, writes the message through a mapping, exports.
fn write_and_export<'s>(
    session: &'s A2Session<'_>,
    emu: &Emulator,
) -> Result<Exported<'s, &'s Emulator, HbmHuge>, AclError> {
    let memory = session.malloc(
        PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0),
        SIZE,
    )?;
    let range = session.reserve(SIZE.get())?;
    let mapping = range.map(0, &memory)?;
    emu.write(mapping.addr().get(), MESSAGE)?;
    mapping.unmap()?;
    range.release()?;
    Ok(memory.export(EXPORT_FLAG_DEFAULT)?)
}

/// Imports, calls `imported`, maps, reads the message, and tears
/// everything down.
fn import_and_read(
    session: &A2Session<'_>,
    emu: &Emulator,
    shareable: ShareableHandle,
    imported: impl FnOnce(),
) -> Result<Vec<u8>, AclError> {
    let memory = session.import(shareable, 0, SIZE)?;
    imported();
    let range = session.reserve(SIZE.get())?;
    let mapping = range.map(0, &memory)?;
    let mut seen = vec![0u8; MESSAGE.len()];
    emu.read(mapping.addr().get(), &mut seen)?;
    mapping.unmap()?;
    range.release()?;
    memory.free()?;
    Ok(seen)
}
