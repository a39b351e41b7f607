//! Several real processes on one emulated machine, each driving the
//! emulated `libascendcl.so` through its C ABI (the `peer` binary of this
//! crate). Every test uses a machine name of its own, so the tests run in
//! parallel without seeing each other.
//!
//! Reading a reply has a watchdog: a peer that does not answer within a
//! minute fails the test with what it was asked, instead of hanging CI. It
//! is a guard against hangs, not a timing assertion: every step here takes
//! milliseconds.

mod peer;

use peer::*;

#[test]
fn a_whitelisted_importer_sees_the_data_and_keeps_it_after_the_exporter_frees() {
    let m = machine("whitelist");
    let (mut a, _) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("importer", &m);
    let h = a.ok("malloc 4194304");
    a.ok(&format!("fill {h} 171"));
    let s = a.ok(&format!("export {h} 0"));
    assert_eq!(
        b.err(&format!("import {s} 0")),
        AclError::RT_NO_PERMISSION,
        "an importer not yet on the whitelist is refused"
    );
    a.ok(&format!("setpid {s} {b_pid}"));
    let imported = b.ok(&format!("import {s} 0"));
    assert_eq!(b.ok(&format!("check {imported} 171")), "yes");
    a.ok(&format!("free {h}"));
    assert_eq!(
        b.ok(&format!("check {imported} 171")),
        "yes",
        "the importer's handle holds the memory"
    );
    b.ok(&format!("fill {imported} 7"));
    assert_eq!(b.ok(&format!("check {imported} 7")), "yes");
    b.ok(&format!("free {imported}"));
    a.exit();
    b.exit();
}

#[test]
fn writes_through_either_process_are_seen_by_the_other() {
    let m = machine("alias");
    let (mut a, _) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("importer", &m);
    let (h, s) = a.exported_to(&[b_pid]);
    let imported = b.ok(&format!("import {s} 0"));
    b.ok(&format!("fill {imported} 66"));
    assert_eq!(a.ok(&format!("check {h} 66")), "yes");
    a.ok(&format!("fill {h} 99"));
    assert_eq!(b.ok(&format!("check {imported} 99")), "yes");
    a.exit();
    b.exit();
}

#[test]
fn an_outsider_is_refused_and_pid_validation_can_be_disabled() {
    let m = machine("outsider");
    let (mut a, _) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("whitelisted", &m);
    let (mut c, _) = Peer::started("outsider", &m);
    let (_, s) = a.exported_to(&[b_pid]);
    assert_eq!(c.err(&format!("import {s} 0")), AclError::RT_NO_PERMISSION);
    assert_eq!(
        c.err(&format!("setpid {s} 1")),
        AclError::RT_NO_PERMISSION,
        "only the exporter sets the whitelist"
    );
    b.ok(&format!("import {s} 0"));
    assert_eq!(
        a.err(&format!("import {s} 0")),
        AclError::RT_FEATURE_NOT_SUPPORT,
        "a process cannot import its own export"
    );

    let open = a.ok("malloc 2097152");
    a.ok(&format!("fill {open} 5"));
    let s = a.ok(&format!("export {open} 1"));
    let imported = c.ok(&format!("import {s} 0"));
    assert_eq!(c.ok(&format!("check {imported} 5")), "yes");
    a.exit();
    b.exit();
    c.exit();
}

#[test]
fn v2_default_handles_cross_processes() {
    let m = machine("v2");
    let (mut a, _) = Peer::started("exporter", &m);
    let (mut b, _) = Peer::started("importer", &m);
    let h = a.ok("malloc 2097152");
    a.ok(&format!("fill {h} 33"));
    let s = a.ok(&format!("export2 {h} 1"));
    let imported = b.ok(&format!("import2 {s}"));
    assert_eq!(b.ok(&format!("check {imported} 33")), "yes");
    a.exit();
    b.exit();
}

#[test]
fn v2_whitelists_are_enforced() {
    let m = machine("v2-whitelist");
    let (mut a, _) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("importer", &m);
    let h = a.ok("malloc 2097152");
    let s = a.ok(&format!("export2 {h} 0"));
    assert_eq!(b.err(&format!("import2 {s}")), AclError::RT_NO_PERMISSION);
    a.ok(&format!("setpid2 {s} {b_pid}"));
    b.ok(&format!("import2 {s}"));
    a.exit();
    b.exit();
}

#[test]
fn fabric_handles_cross_processes_on_a3_only() {
    let a3 = [("ACLMEM_EMU_SOC", "Ascend910_9392")];
    let m = machine("fabric");
    let (mut a, _) = Peer::started_with("exporter", &m, &a3);
    let (mut b, _) = Peer::started_with("importer", &m, &a3);
    let h = a.ok("malloc 2097152");
    a.ok(&format!("fill {h} 77"));
    let fabric = a.ok(&format!("export2 {h} 1 fabric"));
    assert_eq!(fabric.len(), 256, "a 128-byte handle");
    let imported = b.ok(&format!("import2 {fabric} fabric"));
    assert_eq!(b.ok(&format!("check {imported} 77")), "yes");
    a.exit();
    b.exit();

    let (mut a2, _) = Peer::started("on A2", &machine("fabric-a2"));
    let h = a2.ok("malloc 2097152");
    assert_eq!(
        a2.err(&format!("export2 {h} 1 fabric")),
        AclError::RT_FEATURE_NOT_SUPPORT
    );
    a2.exit();
}

