//! Renders the support matrix from the rules table.

use std::fmt::Write as _;

use aclmem_core::{CannVersion, Denial, Location, MemAttr, PLATFORMS, Platform, Product, Verdict};

/// One cell of the matrix.
pub struct Row {
    pub platform: Platform,
    pub cann: CannVersion,
    pub location: Location,
    pub attr: MemAttr,
    pub result: Result<Verdict, Denial>,
}

/// Every platform × location × attribute in version `cann`, optionally for
/// one product only.
pub fn rows(product: Option<Product>, cann: CannVersion) -> Vec<Row> {
    PLATFORMS
        .iter()
        .filter(|p| product.is_none_or(|want| p.product == want))
        .flat_map(|platform| {
            Location::ALL.into_iter().flat_map(move |location| {
                MemAttr::ALLOCATABLE.into_iter().map(move |attr| Row {
                    platform: *platform,
                    cann,
                    location,
                    attr,
                    result: platform.check(cann, location, attr),
                })
            })
        })
        .collect()
}

/// A cell in a few characters: `yes`, `yes [1]`, `no (100000)`, `no (207000) ≥8.5`.
pub fn short(result: &Result<Verdict, Denial>) -> String {
    match result {
        Ok(Verdict::Allowed) => "yes".into(),
        Ok(Verdict::AllowedIfDeviceConfirms) => "yes [1]".into(),
        Ok(Verdict::SizeLimitedByPlatform) => "yes [2]".into(),
        Err(d) => match d.since() {
            Some(since) => format!("no ({}, from {})", d.code().code(), since.id()),
            None => format!("no ({})", d.code().code()),
        },
    }
}

pub fn json(rows: &[Row]) -> String {
    let items: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let mut v = serde_json::json!({
                "cann": r.cann.id(),
                "product": r.platform.product.id(),
                "product_name": r.platform.product.doc_name(),
                "marker": r.platform.marker,
                "run_mode": r.platform.run_mode.id(),
                "location": r.location.id(),
                "location_raw": r.location.raw(),
                "attribute": r.attr.c_name(),
                "attribute_marker": r.attr.marker_name(),
                "raw_value": r.attr.raw(),
                "granularity": r.attr.granularity(),
            });
            match r.result {
                Ok(verdict) => {
                    v["verdict"] = verdict.id().into();
                }
                Err(d) => {
                    v["verdict"] = "denied".into();
                    v["reason"] = d.id().into();
                    v["rule"] = d.rule().into();
                    v["acl_error"] = d.code().code().into();
                    v["acl_error_name"] = d.code().name().into();
                    if let Some(since) = d.since() {
                        v["since"] = since.id().into();
                    }
                }
            }
            v
        })
        .collect();
    let mut out = serde_json::to_string_pretty(&items).expect("JSON values always serialise");
    out.push('\n');
    out
}

/// A grid per platform: attributes down, locations across.
fn grids(rows: &[Row], mut emit: impl FnMut(&mut String, &Platform, &[&Row])) -> String {
    let mut out = String::new();
    for platform in PLATFORMS {
        let cells: Vec<&Row> = rows.iter().filter(|r| r.platform == *platform).collect();
        if !cells.is_empty() {
            emit(&mut out, platform, &cells);
        }
    }
    out
}

fn cell<'a>(cells: &[&'a Row], attr: MemAttr, location: Location) -> &'a Row {
    cells
        .iter()
        .find(|r| r.attr == attr && r.location == location)
        .expect("the grid is complete")
}

pub fn table(rows: &[Row]) -> String {
    let cann = rows.first().map_or(CannVersion::DEFAULT, |r| r.cann);
    let mut out = format!("{cann} rules\n\n");
    out.push_str(&grids(rows, |out, platform, cells| {
        let _ = writeln!(
            out,
            "{} ({}, {} form)",
            platform.marker,
            platform.product.doc_name(),
            platform.run_mode
        );
        let _ = writeln!(
            out,
            "  {:<24} {:<20} {:<20} {:<20}",
            "attribute", "device", "host", "host-numa"
        );
        for attr in MemAttr::ALLOCATABLE {
            let _ = write!(out, "  {:<24}", attr.c_name());
            for location in Location::ALL {
                let _ = write!(out, " {:<20}", short(&cell(cells, attr, location).result));
            }
            out.push('\n');
        }
        out.push('\n');
    }));
    out.push_str(LEGEND);
    out
}

