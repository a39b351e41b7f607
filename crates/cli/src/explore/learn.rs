//! What the learning run saw: the program's call sites, each with its
//! function and how often it was called (the emulated library's
//! `ACLMEM_EMU_CALL_LOG`), and the site filter a fault there takes.

use std::collections::BTreeMap;
use std::path::Path;

/// One call site of the program, as the learning run saw it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Point {
    pub(super) function: String,
    pub(super) object: String,
    pub(super) offset: String,
    /// `file:line`, or `object+offset` without debug information.
    pub(super) site: String,
    /// Whether `site` is a Python script's line (the fault is filtered by
    /// it, not by the native offset, which every line of the script shares).
    pub(super) python: bool,
    pub(super) count: u64,
}

impl Point {
    /// The site filter of a fault at this point.
    pub(super) fn filter(&self) -> String {
        if self.python {
            self.site.clone()
        } else {
            format!("{}+{}", self.object, self.offset)
        }
    }
}

/// Reads the learning run's call log.
pub(super) fn points(path: &Path, only: &[String]) -> Vec<Point> {
    let mut by_site: BTreeMap<(String, String, String, Option<String>), Point> = BTreeMap::new();
    for line in std::fs::read_to_string(path).unwrap_or_default().lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let function = v["function"].as_str().unwrap_or_default().to_owned();
        let object = v["object"].as_str().unwrap_or_default().to_owned();
        let offset = v["offset"].as_str().unwrap_or_default().to_owned();
        if function.is_empty() || object.is_empty() {
            continue;
        }
        if !only.is_empty() && !only.contains(&function) {
            continue;
        }
        let site = match (v["file"].as_str(), v["line"].as_u64()) {
            (Some(f), Some(l)) => format!("{}:{l}", f.rsplit('/').next().unwrap_or(f)),
            _ => format!("{object}+{offset}"),
        };
        let python = v["python"].as_bool() == Some(true) && v["line"].is_u64();
        let count = v["count"].as_u64().unwrap_or(1);
        by_site
            .entry((
                function.clone(),
                object.clone(),
                offset.clone(),
                python.then(|| site.clone()),
            ))
            .and_modify(|p| p.count = p.count.max(count))
            .or_insert(Point {
                function,
                object,
                offset,
                site,
                python,
                count,
            });
    }
    by_site.into_values().collect()
}
