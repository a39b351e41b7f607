//! The checks across processes: after a run, `aclmem sanitize` joins the
//! sharing events every process of it wrote (`ACLMEM_SANITIZER_SHARING`:
//! starts, exits, exports, pid whitelists, imports, and the maps, unmaps
//! and frees of shared handles) by shareable handle, into one lifecycle per
//! handle (export in A → whitelist → import in B → map/unmap → free), and
//! reports what no single process can see, naming both sides:
//!
//! * `import-after-free`: B imported a shareable handle after its exporter
//!   freed it or exited;
//! * `whitelisted-never-imported`: A whitelisted a pid for a handle and
//!   that process never imported it;
//! * `import-held-at-exit`: B ended still mapping (or holding) what it
//!   imported;
//! * `exporter-exited-while-mapped`: A exited while B still mapped a handle
//!   A exported, whether A still held it or freed it first (a forked child
//!   that exports to its parent, frees, finalises and exits while the
//!   parent maps it).
//!
//! A finding one process made about a shareable handle it imported (the
//! device id of `handle-type-as-device`) gets the exporter's side too, from
//! the same events ([`with_exporters`]).
//!
//! The processes share one monotonic clock, so events of different
//! processes order by their time.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use crate::LeakCheck;
use crate::finding::{self, Class};
use crate::sharing::{Event, Kind};

/// One side of a finding: the process, the call and where it was made.
fn side(e: &Event) -> serde_json::Value {
    serde_json::json!({
        "pid": e.pid,
        "call": e.call,
        "site": e.site.as_deref().unwrap_or("unknown call site"),
        "stack": e.stack,
    })
}

/// The lifecycle of one shareable handle, in the order it happened.
fn lifecycle(events: &[&Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            let mut s = format!("{} in pid {}", e.ev, e.pid);
            if !e.pids.is_empty() {
                let pids: Vec<String> = e.pids.iter().map(i64::to_string).collect();
                let _ = write!(s, " [{}]", pids.join(", "));
            }
            if let Some(va) = e.va.filter(|_| e.ev == Kind::Map || e.ev == Kind::Unmap) {
                let _ = write!(s, " at {va:#x}");
            }
            if let Some(r) = e.ret.filter(|&r| r != 0) {
                let _ = write!(s, " (answered {r})");
            }
            s
        })
        .collect()
}

fn finding(
    class: Class,
    primary: &Event,
    id: &str,
    message: String,
    other: Option<&Event>,
    chain: &[&Event],
) -> finding::Record {
    let mut more = serde_json::Map::new();
    more.insert("other".into(), other.map(side).into());
    more.insert("lifecycle".into(), lifecycle(chain).into());
    finding::Record {
        class,
        call: primary.call.clone(),
        args: id.to_owned(),
        message,
        code: primary
            .ret
            .filter(|&r| r != 0)
            .and_then(|r| i32::try_from(r).ok()),
        site: primary
            .site
            .clone()
            .unwrap_or_else(|| "unknown call site".into()),
        stack: primary.stack.clone(),
        pid: primary.pid,
        more,
    }
}