#[test]
fn an_export_dies_with_its_exporter_and_nobody_hangs() {
    let m = machine("killed-exporter");
    let (mut a, _) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("importer", &m);
    let (_, s) = a.exported_to(&[b_pid]);
    a.kill();
    let e = b.err(&format!("import {s} 0"));
    assert_eq!(e, AclError::RT_PARAM_INVALID, "the export is gone: {e}");
    b.exit();
}

#[test]
fn an_imported_handle_survives_its_exporter_being_killed() {
    let m = machine("killed-after-import");
    let (mut a, _) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("importer", &m);
    let h = a.ok("malloc 2097152");
    a.ok(&format!("fill {h} 200"));
    let s = a.ok(&format!("export {h} 0"));
    a.ok(&format!("setpid {s} {b_pid}"));
    let imported = b.ok(&format!("import {s} 0"));
    a.kill();
    assert_eq!(b.ok(&format!("check {imported} 200")), "yes");
    b.ok(&format!("free {imported}"));
    b.exit();
}

/// Capacity is the machine's: what one process holds, another cannot
/// allocate, and a killed process's memory comes back.
#[test]
fn capacity_is_shared_and_returns_when_a_holder_is_killed() {
    let m = machine("capacity");
    let (mut a, _) = Peer::started("holder", &m);
    let (mut b, _) = Peer::started("other", &m);
    let total: u64 = b.call("meminfo").expect("meminfo")[1].parse().expect("n");
    assert_eq!(total, 64 << 30);
    a.ok(&format!("malloc {}", 40u64 << 30));
    let free: u64 = b.ok("meminfo").parse().expect("n");
    assert_eq!(free, 24 << 30, "the other process sees the holder's 40 GiB");
    assert_eq!(
        b.err(&format!("malloc {}", 40u64 << 30)),
        AclError::RT_MEMORY_ALLOCATION
    );
    a.kill();
    b.ok(&format!("malloc {}", 40u64 << 30));
    let free: u64 = b.ok("meminfo").parse().expect("n");
    assert_eq!(free, 24 << 30);
    b.exit();
}

#[test]
fn a_process_with_another_configuration_is_refused() {
    let m = machine("mismatch");
    let (a, _) = Peer::started("first", &m);
    let mut b = Peer::start("different", &m, &[("ACLMEM_EMU_HBM", "32GiB")]);
    assert_eq!(b.err("init"), AclError::INVALID_PARAM);
    b.exit();
    a.exit();
}

#[test]
fn machines_with_different_names_do_not_interfere() {
    let (m1, m2) = (machine("one"), machine("two"));
    let (mut a, _) = Peer::started("on one", &m1);
    let (mut b, b_pid) = Peer::started("on two", &m2);
    a.ok(&format!("malloc {}", 60u64 << 30));
    b.ok(&format!("malloc {}", 60u64 << 30));
    let h = a.ok("malloc 2097152");
    let s = a.ok(&format!("export {h} 1"));
    a.ok(&format!("setpid {s} {b_pid}"));
    assert_eq!(
        b.err(&format!("import {s} 0")),
        AclError::RT_PARAM_INVALID,
        "another machine's shareable handle is unknown here"
    );
    a.exit();
    b.exit();
}

#[test]
fn a_forked_child_is_a_new_process_of_the_machine() {
    let m = machine("fork");
    let (mut a, _) = Peer::started("parent", &m);
    let h = a.ok("malloc 2097152");
    assert_eq!(a.ok(&format!("fork {h}")), "0", "see fork_check in peer.rs");
    assert_eq!(a.ok(&format!("check {h} 0")), "yes", "the parent is intact");
    a.exit();
}

#[test]
fn shareable_handles_differ_across_machine_restarts() {
    let m = machine("restart");
    let mut seen = Vec::new();
    for _ in 0..3 {
        let (mut a, _) = Peer::started("exporter", &m);
        let h = a.ok("malloc 2097152");
        seen.push(a.ok(&format!("export {h} 1")));
        a.exit();
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 3, "a new machine hands out new ids: {seen:?}");
}

/// A machine whose processes were all killed leaves its file behind; the
/// next process to join any machine of the user removes it.
#[test]
fn a_machine_whose_processes_were_all_killed_is_swept() {
    // A directory of this test's own: a process of another test joining
    // meanwhile would sweep the machine too early.
    let (base, private) = fresh_base("swept");
    let env = [("ACLMEM_EMU_DIR", base.to_str().unwrap())];
    let dead = machine("swept");
    let (mut a, _) = Peer::started_with("killed", &dead, &env);
    a.ok("malloc 2097152");
    let path = private.join(&dead);
    assert!(
        path.exists(),
        "{} exists while the machine runs",
        path.display()
    );
    a.kill();
    assert!(path.exists(), "a killed process cannot remove the file");
    let (b, _) = Peer::started_with("sweeper", &machine("sweeper"), &env);
    assert!(!path.exists(), "{} was swept", path.display());
    b.exit();
    let _ = std::fs::remove_dir_all(base);
}

