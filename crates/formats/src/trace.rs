//! The memory timeline (`ACLMEM_SANITIZER_TRACE`): one [`Record`] per
//! call of every process of a run, read by `aclmem timeline` (its page,
//! Perfetto and memory_viz outputs) and by `aclmem replay`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The device a record's totals are of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Device<'a> {
    /// A device, by id.
    Id(u32),
    /// `"host"`: memory of the host's pool.
    Named(#[serde(borrow)] Cow<'a, str>),
}

impl Device<'_> {
    /// The host's pool.
    pub const HOST: Device<'static> = Device::Named(Cow::Borrowed("host"));
}

/// One record: a call (time, process, thread, function, size, result),
/// the totals of the device it changed, and what the physical-memory calls
/// carry for a replay. Strings are borrowed from the line when they can be
/// (a long trace is read without a copy per record).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record<'a> {
    /// When, in µs of the monotonic clock.
    #[serde(default)]
    pub t: u64,
    /// The process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u64>,
    /// The thread.
    #[serde(default)]
    pub tid: i64,
    /// The function (`phase` for a phase marker, `sites` for the record
    /// that describes the call sites).
    #[serde(
        borrow,
        default,
        deserialize_with = "borrowed",
        skip_serializing_if = "Option::is_none"
    )]
    pub call: Option<Cow<'a, str>>,
    /// The size the call asked for.
    #[serde(default)]
    pub size: u64,
    /// What it answered.
    #[serde(default)]
    pub ret: i64,
    /// The device whose totals follow.
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    pub device: Option<Device<'a>>,
    /// Its physical bytes held by the process, after the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phys: Option<u64>,
    /// Its mapped bytes, after the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapped: Option<u64>,
    /// A phase marker's name (`aclmem_sanitizer_phase`, mstx).
    #[serde(
        borrow,
        default,
        deserialize_with = "borrowed",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<Cow<'a, str>>,
    /// The address of a reservation or mapping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub va: Option<u64>,
    /// The physical handle made, freed, mapped, exported or imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h: Option<u64>,
    /// The shareable handle (or IPC key) of an export or import.
    #[serde(
        borrow,
        default,
        deserialize_with = "borrowed",
        skip_serializing_if = "Option::is_none"
    )]
    pub share: Option<Cow<'a, str>>,
    /// The call site's number (described by the process's `sites`
    /// record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<u32>,
    /// A `sites` record: every call site's frames, by number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sites: Option<BTreeMap<String, Vec<String>>>,
    /// `aclrtMallocPhysical`'s memory attribute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attr: Option<u32>,
    /// `aclrtMallocPhysical`'s location type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loc: Option<u32>,
    /// `aclrtMallocPhysical`'s location id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
    /// `aclrtReserveMemAddress`'s alignment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<u64>,
    /// `aclrtReserveMemAddress`'s flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<u64>,
}

/// An optional string, borrowed from the line when it has no escapes
/// (serde borrows a `Cow` itself, not one inside an `Option`).
fn borrowed<'de: 'a, 'a, D>(d: D) -> Result<Option<Cow<'a, str>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);
    Option::<Borrowed<'a>>::deserialize(d).map(|o| o.map(|b| b.0))
}

impl<'a> Record<'a> {
    /// A record of `call` with nothing else set.
    pub fn of(call: &'a str) -> Record<'a> {
        Record {
            call: Some(Cow::Borrowed(call)),
            ..Record::default()
        }
    }

    /// The function, or `?`.
    pub fn call(&self) -> &str {
        self.call.as_deref().unwrap_or("?")
    }

    /// The device's id, if the record names a device (not the host).
    pub fn device_id(&self) -> Option<u32> {
        match self.device {
            Some(Device::Id(d)) => Some(d),
            _ => None,
        }
    }

    /// The record with its strings owned (to keep beyond its line).
    pub fn into_owned(self) -> Record<'static> {
        let own = |s: Option<Cow<'_, str>>| s.map(|s| Cow::Owned(s.into_owned()));
        Record {
            call: own(self.call),
            name: own(self.name),
            share: own(self.share),
            device: self.device.map(|d| match d {
                Device::Id(n) => Device::Id(n),
                Device::Named(s) => Device::Named(Cow::Owned(s.into_owned())),
            }),
            sites: self.sites,
            ..Record {
                call: None,
                name: None,
                share: None,
                device: None,
                sites: None,
                ..self
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_borrow_their_strings() {
        let mut r = Record::of("aclrtMapMem");
        r.t = 5;
        r.pid = Some(3);
        r.device = Some(Device::Id(1));
        r.va = Some(0x1000);
        let line = serde_json::to_string(&r).unwrap();
        assert_eq!(
            line,
            r#"{"t":5,"pid":3,"tid":0,"call":"aclrtMapMem","size":0,"ret":0,"device":1,"va":4096}"#
        );
        let back: Record<'_> = serde_json::from_str(&line).unwrap();
        assert!(matches!(back.call, Some(Cow::Borrowed(_))));
        assert_eq!(back, r);
        let host: Record<'_> = serde_json::from_str(r#"{"device":"host"}"#).unwrap();
        assert_eq!(host.device, Some(Device::HOST));
        assert_eq!(host.call(), "?");
    }
}
