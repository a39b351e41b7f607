//! HCCL's rank table (`RANK_TABLE_FILE`, `HcclCommInitClusterInfo`): which
//! ranks run where. `aclmem run --rank-table-hosts` writes one with
//! [`RankTable::for_hosts`]; the emulated HCCL reads it with
//! [`RankTable::parse`] and [`RankTable::ranks`]. The JSON is documented
//! in `docs/formats.md`.
//!
//! The table is HCCL's JSON: `status` "completed", and a `server_list`
//! whose servers list their `device`s, each with `device_id`, `device_ip`,
//! `device_port` (optional: 60000, the first of HCCL's ports) and
//! `rank_id`. Numbers are written as strings, as in HCCL's examples, and
//! read either way. Ranks must be 0 to n-1, each once.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use serde::{Deserialize, Serialize};

/// HCCL's first port, for a device without `device_port`.
pub const BASE_PORT: u16 = 60000;

/// A rank table, as HCCL's JSON holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankTable {
    /// "completed" for a table that may be used.
    pub status: String,
    /// The table's format version ("1.0").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How many servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_count: Option<Number>,
    /// The servers.
    pub server_list: Vec<Server>,
}

/// One server (host) of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Server {
    /// The server's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_id: Option<String>,
    /// Its devices, one rank each.
    pub device: Vec<Device>,
}

/// One device of a server: one rank.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Device {
    /// The device's id on its server.
    pub device_id: Number,
    /// Where the rank listens (an IP address, as text).
    pub device_ip: String,
    /// The port it listens on; [`BASE_PORT`] when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_port: Option<Number>,
    /// The rank.
    pub rank_id: Number,
}

/// A number written as a string (as HCCL writes them) and read from a
/// string or a JSON number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Number(pub u64);

impl Serialize for Number {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Number, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a non-negative integer, or a string holding one")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Number, E> {
                Ok(Number(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Number, E> {
                u64::try_from(v)
                    .map(Number)
                    .map_err(|_| E::custom("a negative number"))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Number, E> {
                v.trim()
                    .parse()
                    .map(Number)
                    .map_err(|_| E::custom(format!("{v:?} is not a number")))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// One rank of a table, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankEntry {
    /// `rank_id`.
    pub rank: u32,
    /// `device_id`.
    pub device: u32,
    /// `device_ip` and `device_port`: where this rank listens.
    pub addr: SocketAddr,
}

impl RankTable {
    /// The table of `hosts`, each with `devices` NPUs: host i's device d is
    /// rank `i * devices + d`, listening on `port + d`. `None` when the
    /// ports do not fit.
    pub fn for_hosts(hosts: &[IpAddr], devices: u32, port: u16) -> Option<RankTable> {
        if u64::from(port) + u64::from(devices) > 65536 {
            return None;
        }
        let server_list = hosts
            .iter()
            .enumerate()
            .map(|(node, ip)| Server {
                server_id: Some(format!("node_{node}")),
                device: (0..devices)
                    .map(|d| Device {
                        device_id: Number(d.into()),
                        device_ip: ip.to_string(),
                        device_port: Some(Number(u64::from(port) + u64::from(d))),
                        rank_id: Number(node as u64 * u64::from(devices) + u64::from(d)),
                    })
                    .collect(),
            })
            .collect();
        Some(RankTable {
            status: "completed".into(),
            version: Some("1.0".into()),
            server_count: Some(Number(hosts.len() as u64)),
            server_list,
        })
    }

    /// Reads a table's JSON; a defect is named.
    pub fn parse(text: &str) -> Result<RankTable, String> {
        serde_json::from_str(text).map_err(|e| format!("not a rank table: {e}"))
    }

    /// The table's JSON, as HCCL writes it.
    pub fn to_json(&self) -> String {
        // A table of strings and numbers always serialises.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The ranks, by rank; a defect (status not "completed", an address
    /// that is not one, a port out of range, ranks that are not 0 to n-1)
    /// is named.
    pub fn ranks(&self) -> Result<Vec<RankEntry>, String> {
        if self.status != "completed" {
            return Err(format!("status is {:?}, not \"completed\"", self.status));
        }
        let mut ranks = Vec::new();
        for d in self.server_list.iter().flat_map(|s| &s.device) {
            let ip: IpAddr = d
                .device_ip
                .trim()
                .parse()
                .map_err(|_| "a device_ip that is not an IP address")?;
            let port = match d.device_port {
                None => BASE_PORT,
                Some(Number(p)) => u16::try_from(p)
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or("a device_port that is not a port")?,
            };
            ranks.push(RankEntry {
                rank: u32::try_from(d.rank_id.0).map_err(|_| "a rank_id out of range")?,
                device: u32::try_from(d.device_id.0).map_err(|_| "a device_id out of range")?,
                addr: SocketAddr::new(ip, port),
            });
        }
        ranks.sort_by_key(|r| r.rank);
        if ranks.is_empty() || ranks.iter().enumerate().any(|(i, r)| r.rank as usize != i) {
            return Err("the rank_ids are not 0 to n-1, each once".into());
        }
        Ok(ranks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_read_as_hccl_writes_them_and_defects_named() {
        let table = r#"{"status":"completed","version":"1.0","server_count":"2","server_list":[
            {"server_id":"a","device":[{"device_id":"0","device_ip":"10.0.0.1","device_port":"16667","rank_id":"0"},
                                       {"device_id":"1","device_ip":"10.0.0.1","rank_id":"1"}]},
            {"server_id":"b","device":[{"device_id":0,"device_ip":"10.0.0.2","rank_id":2}]}]}"#;
        let ranks = RankTable::parse(table).unwrap().ranks().unwrap();
        assert_eq!(ranks.len(), 3);
        assert_eq!(ranks[0].addr, "10.0.0.1:16667".parse().unwrap());
        assert_eq!(ranks[1].addr.port(), BASE_PORT);
        assert_eq!(ranks[2].device, 0);
        let ranks_of = |t: &str| RankTable::parse(t).and_then(|t| t.ranks());
        assert!(
            ranks_of(&table.replace("completed", "initializing"))
                .unwrap_err()
                .contains("status")
        );
        assert!(ranks_of(&table.replace(r#""rank_id":2"#, r#""rank_id":5"#)).is_err());
        assert!(
            ranks_of(&table.replace("10.0.0.2", "host-b"))
                .unwrap_err()
                .contains("device_ip")
        );
        assert!(ranks_of(&table.replace(r#""rank_id":2"#, r#""rank_id":-2"#)).is_err());
        assert!(ranks_of("[").is_err());
    }

    #[test]
    fn a_written_table_reads_back_as_the_same_ranks() {
        let hosts: Vec<IpAddr> = vec!["10.1.0.1".parse().unwrap(), "10.1.0.2".parse().unwrap()];
        let table = RankTable::for_hosts(&hosts, 4, 29000).unwrap();
        let text = table.to_json();
        // HCCL's convention: numbers as strings.
        assert!(text.contains(r#""rank_id": "7""#), "{text}");
        let back = RankTable::parse(&text).unwrap();
        assert_eq!(back, table);
        let ranks = back.ranks().unwrap();
        assert_eq!(ranks.len(), 8);
        assert_eq!(ranks[5].addr, "10.1.0.2:29001".parse().unwrap());
        assert_eq!(ranks[5].device, 1);
        assert!(RankTable::for_hosts(&hosts, 8, 65530).is_none());
    }
}