/// Chaos: four processes allocate, export, import, free and kill each
/// other at random (a fixed number of steps, deterministic choices). At
/// the end the machine's capacity is whole, a long-lived process holds no
/// more descriptors or mappings than when it started, and the machine's
/// file is gone once the last process leaves.
#[test]
fn chaos_across_processes_leaks_nothing() {
    let m = machine("chaos");
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n as u64) as usize
    };
    // The observer never gets killed; its resources are checked at the end.
    let (mut observer, _) = Peer::started("observer", &m);
    // Its device pool exists from its first allocation on.
    let warm = observer.ok("malloc 2097152");
    observer.ok(&format!("free {warm}"));
    let baseline = observer.call("resources").expect("resources");
    let mut peers: Vec<(Peer, Vec<String>)> = (0..3)
        .map(|i| (Peer::started(&format!("peer {i}"), &m).0, Vec::new()))
        .collect();
    let mut observer_handles: Vec<String> = Vec::new();
    let (mut kills, mut imports) = (0, 0);
    for step in 0..300 {
        let i = next(peers.len());
        match next(6) {
            0 | 1 => {
                if let Ok(v) = peers[i].0.call("malloc 4194304") {
                    peers[i].1.push(v[0].clone());
                }
            }
            2 if !peers[i].1.is_empty() => {
                let k = next(peers[i].1.len());
                let h = peers[i].1.swap_remove(k);
                peers[i].0.ok(&format!("free {h}"));
            }
            3 if !peers[i].1.is_empty() => {
                // Share with the observer (pid validation off), which frees
                // it at once or keeps it for a while.
                let k = next(peers[i].1.len());
                let h = peers[i].1[k].clone();
                if let Ok(s) = peers[i].0.call(&format!("export {h} 1"))
                    && let Ok(v) = observer.call(&format!("import {} 0", s[0]))
                {
                    imports += 1;
                    observer_handles.push(v[0].clone());
                }
            }
            4 if step % 7 == 0 => {
                let (victim, _) = peers.swap_remove(i);
                victim.kill();
                kills += 1;
                peers.push((
                    Peer::started(&format!("replacement {step}"), &m).0,
                    Vec::new(),
                ));
            }
            _ if !observer_handles.is_empty() => {
                let k = next(observer_handles.len());
                let h = observer_handles.swap_remove(k);
                observer.ok(&format!("free {h}"));
            }
            _ => {}
        }
    }
    for h in observer_handles.drain(..) {
        observer.ok(&format!("free {h}"));
    }
    for (p, _) in peers.drain(..) {
        p.kill();
    }
    assert!(kills > 5 && imports > 5, "{kills} kills, {imports} imports");
    eprintln!("chaos: 300 steps, 4 processes, {kills} killed and replaced, {imports} imports");
    // Capacity is whole (the killed processes' memory and the exports they
    // left are reclaimed when the observer next needs room).
    observer.ok(&format!("malloc {}", 64u64 << 30));
    let free: u64 = observer.ok("meminfo").parse().expect("n");
    assert_eq!(free, 0, "all 64 GiB could be taken again");
    let after = observer.call("resources").expect("resources");
    assert_eq!(
        after, baseline,
        "descriptors and mappings of the observer (fds, maps)"
    );
    observer.exit();
    let file = aclmem_emu::machine_path(&m);
    assert!(
        !file.exists(),
        "the machine's state is gone with its last process"
    );
}

#[test]
fn a_full_process_table_makes_room_when_a_member_dies() {
    // 257 processes: natively about 3 s; under qemu-user (`cargo xtask
    // cross`) each is a whole emulator with its own memory, so the native
    // run is the one that checks this.
    if under_test_runner() {
        eprintln!("skipped under ACLMEM_TEST_RUNNER: 257 qemu-user processes");
        return;
    }
    let m = machine("full");
    let mut members: Vec<Peer> = (0..aclmem_emu::MAX_PROCS)
        .map(|i| Peer::started(&format!("member {i}"), &m).0)
        .collect();
    let mut late = Peer::start("one too many", &m, &[]);
    assert_eq!(
        late.err("init"),
        AclError::RT_RESOURCE_ALLOC_FAIL,
        "a process beyond the table's {} slots",
        aclmem_emu::MAX_PROCS
    );
    late.exit_quietly();
    // A member killed without a word leaves its slot behind, still marked
    // live; the next process to join finds it dead and takes it.
    members.pop().expect("members").kill();
    let (mut late, _) = Peer::started("latecomer", &m);
    late.ok("malloc 2097152");
    late.exit();
    for p in members {
        p.exit();
    }
}