const LEGEND: &str = "\
[1] allowed only where the device confirms the feature; otherwise 207000 at allocation time
[2] allowed; the largest size depends on the server model and BIOS
no (100000) = ACL_ERROR_INVALID_PARAM, no (207000) = ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
\"from 8.5\": refused by this release, allowed from that release on
";

/// `docs/rules.md`: one table per CANN version (attribute × location down,
/// platforms across).
pub fn markdown() -> String {
    let mut out = String::from(
        "<!-- Generated by `cargo run -p aclmem-cli -- matrix --format markdown`; \
         do not edit. `cargo xtask docs` regenerates it and `cargo xtask ci` checks it. -->\n\
         # aclmem support matrix\n\n\
         Which memory attribute `aclrtMallocPhysical` accepts at which location on which Ascend \
         product, in each CANN release aclmem models, generated from the single rules table in \
         `crates/core/src/rules.rs`. The same table makes a refused combination a compile error \
         and drives the run-time `aclmem_core::check`. The facts and their sources are in \
         `docs/facts.md`.\n\n\
         - **yes**: allowed.\n\
         - **yes [1]**: allowed only where the device confirms the feature; otherwise the runtime \
         answers 207000 at allocation time.\n\
         - **yes [2]**: allowed; the largest size depends on the server model and BIOS.\n\
         - **no (code)**: refused, with the ACL error the runtime returns: 100000 \
         `ACL_ERROR_INVALID_PARAM`, 207000 `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`; \
         **no (code, from 8.5)**: this release refuses it, 8.5 and later allow it.\n\n\
         Granularity: 2 MiB for every attribute except the `*_HUGE1G` ones (1 GiB). \
         `aclmem matrix --cann 8.3` prints one release; `aclmem diff 8.3 9.0` lists what \
         changed between two.\n\n\
         Releases: 8.0 = 8.0.RC1 – 8.0.0, 8.1 = 8.1.RC1, 8.2 = 8.2.RC1, 8.3 = 8.3.RC1, \
         8.5 = 8.5.0, 9.0 = 9.0.0.\n\n",
    );
    for cann in CannVersion::ALL.into_iter().rev() {
        let rows = rows(None, cann);
        let _ = writeln!(out, "## {cann}\n");
        out.push_str("| location | attribute |");
        for p in PLATFORMS {
            let _ = write!(out, " `{}` |", p.marker);
        }
        out.push('\n');
        out.push_str("|---|---|");
        for _ in PLATFORMS {
            out.push_str("---|");
        }
        out.push('\n');
        for location in Location::ALL {
            for attr in MemAttr::ALLOCATABLE {
                let _ = write!(out, "| {} | `{}` |", location.id(), attr.c_name());
                for p in PLATFORMS {
                    let r = rows
                        .iter()
                        .find(|r| r.platform == *p && r.location == location && r.attr == attr)
                        .expect("the grid is complete");
                    let _ = write!(out, " {} |", short(&r.result));
                }
                out.push('\n');
            }
        }
        out.push('\n');
    }
    out.push_str(
        "## Values refused everywhere\n\n\
         `ACL_DDR_MEM` (0), `ACL_HBM_MEM` (1), `ACL_HBM_MEM_P2P_HUGE` (8), `ACL_HBM_MEM_P2P_NORMAL` \
         (9) and `ACL_HBM_MEM_P2P_HUGE1G` (11) have no marker type; `aclrtMallocPhysical` answers \
         them with 100000.\n",
    );
    out
}

/// What changed from `from` to `to`: one line per platform × location ×
/// attribute whose answer differs.
pub fn diff(from: CannVersion, to: CannVersion, product: Option<Product>) -> Vec<String> {
    let old = rows(product, from);
    let new = rows(product, to);
    old.iter()
        .zip(&new)
        .filter(|(a, b)| a.result != b.result)
        .map(|(a, b)| {
            format!(
                "{:<16} {:<10} {:<24} {} -> {}",
                a.platform.marker,
                a.location.id(),
                a.attr.c_name(),
                describe(&a.result),
                describe(&b.result)
            )
        })
        .collect()
}

fn describe(result: &Result<Verdict, Denial>) -> String {
    match result {
        Ok(v) => v.to_string(),
        Err(d) => format!("refused ({})", d.code().code()),
    }
}
