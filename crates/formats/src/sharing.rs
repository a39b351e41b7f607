//! The sharing events of every process of a run
//! (`ACLMEM_SANITIZER_SHARING`): each process appends one [`Event`] per
//! start, exit, export (shareable handle or legacy IPC key), pid
//! whitelist, import (whatever it answered), and each map, unmap and free
//! of a handle it exported or imported. `aclmem sanitize` joins them by
//! shareable handle for the checks no single process can make.

use serde::{Deserialize, Serialize};

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A process started (`aclInit`, or a fork of one that had).
    Start,
    /// A process ended (written by itself, or by `aclmem sanitize`, which
    /// watches for processes that end without exit handlers).
    Exit,
    /// An export: a shareable handle or an IPC key.
    Export,
    /// An import, whatever it answered.
    Import,
    /// Pids whitelisted for an export.
    SetPid,
    /// A mapping of a handle exported or imported.
    Map,
    /// Its unmapping.
    Unmap,
    /// A free of a handle exported or imported.
    Free,
}

impl Kind {
    /// The name events carry (`set-pid`).
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Start => "start",
            Kind::Exit => "exit",
            Kind::Export => "export",
            Kind::Import => "import",
            Kind::SetPid => "set-pid",
            Kind::Map => "map",
            Kind::Unmap => "unmap",
            Kind::Free => "free",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// What happened.
    pub ev: Kind,
    /// The ACL function (empty for a start or an exit).
    #[serde(default)]
    pub call: String,
    /// The process.
    pub pid: u32,
    /// When, in µs of the monotonic clock.
    pub t: u64,
    /// The call's site (`function (file:line)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// Its stack, innermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
    /// A start's parent, for a forked child.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// The shareable handle (`0x...`) or IPC key of the export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The process's physical handle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h: Option<u64>,
    /// A mapping's (or an IPC import's) address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub va: Option<u64>,
    /// A mapping's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// What the call answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ret: Option<i64>,
    /// A whitelist's pids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pids: Vec<i64>,
    /// Whether a freed handle was an import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<bool>,
    /// An export of a handle a framework's caching allocator made.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache: bool,
    /// An exit `aclmem sanitize` observed (the process wrote none).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub observed: bool,
}

impl Event {
    /// An event of `pid` at `t` with nothing else known yet.
    pub fn new(ev: Kind, call: &str, pid: u32, t: u64) -> Event {
        Event {
            ev,
            call: call.to_owned(),
            pid,
            t,
            site: None,
            stack: Vec::new(),
            parent: None,
            id: None,
            h: None,
            va: None,
            size: None,
            ret: None,
            pids: Vec::new(),
            imported: None,
            cache: false,
            observed: false,
        }
    }

    /// The events of a file's text, in the order written (a line that does
    /// not parse is left out: a process killed while it wrote).
    pub fn parse_all(text: &str) -> Vec<Event> {
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// The text of a shareable handle, as the events and findings write it.
pub fn shareable(id: u64) -> String {
    format!("{id:#x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_round_trips_and_leaves_out_what_it_lacks() {
        let mut e = Event::new(Kind::SetPid, "aclrtMemSetPidToShareableHandle", 9, 100);
        e.id = Some(shareable(0xab));
        e.pids = vec![1, 2];
        e.ret = Some(0);
        let line = serde_json::to_string(&e).unwrap();
        assert_eq!(
            line,
            r#"{"ev":"set-pid","call":"aclrtMemSetPidToShareableHandle","pid":9,"t":100,"id":"0xab","ret":0,"pids":[1,2]}"#
        );
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), e);
        assert_eq!(Event::parse_all(&format!("{line}\n{{\"ev\":\n")), [e]);
        for k in [
            Kind::Start,
            Kind::Exit,
            Kind::Export,
            Kind::Import,
            Kind::SetPid,
            Kind::Map,
            Kind::Unmap,
            Kind::Free,
        ] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
    }
}
