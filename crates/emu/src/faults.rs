//! Faults for any program: the `ACLMEM_EMU_FAULTS` grammar (also
//! `aclmem run --fault`), parsed strictly, and when a fault fires.
//!
//! ```text
//! spec   := item (';' item)*
//! item   := target '@' when [':' site] ['=' code] ['@machine']
//!         | FUNCTION '~' duration [':' site]
//! target := FUNCTION              a catalogue function that returns a status
//!         | 'device-lost'         every call from the Nth on (any function)
//! when   := N                     the Nth call (from 1)
//!         | N '+'                 the Nth and every later call
//!         | '*'                   every call
//! site   := FILE ':' LINE         calls from that source line (DWARF)
//!         | LIBRARY '+' 0xOFFSET  calls from that place of a library
//! code   := a status code other than 0 (required for a FUNCTION;
//!           device-lost answers 507010 unless given one)
//! duration := N ('us' | 'ms' | 's')
//! ```
//!
//! `aclrtMalloc@3=207001` fails the third `aclrtMalloc` of the process with
//! `ACL_ERROR_RT_MEMORY_ALLOCATION`; `aclrtMapMem@2+=207001` the second and
//! every later one; `aclrtMemcpy@1:loader.c:88=107000` the first call made
//! from line 88 of `loader.c`; `device-lost@50` every call from the
//! fiftieth on; `aclrtSynchronizeStream~200ms` delays every call by 200 ms.
//! Counts are per process (a forked child counts afresh) unless the item
//! ends with `@machine`, when every process of the machine counts together.
//! A failing call changes nothing: it answers before it reads or writes
//! anything.

use std::fmt;
use std::time::Duration;

use aclmem_sys::catalogue::{self, Returns};

/// What `device-lost` answers unless the item gives a code:
/// `ACL_ERROR_RT_LOST_HEARTBEAT` (the runtime's answer once the device
/// stopped answering).
pub const DEVICE_LOST: i32 = 507_010;

/// At most this many `@machine` items per spec (their counters live in the
/// machine's shared state).
pub const MACHINE_FAULTS: usize = 16;

/// Which calls a fault counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Calls of this catalogue function.
    Function(&'static str),
    /// Every call of any function.
    DeviceLost,
}

/// Which of its counted calls a fault takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// The Nth (from 1).
    Nth(u64),
    /// The Nth and every later one.
    From(u64),
    /// Every one.
    Every,
}

/// Where a call comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// A source line (the file's name, or the end of its path).
    Line {
        /// `loader.c`, `src/loader.c`.
        file: String,
        /// From 1.
        line: u32,
    },
    /// An offset in a loaded library (or the program).
    Offset {
        /// Its file name (`libfoo.so`).
        library: String,
        /// The return address's offset from the library's base.
        offset: u64,
    },
}

impl Site {
    /// Whether a call from `file:line` in `library` at `offset` is from
    /// this site.
    pub fn matches(&self, library: &str, offset: u64, file: Option<(&str, u32)>) -> bool {
        match self {
            Site::Offset {
                library: l,
                offset: o,
            } => *o == offset && (library == l || library.ends_with(&format!("/{l}"))),
            Site::Line { file: f, line: n } => file.is_some_and(|(path, line)| {
                line == *n && (path == f || path.ends_with(&format!("/{f}")))
            }),
        }
    }
}

/// What a fault does to a call it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The call answers this code and does nothing.
    Fail(i32),
    /// The call waits this long, then runs.
    Delay(Duration),
}

/// One item of a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The calls it counts.
    pub target: Target,
    /// Which of them it takes.
    pub when: When,
    /// Only calls from here count, if set.
    pub site: Option<Site>,
    /// What it does.
    pub action: Action,
    /// Counted by every process of the machine together.
    pub machine: bool,
}

impl Fault {
    /// Whether the `count`-th counted call (from 1) is taken.
    pub fn takes(&self, count: u64) -> bool {
        match self.when {
            When::Nth(n) => count == n,
            When::From(n) => count >= n,
            When::Every => true,
        }
    }
}

/// A spec that does not parse, with the item and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultSpecError {
    /// The item.
    pub item: String,
    /// Why.
    pub reason: String,
}

impl fmt::Display for FaultSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fault {:?}: {} (expected FUNCTION@N=CODE, FUNCTION@N+=CODE, FUNCTION@*=CODE, \
             with :FILE:LINE or :LIBRARY+0xOFFSET before =, @machine at the end; \
             device-lost@N; FUNCTION~50ms)",
            self.item, self.reason
        )
    }
}

impl std::error::Error for FaultSpecError {}

