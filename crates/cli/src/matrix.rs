//! Renders the support matrix from the rules table, from
//! `aclmem_core::matrix` (the cells, their text, the markdown document of
//! `docs/rules.md`): the text table sizes its columns to their contents
//! and to the terminal; one release's markdown is that release's section
//! of the document; JSON is one `CheckReport` per cell.

use aclmem_core::matrix::{Cell, Markdown, Matrix};
use aclmem_core::{CannVersion, CheckReport, Checked, Denial, Location, MemAttr, Product, Verdict};

/// Every platform × location × attribute in version `cann`, optionally for
/// one product only.
pub fn rows(product: Option<Product>, cann: CannVersion) -> Vec<Checked> {
    Matrix { cann, product }.cells().collect()
}

/// The rows as JSON: one [`CheckReport`] each, the record Python's
/// `aclmem.check` returns too.
pub fn json(rows: &[Checked]) -> String {
    let items: Vec<CheckReport> = rows.iter().map(Checked::report).collect();
    let mut out = serde_json::to_string_pretty(&items).expect("reports always serialise");
    out.push('\n');
    out
}

/// Spaces before each column of the text table.
const GAP: usize = 2;

/// A cell of the text table, in full (`no (207000, from 9.0)`, the
/// markdown's form) or compact (`no (207000) 9.0+`).
fn cell_text(result: Result<Verdict, Denial>, compact: bool) -> String {
    match result {
        Err(d) if compact => match d.since() {
            Some(since) => format!("no ({}) {}+", d.code().code(), since.id()),
            None => Cell(result).to_string(),
        },
        _ => Cell(result).to_string(),
    }
}

/// The text table of one release: a grid per platform (attributes down,
/// locations across), every column as wide as its widest entry. When the
/// full cells would make a line wider than `width`, refusals that a later
/// release lifts are written compactly (`no (207000) 9.0+`).
pub fn table(product: Option<Product>, cann: CannVersion, width: Option<usize>) -> String {
    let matrix = Matrix { cann, product };
    let attr_width = MemAttr::ALLOCATABLE
        .iter()
        .map(|a| a.c_name().len())
        .chain(["attribute".len()])
        .max()
        .unwrap_or(0);
    let cell_width = |compact: bool| {
        matrix
            .cells()
            .map(|c| cell_text(c.result, compact).len())
            .chain(Location::ALL.iter().map(|l| l.id().len()))
            .max()
            .unwrap_or(0)
    };
    let line_width = |cells: usize| GAP + attr_width + Location::ALL.len() * (GAP + cells);
    let compact = width.is_some_and(|w| line_width(cell_width(false)) > w);
    let cell_w = cell_width(compact);
    let mut out = format!("{cann} rules\n\n");
    let row = |out: &mut String, head: &str, cells: &[String]| {
        let mut line = format!("{:GAP$}{head:<attr_width$}", "");
        for c in cells {
            line += &format!("{:GAP$}{c:<cell_w$}", "");
        }
        *out += line.trim_end();
        out.push('\n');
    };
    for platform in matrix.platforms() {
        out += &format!(
            "{} ({}, {} form)\n",
            platform.marker,
            platform.product.doc_name(),
            platform.run_mode
        );
        let heads: Vec<String> = Location::ALL.iter().map(|l| l.id().to_owned()).collect();
        row(&mut out, "attribute", &heads);
        for attr in MemAttr::ALLOCATABLE {
            let cells: Vec<String> = Location::ALL
                .iter()
                .map(|&location| {
                    let c = Checked::new(platform.product, platform.run_mode, cann, location, attr);
                    cell_text(c.result, compact)
                })
                .collect();
            row(&mut out, attr.c_name(), &cells);
        }
        out.push('\n');
    }
    // The legend fits 80 columns too.
    out += "[1] allowed where the device confirms the feature, else 207000 at allocation\n\
            [2] allowed; the largest size depends on the server model and BIOS\n\
            no (100000) = ACL_ERROR_INVALID_PARAM\n\
            no (207000) = ACL_ERROR_RT_FEATURE_NOT_SUPPORT\n";
    out += if compact {
        "no (207000) 9.0+ = refused by this release, allowed from 9.0 on\n"
    } else {
        "no (207000, from 9.0) = refused by this release, allowed from 9.0 on\n"
    };
    out
}

/// The markdown table of one release (of one product's platforms, or all):
/// for every product, the same text as that release's section of
/// `docs/rules.md`.
pub fn markdown_release(product: Option<Product>, cann: CannVersion) -> String {
    let matrix = Matrix { cann, product };
    let mut out = format!("## {cann}\n\n| location | attribute |");
    for p in matrix.platforms() {
        out += &format!(" `{}` |", p.marker);
    }
    out += "\n|---|---|";
    for _ in matrix.platforms() {
        out += "---|";
    }
    out.push('\n');
    for location in Location::ALL {
        for attr in MemAttr::ALLOCATABLE {
            out += &format!("| {} | `{}` |", location.id(), attr.c_name());
            for p in matrix.platforms() {
                let cell = Checked::new(p.product, p.run_mode, cann, location, attr);
                out += &format!(" {} |", Cell(cell.result));
            }
            out.push('\n');
        }
    }
    out.push('\n');
    out
}

/// `docs/rules.md`: one table per CANN version.
pub fn markdown() -> String {
    Markdown.to_string()
}

/// What changed from `from` to `to`: one line per platform × location ×
/// attribute whose verdict, as printed (allowed, or refused with a code),
/// differs. A refusal whose reason changed but whose code did not is not
/// listed: a program sees the same answer.
pub fn diff(from: CannVersion, to: CannVersion, product: Option<Product>) -> Vec<String> {
    let old = rows(product, from);
    let new = rows(product, to);
    let changed: Vec<(&Checked, String, String)> = old
        .iter()
        .zip(&new)
        .map(|(a, b)| (a, describe(&a.result), describe(&b.result)))
        .filter(|(_, was, is)| was != is)
        .collect();
    let marker = |c: &Checked| c.report().marker.unwrap_or(c.product.id());
    let width = |f: &dyn Fn(&Checked) -> usize| changed.iter().map(|(c, ..)| f(c)).max();
    let (w1, w2, w3, w4) = (
        width(&|c| marker(c).len()).unwrap_or(0),
        width(&|c| c.location.id().len()).unwrap_or(0),
        width(&|c| c.attr.c_name().len()).unwrap_or(0),
        changed
            .iter()
            .map(|(_, was, _)| was.len())
            .max()
            .unwrap_or(0),
    );
    changed
        .iter()
        .map(|(c, was, is)| {
            format!(
                "{:<w1$}  {:<w2$}  {:<w3$}  {was:<w4$} -> {is}",
                marker(c),
                c.location.id(),
                c.attr.c_name()
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
