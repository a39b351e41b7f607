//! The report of the faults tried: a table by outcome on stderr, one JSON
//! line per fault in `--log`, and the count of each outcome.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use super::judge::{Outcome, Tried};
use super::learn::Point;

/// Reports `results` (sorted by outcome, then in the order planned), the
/// faults tried at `points`' sites; `timeout` is a run's. Whether every
/// fault was handled.
pub(super) fn report(
    results: &[Tried],
    points: &[Point],
    timeout: Duration,
    mut log: Option<std::fs::File>,
) -> Result<bool, String> {
    // Sites that two points share (two calls of one function on one line):
    // the table adds the library offset that tells them apart.
    let mut per_site: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for p in points {
        *per_site.entry((&p.function, &p.site)).or_default() += 1;
    }
    let mut counts: BTreeMap<Outcome, usize> = BTreeMap::new();
    let mut last = None;
    for Tried {
        point: p,
        nth,
        code,
        spec,
        outcome,
        findings,
        exit,
        place,
        ..
    } in results
    {
        *counts.entry(*outcome).or_default() += 1;
        if last != Some(*outcome) {
            eprintln!("{}:", outcome.name());
            last = Some(*outcome);
        }
        let at = place
            .as_ref()
            .map(|w| format!(", at {}", w.site))
            .unwrap_or_default();
        let what = match outcome {
            Outcome::Hang => format!(
                "no end within {} s{}",
                timeout.as_secs(),
                place
                    .as_ref()
                    .map(|w| format!(", waiting at {}", w.site))
                    .unwrap_or_default()
            ),
            Outcome::Crash => {
                let signal = place
                    .as_ref()
                    .map_or(exit.unwrap_or(128) - 128, |w| w.signal);
                format!("killed by signal {signal}{at}")
            }
            Outcome::Handled => format!("exit {}", exit.unwrap_or_default()),
            _ => findings
                .iter()
                .map(|f| format!("{} at {}", f.class, f.site))
                .collect::<Vec<_>>()
                .join("; "),
        };
        let shared = per_site
            .get(&(p.function.as_str(), p.site.as_str()))
            .is_some_and(|n| *n > 1);
        let site = if shared {
            format!("{} ({}+{})", p.site, p.object, p.offset)
        } else {
            p.site.clone()
        };
        eprintln!("  {}@{nth} at {site} = {code}: {what}", p.function);
        if let Some(f) = &mut log {
            let record = serde_json::json!({
                "function": p.function,
                "nth": nth,
                "code": code,
                "site": p.site,
                "fault": spec,
                "outcome": outcome.name(),
                "exit": exit,
                "findings": findings.iter().map(|f| serde_json::json!({
                    "class": f.class,
                    "site": f.site,
                })).collect::<Vec<_>>(),
                "where": place.as_ref().map(|w| serde_json::json!({
                    "site": w.site,
                    "stack": w.stack,
                    "signal": w.signal,
                    "pid": w.pid,
                })),
            });
            writeln!(f, "{record}").map_err(|e| e.to_string())?;
        }
    }
    let summary: Vec<String> = counts
        .iter()
        .map(|(o, n)| format!("{n} {}", o.name()))
        .collect();
    eprintln!(
        "aclmem explore: {} fault(s): {}",
        results.len(),
        summary.join(", ")
    );
    Ok(counts.keys().all(|o| *o == Outcome::Handled))
}