/// Parses a spec (items separated by `;`; empty items are ignored).
pub fn parse(spec: &str) -> Result<Vec<Fault>, FaultSpecError> {
    let faults = spec
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            parse_item(item).map_err(|reason| FaultSpecError {
                item: item.to_owned(),
                reason,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if faults.iter().filter(|f| f.machine).count() > MACHINE_FAULTS {
        return Err(FaultSpecError {
            item: spec.to_owned(),
            reason: format!("at most {MACHINE_FAULTS} items may count @machine"),
        });
    }
    Ok(faults)
}

/// `ACLMEM_EMU_FAULTS`, parsed (`Ok(empty)` when unset).
pub fn from_env() -> Result<Vec<Fault>, FaultSpecError> {
    std::env::var("ACLMEM_EMU_FAULTS").map_or(Ok(Vec::new()), |s| parse(&s))
}

fn function(name: &str) -> Result<&'static str, String> {
    let entry = catalogue::find(name)
        .ok_or_else(|| format!("{name:?} is not a function of the catalogue (aclmem catalogue)"))?;
    match entry.returns {
        Returns::Code | Returns::OpStatus | Returns::HcclStatus => Ok(entry.name),
        _ => Err(format!("{name} does not return a status code")),
    }
}

fn number<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, String> {
    text.parse().map_err(|_| {
        let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            format!("{what} {text} is out of range")
        } else {
            format!("{what} {text:?} is not a number")
        }
    })
}