/// The findings of a run's sharing events (the file's lines in any order;
/// a line that does not parse is skipped: a process killed mid-write).
/// `leaks` decides whether an exported handle never freed is a `leak`:
/// always (`full`), unless a framework's caching allocator made it
/// (`program`), never (`none`).
pub fn check(text: &str, leaks: LeakCheck) -> Vec<finding::Record> {
    let mut events = Event::parse_all(text);
    events.sort_by_key(|e| e.t);
    // Each process's earliest exit (its own, or the watcher's).
    let mut exits: BTreeMap<u32, &Event> = BTreeMap::new();
    for e in events.iter().filter(|e| e.ev == Kind::Exit) {
        exits.entry(e.pid).or_insert(e);
    }
    let ran: BTreeSet<u32> = events.iter().map(|e| e.pid).collect();
    let mut by_id: BTreeMap<&str, Vec<&Event>> = BTreeMap::new();
    for e in &events {
        if let Some(id) = e.id.as_deref() {
            by_id.entry(id).or_default().push(e);
        }
    }
    let mut out = Vec::new();
    for (id, evs) in &by_id {
        let Some(export) = evs.iter().copied().find(|e| e.ev == Kind::Export) else {
            // Exported by a process outside the run: nothing to join.
            continue;
        };
        let a = export.pid;
        // What ended the exporter's hold: its free of the handle, or its exit.
        let freed = evs
            .iter()
            .copied()
            .find(|e| e.ev == Kind::Free && e.pid == a && e.imported != Some(true));
        let exit = exits.get(&a).copied();
        let gone = match (freed, exit) {
            (Some(f), Some(x)) => Some(if f.t <= x.t { f } else { x }),
            (f, x) => f.or(x),
        };
        let mut chain: Vec<&Event> = evs.clone();
        if let Some(x) = exit {
            chain.push(x);
            chain.sort_by_key(|e| e.t);
        }
        for imp in evs
            .iter()
            .copied()
            .filter(|e| e.ev == Kind::Import && e.pid != a)
        {
            if let Some(g) = gone.filter(|g| g.t < imp.t) {
                let how = if g.ev == Kind::Exit {
                    "exited".to_owned()
                } else {
                    format!(
                        "freed it ({} at {})",
                        g.call,
                        g.site.as_deref().unwrap_or("?")
                    )
                };
                out.push(finding(
                    Class::ImportAfterFree,
                    imp,
                    id,
                    format!(
                        "pid {} imported shareable handle {id} after its exporter, pid {a}, {how}",
                        imp.pid
                    ),
                    Some(g),
                    &chain,
                ));
            }
        }
        for wl in evs
            .iter()
            .copied()
            .filter(|e| e.ev == Kind::SetPid && e.ret == Some(0))
        {
            for &p in &wl.pids {
                let imported = u32::try_from(p)
                    .is_ok_and(|p| evs.iter().any(|e| e.ev == Kind::Import && e.pid == p));
                if imported {
                    continue;
                }
                let whom = match u32::try_from(p) {
                    Ok(p) if p == a => {
                        "itself (the exporter; a process cannot import its own export)".to_owned()
                    }
                    Ok(p) if ran.contains(&p) => format!("pid {p} (a process of this run)"),
                    _ => format!("pid {p} (no process of this run that called ACL)"),
                };
                out.push(finding(
                    Class::WhitelistedNeverImported,
                    wl,
                    id,
                    format!(
                        "pid {a} allowed {whom} to import shareable handle {id}, and it never did (a whitelist names the importer's pid, aclrtDeviceGetBareTgid in a container)"
                    ),
                    Some(export),
                    &chain,
                ));
            }
        }
        // Each importer's imports still held when it ended.
        for imp in evs
            .iter()
            .copied()
            .filter(|e| e.ev == Kind::Import && e.pid != a && e.ret == Some(0) && e.h.is_some())
        {
            let b = imp.pid;
            let end = exits.get(&b).map_or(u64::MAX, |x| x.t);
            let mine: Vec<&Event> = evs
                .iter()
                .copied()
                .filter(|e| e.pid == b && e.t >= imp.t && e.t <= end)
                .collect();
            let still_mapped = mine
                .iter()
                .copied()
                .filter(|e| e.ev == Kind::Map && e.h == imp.h)
                .find(|m| {
                    !mine
                        .iter()
                        .any(|u| u.ev == Kind::Unmap && u.va == m.va && u.t >= m.t)
                });
            let freed = mine.iter().any(|e| e.ev == Kind::Free && e.h == imp.h);
            let what = match (still_mapped, freed) {
                (Some(m), _) => format!(
                    "still mapped it at {:#x} (mapped at {})",
                    m.va.unwrap_or(0),
                    m.site.as_deref().unwrap_or("?")
                ),
                (None, false) => "still held the imported handle (never freed)".to_owned(),
                (None, true) => continue,
            };
            let ended = if exits.contains_key(&b) {
                "exited"
            } else {
                "ended (without exit handlers)"
            };
            out.push(finding(
                Class::ImportHeldAtExit,
                still_mapped.unwrap_or(imp),
                id,
                format!(
                    "pid {b} {ended} and {what}: shareable handle {id} exported by pid {a}; unmap and free imports before exiting"
                ),
                Some(export),
                &chain,
            ));
        }
        // An exporter that exited while another process still mapped the
        // handle (holding it, or having freed it first), or that never freed
        // it and leaked it. (A legacy IPC key has no handle: its memory is
        // aclrtMalloc's, checked in its process.)
        if export.h.is_some() {
            let mapped_at_exit: Vec<&Event> = exit
                .map(|x| {
                    evs.iter()
                        .copied()
                        .filter(|m| m.ev == Kind::Map && m.pid != a && m.t < x.t)
                        // A mapping of a process that had ended first is
                        // that process's (import-held-at-exit), not live.
                        .filter(|m| exits.get(&m.pid).is_none_or(|e| e.t > x.t))
                        .filter(|m| {
                            !evs.iter().any(|u| {
                                u.ev == Kind::Unmap
                                    && u.pid == m.pid
                                    && u.va == m.va
                                    && u.t >= m.t
                                    && u.t <= x.t
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            for m in &mapped_at_exit {
                let (primary, how) = match (freed, exit) {
                    // Freed, then exited: the exit is where it ended.
                    (Some(f), Some(x)) => (
                        x,
                        format!(
                            "freed the physical handle it exported as {id} ({} at {}) and exited",
                            f.call,
                            f.site.as_deref().unwrap_or("?")
                        ),
                    ),
                    _ => (
                        export,
                        format!("exited holding the physical handle it exported as {id}"),
                    ),
                };
                out.push(finding(
                    Class::ExporterExitedWhileMapped,
                    primary,
                    id,
                    format!(
                        "pid {a} {how}, which pid {} still mapped at {:#x} (mapped at {}): free an export, and exit, only after every importer unmapped it",
                        m.pid,
                        m.va.unwrap_or(0),
                        m.site.as_deref().unwrap_or("?")
                    ),
                    Some(m),
                    &chain,
                ));
            }
            if freed.is_some() {
                continue;
            }
            let leak_reported = match leaks {
                LeakCheck::Full => true,
                LeakCheck::Program => !export.cache,
                LeakCheck::None => false,
            };
            if mapped_at_exit.is_empty() && leak_reported {
                out.push(finding(
                    Class::Leak,
                    export,
                    id,
                    format!(
                        "pid {a} never freed the physical handle {:#x} it exported as {id}; exported",
                        export.h.unwrap_or(0)
                    ),
                    None,
                    &chain,
                ));
            }
        }
    }
    out
}

/// A finding as the sanitizer writes it on stderr, with the other side and
/// the lifecycle below it.
pub fn describe(f: &finding::Record) -> String {
    let mut line = format!(
        "aclmem-sanitizer: {}: {}({}): {}",
        f.class, f.call, f.args, f.message
    );
    if let Some(c) = f.code {
        match aclmem_core::AclError::from_code(c).and_then(|e| e.name()) {
            Some(n) => {
                let _ = write!(line, " [the runtime answered {c} {n}]");
            }
            None => {
                let _ = write!(line, " [the runtime answered {c}]");
            }
        }
    }
    let _ = write!(line, " at {} (pid {})", f.site, f.pid);
    let frames = |line: &mut String, stack: &serde_json::Value| {
        for (i, fr) in stack.as_array().into_iter().flatten().enumerate().skip(1) {
            let _ = write!(line, "\n    #{i} {}", fr.as_str().unwrap_or("?"));
        }
    };
    frames(&mut line, &serde_json::Value::from(f.stack.clone()));
    let none = serde_json::Value::Null;
    let o = f.more.get("other").unwrap_or(&none);
    if o.is_object() {
        let _ = write!(
            line,
            "\n  and pid {}: {} at {}",
            o["pid"],
            o["call"].as_str().unwrap_or("exit"),
            o["site"].as_str().unwrap_or("?")
        );
        frames(&mut line, &o["stack"]);
    }
    let chain: Vec<&str> = f
        .more
        .get("lifecycle")
        .unwrap_or(&none)
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str())
        .collect();
    if !chain.is_empty() {
        let _ = write!(line, "\n  lifecycle: {}", chain.join(" → "));
    }
    line
}

/// The findings of one process's log (JSON lines) about a shareable handle
/// it imported, with the exporter's side added from the run's sharing
/// `events`: `more.other` names the export (pid, call, site). Records of
/// other classes, or that name their other side already, or whose handle
/// no process of the run exported, are left as they are; a line that does
/// not parse is kept as it is. Returns the log's new text and the records
/// that changed.
pub fn with_exporters(log: &str, events: &str) -> (String, Vec<finding::Record>) {
    let mut events = Event::parse_all(events);
    events.sort_by_key(|e| e.t);
    let exports: BTreeMap<&str, &Event> = events
        .iter()
        .filter(|e| e.ev == Kind::Export && e.ret.unwrap_or(0) == 0)
        .filter_map(|e| Some((e.id.as_deref()?, e)))
        .collect();
    let mut changed = Vec::new();
    let mut out = String::with_capacity(log.len());
    for line in log.lines() {
        let rewritten = serde_json::from_str::<finding::Record>(line)
            .ok()
            .filter(|f| f.class == Class::HandleTypeAsDevice)
            .filter(|f| f.more.get("other").is_none_or(serde_json::Value::is_null))
            .and_then(|mut f| {
                // The args name the shareable handle first (`0x…, device`).
                let id = f.args.split(',').next()?.trim().to_owned();
                let export = exports.get(id.as_str()).filter(|e| e.pid != f.pid)?;
                f.more.insert("other".into(), side(export));
                let chain: Vec<&Event> = events
                    .iter()
                    .filter(|e| e.id.as_deref() == Some(id.as_str()))
                    .collect();
                f.more.insert("lifecycle".into(), lifecycle(&chain).into());
                let _ = write!(
                    f.message,
                    "; the handle was exported by pid {} ({} at {})",
                    export.pid,
                    export.call,
                    export.site.as_deref().unwrap_or("unknown call site")
                );
                Some(f)
            });
        match rewritten {
            Some(f) => {
                out.push_str(&serde_json::to_string(&f).unwrap_or_else(|_| line.to_owned()));
                changed.push(f);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    (out, changed)
}

/// Reads the events of a run (a missing file: no events).
pub fn check_file(path: &Path, leaks: LeakCheck) -> Vec<finding::Record> {
    std::fs::read_to_string(path)
        .map(|t| check(&t, leaks))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(v: serde_json::Value) -> String {
        v.to_string()
    }

    #[test]
    fn an_import_after_the_exporter_freed_names_both_sides() {
        let text = [
            ev(
                serde_json::json!({"ev":"export","call":"aclrtMemExportToShareableHandle","pid":10,"t":1,"id":"0x5","h":7,"site":"main (a.c:3)","stack":["main (a.c:3)","start"]}),
            ),
            ev(
                serde_json::json!({"ev":"free","call":"aclrtFreePhysical","pid":10,"t":2,"id":"0x5","h":7,"imported":false,"site":"main (a.c:4)"}),
            ),
            ev(
                serde_json::json!({"ev":"import","call":"aclrtMemImportFromShareableHandle","pid":11,"t":3,"id":"0x5","ret":107000,"site":"child (a.c:9)"}),
            ),
        ]
        .join("\n");
        let f = check(&text, LeakCheck::Program);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].class, Class::ImportAfterFree);
        assert_eq!(f[0].pid, 11);
        assert_eq!(f[0].more["other"]["pid"], 10);
        assert_eq!(f[0].more["other"]["site"], "main (a.c:4)");
        assert_eq!(f[0].code, Some(107000));
        let text = describe(&f[0]);
        assert!(
            text.contains("and pid 10: aclrtFreePhysical at main (a.c:4)"),
            "{text}"
        );
        assert!(
            text.contains("export in pid 10 → free in pid 10 → import in pid 11 (answered 107000)"),
            "{text}"
        );
    }

    #[test]
    fn a_clean_exchange_has_no_findings_and_bad_lines_are_skipped() {
        let text = [
            ev(serde_json::json!({"ev":"export","pid":10,"t":1,"id":"0x5","h":7})),
            ev(serde_json::json!({"ev":"set-pid","pid":10,"t":2,"id":"0x5","pids":[11],"ret":0})),
            ev(serde_json::json!({"ev":"import","pid":11,"t":3,"id":"0x5","ret":0,"h":9})),
            "{\"ev\":\"map\",\"pid\"".to_owned(),
            ev(serde_json::json!({"ev":"map","pid":11,"t":4,"id":"0x5","h":9,"va":4096})),
            ev(serde_json::json!({"ev":"unmap","pid":11,"t":5,"id":"0x5","va":4096})),
            ev(serde_json::json!({"ev":"free","pid":11,"t":6,"id":"0x5","h":9,"imported":true})),
            ev(serde_json::json!({"ev":"exit","pid":11,"t":7})),
            ev(serde_json::json!({"ev":"free","pid":10,"t":8,"id":"0x5","h":7,"imported":false})),
            ev(serde_json::json!({"ev":"exit","pid":10,"t":9})),
        ]
        .join("\n");
        assert_eq!(check(&text, LeakCheck::Program), []);
    }

    #[test]
    fn an_export_never_freed_is_a_leak_unless_a_frameworks_cache_made_it() {
        let text = |cache: bool| {
            [
                ev(serde_json::json!({"ev":"export","pid":10,"t":1,"id":"0x5","h":7,"cache":cache})),
                ev(serde_json::json!({"ev":"exit","pid":10,"t":2})),
            ]
            .join("\n")
        };
        let classes = |t: &str, l| -> Vec<String> {
            check(t, l)
                .iter()
                .map(|f| f.class.name().to_owned())
                .collect()
        };
        assert_eq!(classes(&text(false), LeakCheck::Program), ["leak"]);
        assert!(classes(&text(true), LeakCheck::Program).is_empty());
        assert_eq!(classes(&text(true), LeakCheck::Full), ["leak"]);
        assert!(classes(&text(false), LeakCheck::None).is_empty());
    }

    #[test]
    fn whitelists_holds_and_exits_are_checked_against_the_other_process() {
        let text = [
            ev(serde_json::json!({"ev":"export","pid":10,"t":1,"id":"0x5","h":7})),
            ev(serde_json::json!({"ev":"set-pid","pid":10,"t":2,"id":"0x5","pids":[11, 12],"ret":0})),
            ev(serde_json::json!({"ev":"start","pid":12,"t":2})),
            ev(serde_json::json!({"ev":"import","pid":11,"t":3,"id":"0x5","ret":0,"h":9})),
            ev(serde_json::json!({"ev":"map","pid":11,"t":4,"id":"0x5","h":9,"va":4096})),
            ev(serde_json::json!({"ev":"exit","pid":10,"t":5})),
        ]
        .join("\n");
        let f = check(&text, LeakCheck::Program);
        let classes: Vec<&str> = f.iter().map(|f| f.class.name()).collect();
        assert_eq!(
            classes,
            [
                "whitelisted-never-imported",
                "import-held-at-exit",
                "exporter-exited-while-mapped"
            ]
        );
        assert!(f[0].message.contains("pid 12 (a process of this run)"));
        assert!(f[1].message.contains("still mapped it at 0x1000"));
        assert_eq!(f[2].more["other"]["pid"], 11);
    }
}
