//! Instruments: call counts, injected faults, stats and leak reports.

use crate::Op;

use aclmem_core::{AclError, Location};

use crate::process::handles::HandleId;
use crate::{Emulator, LeakReport, LeakedHandle, LeakedRange, MemKind, PoolId, PoolStats, Stats};

impl Emulator {
    /// Makes the `nth` call of `op` from now (1 = the next one) fail with
    /// `code`, without side effects.
    pub fn inject_fault(&self, op: Op, nth: u64, code: AclError) {
        self.process.instrument.arm(op, nth, code);
    }

    /// A snapshot of capacity use, live objects and call counts.
    pub fn stats(&self) -> Stats {
        let p = &self.process;
        let m = &p.machine;
        let pool = |pool, kind| {
            let (capacity, used) = m.region.pool(pool);
            PoolStats {
                capacity: capacity as usize,
                used: used as usize,
                peak: m.region.peak(pool) as usize,
                kind,
            }
        };
        let (mut handles, mut allocs) = (0, 0);
        for (_, s) in p.shards.iter() {
            let s = s.lock();
            handles += s.handles.len();
            allocs += s.allocs.len();
        }
        let (reservations, mappings) = {
            let va = p.va.lock();
            (va.resvs.len(), va.maps.len())
        };
        Stats {
            device: (0..m.config.devices)
                .map(|d| pool(PoolId::Device(d), p.device_kind()))
                .collect(),
            huge1g: (0..m.config.devices)
                .map(|d| pool(PoolId::Huge1G(d), p.device_kind()))
                .collect(),
            host: pool(PoolId::Host, MemKind::Ddr),
            processes: m.region.live_slots(),
            shareable_handles: m.region.export_count(),
            live_allocations: allocs,
            live_handles: handles,
            reservations,
            mappings,
            calls: Op::ALL
                .iter()
                .map(|op| (*op, p.instrument.calls(*op)))
                .collect(),
        }
    }

    /// What this process still holds.
    pub fn leak_report(&self) -> LeakReport {
        let p = &self.process;
        let mut report = LeakReport::default();
        for (i, s) in p.shards.iter() {
            let shard = s.lock();
            for (index, h) in shard.handles.iter() {
                let Some(a) = shard.allocs.get(h.alloc as usize) else {
                    continue;
                };
                report.handles.push(LeakedHandle {
                    handle: HandleId {
                        generation: h.generation,
                        shard: i,
                        index: index as u32,
                    }
                    .encode(),
                    size: a.size as usize,
                    location: a.location,
                    location_id: a.location_id,
                    attr: a.attr,
                    kind: if a.location == Location::Device {
                        p.device_kind()
                    } else {
                        MemKind::Ddr
                    },
                    imported: h.imported,
                });
            }
        }
        let va = p.va.lock();
        for (&addr, r) in &va.resvs {
            let range = LeakedRange { addr, size: r.size };
            if r.plain {
                report.device_allocations.push(range);
            } else {
                report.reservations.push(range);
            }
        }
        for (&addr, e) in &va.maps {
            if !va.resvs.get(&e.resv).is_some_and(|r| r.plain) {
                report.mappings.push(LeakedRange { addr, size: e.size });
            }
        }
        for (&addr, b) in p.hosts.lock().iter() {
            report.host_allocations.push(LeakedRange {
                addr,
                size: b.bytes(),
            });
        }
        report
    }
}
