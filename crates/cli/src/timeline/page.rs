//! The HTML page: each track's points, markers and call stacks, and the
//! arrows from exports to imports, as the data of the page's script.

use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::path::Path;

use super::lifetimes::Flow;
use super::perfetto::Calls;
use super::tracks::{SPACE, Tracks};

/// The page of `trace` and the names of its tracks, as it lists them:
/// `tracks` by process, then name, with the stacks of `sites` and the
/// markers of `markers`, and the arrows of `flows`; times are from `t0`
/// (the first record's, `u64::MAX` for none).
pub(super) fn page(
    trace: &Path,
    tracks: Tracks,
    calls: &Calls,
    sites: &FxHashMap<(u64, u32), String>,
    markers: &BTreeMap<u64, Vec<(u64, String)>>,
    flows: &[Flow],
    t0: u64,
) -> (String, Vec<String>) {
    // Tracks by process, then name, as the page lists them.
    let mut tracks = tracks.all;
    tracks.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let pids: std::collections::BTreeSet<u64> = tracks.iter().map(|(p, ..)| *p).collect();
    let name = |pid: u64, device: &str| {
        if pids.len() > 1 {
            format!("process {pid}, {device}")
        } else {
            device.to_owned()
        }
    };
    let t0 = if t0 == u64::MAX { 0 } else { t0 };
    let mut names = Vec::new();
    let mut page_tracks = Vec::new();
    for (pid, device, _, track) in &tracks {
        let n = name(*pid, device);
        names.push(n.clone());
        let points: Vec<serde_json::Value> = track
            .points
            .iter()
            .map(|p| {
                serde_json::json!([
                    p.t - t0.min(p.t),
                    p.phys,
                    p.mapped,
                    calls.name(p.call),
                    p.size,
                    p.site
                ])
            })
            .collect();
        // The stacks of the calls the page shows.
        let track_sites: serde_json::Map<String, serde_json::Value> = track
            .points
            .iter()
            .filter(|p| p.site != 0)
            .filter_map(|p| {
                sites
                    .get(&(*pid, p.site))
                    .map(|text| (p.site.to_string(), text.clone().into()))
            })
            .collect();
        let marks: Vec<serde_json::Value> = markers
            .get(pid)
            .map(|m| {
                m.iter()
                    .map(|(t, name)| serde_json::json!([t - t0.min(*t), name]))
                    .collect()
            })
            .unwrap_or_default();
        page_tracks.push(serde_json::json!({
            "name": n,
            "markers": marks,
            "points": points,
            "records": track.records,
            "peak_phys": track.peak_phys,
            "peak_mapped": track.peak_mapped,
            "levels": track.levels,
            "more_levels": track.more_levels,
            "space": device == SPACE,
            "sites": track_sites,
        }));
    }
    let flows: Vec<serde_json::Value> = flows
        .iter()
        .map(|(share, from, pid, t, ret)| {
            serde_json::json!({
                "share": share,
                "from": from.map(|(p, ft)| serde_json::json!([p, ft - t0.min(ft)])),
                "to": [pid, t - t0.min(*t)],
                "ret": ret,
            })
        })
        .collect();
    let html = PAGE
        .replace(
            "/*DATA*/",
            &serde_json::Value::from(page_tracks).to_string(),
        )
        .replace("/*FLOWS*/", &serde_json::Value::from(flows).to_string())
        .replace(
            "/*TITLE*/",
            &trace.display().to_string().replace('<', "&lt;"),
        );
    (html, names)
}

const PAGE: &str = include_str!("page.html");
