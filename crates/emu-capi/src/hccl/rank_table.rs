//! Communicators from a rank table (`RANK_TABLE_FILE`,
//! `HcclCommInitClusterInfo(Config)`): every rank knows rank 0's address
//! from the table, so rank 0 serves the rendezvous there and the others
//! connect to it, as they do to a root info's.
//!
//! The table is HCCL's JSON (`docs/hccl.md`): `status` "completed", and a
//! `server_list` whose servers list their `device`s, each with
//! `device_id`, `device_ip`, `device_port` (optional: 60000, the first of
//! HCCL's ports) and `rank_id`; the values are strings, as in HCCL's
//! examples (numbers are taken too). Ranks must be 0 to n-1, each once.

use std::net::{IpAddr, SocketAddr};

use serde_json::Value;

use super::types::Hccl;

/// One rank of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankEntry {
    /// `rank_id`.
    pub rank: u32,
    /// `device_id`.
    pub device: u32,
    /// `device_ip` and `device_port`: where this rank listens.
    pub addr: SocketAddr,
}

/// HCCL's first port, for a device without `device_port`.
const BASE_PORT: u16 = 60000;

fn number(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_str()?.trim().parse().ok())
}

/// The ranks of a table, by rank; any defect is `HCCL_E_PARA` with a
/// message naming it.
pub fn parse(text: &str) -> Result<Vec<RankEntry>, String> {
    let table: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    match table.get("status").and_then(Value::as_str) {
        Some("completed") => {}
        other => return Err(format!("status is {other:?}, not \"completed\"")),
    }
    let servers = table
        .get("server_list")
        .and_then(Value::as_array)
        .ok_or("no server_list")?;
    let mut ranks = Vec::new();
    for server in servers {
        let devices = server
            .get("device")
            .and_then(Value::as_array)
            .ok_or("a server without a device list")?;
        for d in devices {
            let field = |k: &str| d.get(k).ok_or_else(|| format!("a device without {k}"));
            let rank = number(field("rank_id")?).ok_or("a rank_id that is not a number")?;
            let device = number(field("device_id")?).ok_or("a device_id that is not a number")?;
            let ip: IpAddr = field("device_ip")?
                .as_str()
                .and_then(|s| s.trim().parse().ok())
                .ok_or("a device_ip that is not an IP address")?;
            let port = match d.get("device_port") {
                None => BASE_PORT,
                Some(p) => number(p)
                    .and_then(|p| u16::try_from(p).ok())
                    .filter(|p| *p > 0)
                    .ok_or("a device_port that is not a port")?,
            };
            ranks.push(RankEntry {
                rank: u32::try_from(rank).map_err(|_| "a rank_id out of range")?,
                device: u32::try_from(device).map_err(|_| "a device_id out of range")?,
                addr: SocketAddr::new(ip, port),
            });
        }
    }
    ranks.sort_by_key(|r| r.rank);
    if ranks.is_empty() || ranks.iter().enumerate().any(|(i, r)| r.rank as usize != i) {
        return Err("the rank_ids are not 0 to n-1, each once".into());
    }
    Ok(ranks)
}

/// Reads and parses the table at `path`: unreadable is
/// `HCCL_E_OPEN_FILE_FAILURE`, malformed `HCCL_E_PARA`.
pub fn load(path: &str) -> Result<Vec<RankEntry>, Hccl> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        eprintln!("aclmem-hccl: rank table {path}: {e}");
        Hccl::E_OPEN_FILE_FAILURE
    })?;
    parse(&text).map_err(|e| {
        eprintln!("aclmem-hccl: rank table {path}: {e}");
        Hccl::E_PARA
    })
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
        let ranks = parse(table).unwrap();
        assert_eq!(ranks.len(), 3);
        assert_eq!(ranks[0].addr, "10.0.0.1:16667".parse().unwrap());
        assert_eq!(ranks[1].addr.port(), 60000);
        assert_eq!(ranks[2].device, 0);
        assert!(
            parse(&table.replace("completed", "initializing"))
                .unwrap_err()
                .contains("status")
        );
        assert!(parse(&table.replace(r#""rank_id":2"#, r#""rank_id":5"#)).is_err());
        assert!(
            parse(&table.replace("10.0.0.2", "host-b"))
                .unwrap_err()
                .contains("device_ip")
        );
        assert!(parse("[").is_err());
    }
}
