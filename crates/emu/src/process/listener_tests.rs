//! What an importer makes of the replies a broken or hostile exporter
//! could send: only the exact export, in a sealed pool file that holds it,
//! is a success; anything else is an error code, never a mapping.

use std::os::fd::OwnedFd;

use aclmem_core::AclError;

use super::{Reply, granted, refusal};
use crate::errors::Situation;
use crate::machine::{ExportInfo, ExportKind};

const MIB: u64 = 1 << 20;

fn expected() -> ExportInfo {
    ExportInfo {
        id: 0x1234_5678_9abc_def0,
        kind: ExportKind::Vmm,
        check_pid: true,
        exporter: (3, 7, 4242),
        pool: 1,
        offset: 2 * MIB,
        size: 2 * MIB,
        location: (0, 1),
        attr: 4,
        device: 0,
    }
}

fn sealed(len: u64) -> OwnedFd {
    crate::os::sys::new_pool_file("aclmem-test-reply", len).unwrap()
}

fn unsealed(len: u64) -> OwnedFd {
    let fd =
        rustix::fs::memfd_create("aclmem-test-reply", rustix::fs::MemfdFlags::CLOEXEC).unwrap();
    rustix::fs::ftruncate(&fd, len).unwrap();
    fd
}

fn file(path: &str) -> OwnedFd {
    rustix::fs::open(path, rustix::fs::OFlags::RDONLY, rustix::fs::Mode::empty()).unwrap()
}

#[test]
fn only_the_exact_export_in_a_sealed_file_is_granted() {
    let e = expected();
    let ok = Reply::success(&e);
    let got = granted(ok, Some(sealed(4 * MIB)), false, &e).map(|(info, _)| info.id);
    assert_eq!(got, Ok(e.id));

    let ipc = Err(AclError::RT_IPC_ERROR);
    let (pipe, _w) = std::io::pipe().unwrap();
    let pipe = OwnedFd::from(pipe);
    let cases: Vec<(&str, Reply, Option<OwnedFd>)> = vec![
        ("no descriptor", ok, None),
        ("a pipe", ok, Some(pipe)),
        ("/dev/zero", ok, Some(file("/dev/zero"))),
        ("a regular file", ok, Some(file("/proc/self/exe"))),
        ("an unsealed memfd", ok, Some(unsealed(4 * MIB))),
        ("a sealed file too short", ok, Some(sealed(3 * MIB))),
        (
            "another id",
            Reply { id: e.id ^ 1, ..ok },
            Some(sealed(4 * MIB)),
        ),
        (
            "another offset",
            Reply { offset: 0, ..ok },
            Some(sealed(4 * MIB)),
        ),
        (
            "an offset past the end of memory",
            Reply {
                offset: u64::MAX - MIB,
                ..ok
            },
            Some(sealed(4 * MIB)),
        ),
        (
            "a larger size",
            Reply {
                size: 1 << 46,
                ..ok
            },
            Some(sealed(4 * MIB)),
        ),
        (
            "another pool",
            Reply { pool: 9, ..ok },
            Some(sealed(4 * MIB)),
        ),
    ];
    for (what, reply, fd) in cases {
        assert_eq!(
            granted(reply, fd, false, &e).map(|(info, _)| info.id),
            ipc,
            "{what}"
        );
    }
    // The kernel dropped the descriptor for want of room here: say so.
    assert_eq!(
        granted(ok, None, true, &e).map(|(info, _)| info.id),
        Err(Situation::FdLimit.code())
    );
}

#[test]
fn a_refusal_passes_on_only_the_codes_an_exporter_gives() {
    let e = expected();
    for s in [
        Situation::UnknownShareable,
        Situation::NotWhitelisted,
        Situation::ImportOwnExport,
        Situation::FdLimit,
    ] {
        let reply = Reply::refusal(s.code().code());
        let got = granted(reply, Some(sealed(4 * MIB)), false, &e).map(|(info, _)| info.id);
        assert_eq!(got, Err(s.code()), "{s:?}");
    }
    for made_up in [12345, -1, 1, 100000, 507899, i32::MIN] {
        assert_eq!(refusal(made_up), AclError::RT_IPC_ERROR, "{made_up}");
    }
}