fn parse_item(item: &str) -> Result<Fault, String> {
    if let Some((name, rest)) = item.split_once('~') {
        let (duration, site) = match rest.split_once(':') {
            Some((d, s)) => (d, Some(parse_site(s)?)),
            None => (rest, None),
        };
        return Ok(Fault {
            target: Target::Function(function(name)?),
            when: When::Every,
            site,
            action: Action::Delay(parse_duration(duration)?),
            machine: false,
        });
    }
    let (target, rest) = item
        .split_once('@')
        .ok_or_else(|| "no @ (which calls)".to_owned())?;
    let (rest, machine) = match rest.strip_suffix("@machine") {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let (rest, code) = match rest.split_once('=') {
        Some((r, c)) => {
            let code: i32 = number(c, "code")?;
            if code == 0 {
                return Err("code 0 is success, not a fault".into());
            }
            (r, Some(code))
        }
        None => (rest, None),
    };
    let (when, site) = match rest.split_once(':') {
        Some((w, s)) => (w, Some(parse_site(s)?)),
        None => (rest, None),
    };
    let when = match when {
        "*" => When::Every,
        w => {
            let (n, from) = match w.strip_suffix('+') {
                Some(n) => (n, true),
                None => (w, false),
            };
            let n: u64 = number(n, "call number")?;
            if n == 0 {
                return Err("calls are counted from 1".into());
            }
            if from { When::From(n) } else { When::Nth(n) }
        }
    };
    let (target, code) = if target == "device-lost" {
        if site.is_some() {
            return Err("device-lost counts every call, from anywhere".into());
        }
        (Target::DeviceLost, code.unwrap_or(DEVICE_LOST))
    } else {
        let name = function(target)?;
        let code = code.ok_or_else(|| format!("{name}@...: which code? (=CODE)"))?;
        (Target::Function(name), code)
    };
    // A lost device stays lost: from the Nth call on.
    let when = match (&target, when) {
        (Target::DeviceLost, When::Nth(n)) => When::From(n),
        (_, w) => w,
    };
    Ok(Fault {
        target,
        when,
        site,
        action: Action::Fail(code),
        machine,
    })
}

fn parse_site(site: &str) -> Result<Site, String> {
    // The last `+0x`: a library's name may hold a `+` (libstdc++.so.6).
    if let Some((library, hex)) = site.rsplit_once("+0x") {
        let offset = u64::from_str_radix(hex, 16)
            .map_err(|_| format!("offset 0x{hex:?} is not hexadecimal"))?;
        if library.is_empty() {
            return Err("which library?".into());
        }
        return Ok(Site::Offset {
            library: library.to_owned(),
            offset,
        });
    }
    let (file, line) = site
        .rsplit_once(':')
        .ok_or_else(|| format!("site {site:?} is neither FILE:LINE nor LIBRARY+0xOFFSET"))?;
    let line: u32 = number(line, "line")?;
    if file.is_empty() || line == 0 {
        return Err(format!("site {site:?}: a file and a line from 1"));
    }
    Ok(Site::Line {
        file: file.to_owned(),
        line,
    })
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("duration {text:?} needs a unit (us, ms, s)"))?;
    let (n, unit) = text.split_at(split);
    let n: u64 = number(n, "duration")?;
    match unit {
        "us" => Ok(Duration::from_micros(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        _ => Err(format!("unit {unit:?}: us, ms or s")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(spec: &str) -> Fault {
        let mut v = parse(spec).unwrap();
        assert_eq!(v.len(), 1, "{spec}");
        v.remove(0)
    }

    #[test]
    fn the_grammar_parses_every_form() {
        let f = one("aclrtMalloc@3=207001");
        assert_eq!(f.target, Target::Function("aclrtMalloc"));
        assert_eq!(
            (f.when, f.action, f.machine),
            (When::Nth(3), Action::Fail(207_001), false)
        );
        assert!(f.takes(3) && !f.takes(2) && !f.takes(4));
        let f = one("aclrtMapMem@2+=207001@machine");
        assert_eq!((f.when, f.machine), (When::From(2), true));
        assert!(f.takes(2) && f.takes(9) && !f.takes(1));
        assert_eq!(one("aclrtFree@*=107000").when, When::Every);
        let f = one("aclrtMemcpy@1:src/loader.c:88=107000");
        assert_eq!(
            f.site,
            Some(Site::Line {
                file: "src/loader.c".into(),
                line: 88
            })
        );
        let f = one("aclrtMemcpy@2:libfoo.so+0x1a2b=107000");
        assert_eq!(
            f.site,
            Some(Site::Offset {
                library: "libfoo.so".into(),
                offset: 0x1a2b
            })
        );
        let f = one("aclrtMemcpy@1:libstdc++.so.6+0x10=107000");
        assert_eq!(
            f.site,
            Some(Site::Offset {
                library: "libstdc++.so.6".into(),
                offset: 0x10
            })
        );
        let f = one("device-lost@50");
        assert_eq!(f.when, When::From(50), "a lost device stays lost");
        assert_eq!(
            (f.target, f.action),
            (Target::DeviceLost, Action::Fail(DEVICE_LOST))
        );
        assert_eq!(one("device-lost@5=507053").action, Action::Fail(507_053));
        let f = one("aclrtSynchronizeStream~200ms");
        assert_eq!(f.action, Action::Delay(Duration::from_millis(200)));
        assert_eq!(f.when, When::Every);
        assert_eq!(
            parse(" aclrtMalloc@1=207001 ; ;aclrtFree@1=107000")
                .unwrap()
                .len(),
            2
        );
        assert_eq!(parse("").unwrap(), []);
    }

    #[test]
    fn a_bad_spec_is_an_error_naming_the_item() {
        for (spec, why) in [
            ("aclrtMallocc@1=207001", "not a function of the catalogue"),
            ("aclrtGetSocName@1=1", "does not return a status"),
            ("aclrtMalloc@1", "which code"),
            ("aclrtMalloc@0=207001", "from 1"),
            ("aclrtMalloc@x=207001", "not a number"),
            ("aclrtMalloc@1=0", "success"),
            ("aclrtMalloc@1=abc", "not a number"),
            (
                "aclrtMalloc@1=99999999999",
                "code 99999999999 is out of range",
            ),
            (
                "aclrtMalloc@99999999999999999999=207001",
                "call number 99999999999999999999 is out of range",
            ),
            ("aclrtMalloc@1:a.c:4294967296=207001", "out of range"),
            ("aclrtMalloc=207001", "no @"),
            ("aclrtMalloc@1:loader.c=207001", "neither"),
            ("aclrtMalloc@1:loader.c:0=207001", "from 1"),
            ("aclrtMalloc@1:libx.so+12=207001", "neither"),
            ("aclrtMalloc@1:libx.so+0xzz=207001", "hexadecimal"),
            ("device-lost@1:a.c:3", "every call"),
            ("aclrtMalloc~5", "unit"),
            ("aclrtMalloc~5h", "unit"),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.reason.contains(why), "{spec}: {e}");
            assert!(e.to_string().contains(spec), "{e}");
        }
        let many = vec!["aclrtMalloc@1=207001@machine"; MACHINE_FAULTS + 1].join(";");
        assert!(parse(&many).is_err());
    }

    #[test]
    fn sites_match_by_file_end_and_by_library_offset() {
        let line = Site::Line {
            file: "loader.c".into(),
            line: 88,
        };
        assert!(line.matches("a.out", 0, Some(("/src/app/loader.c", 88))));
        assert!(!line.matches("a.out", 0, Some(("/src/app/myloader.c", 88))));
        assert!(!line.matches("a.out", 0, Some(("loader.c", 89))));
        assert!(!line.matches("a.out", 0, None));
        let off = Site::Offset {
            library: "libfoo.so".into(),
            offset: 0x40,
        };
        assert!(off.matches("/usr/lib/libfoo.so", 0x40, None));
        assert!(!off.matches("/usr/lib/libfoo.so", 0x41, None));
        assert!(!off.matches("/usr/lib/libbar.so", 0x40, None));
    }
}
