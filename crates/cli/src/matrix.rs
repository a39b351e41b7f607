//! Renders the support matrix from the rules table: the text table and the
//! markdown are `aclmem_core::matrix`'s (so the core's tests see what a new
//! table row changes); JSON is one `CheckReport` per cell.

use aclmem_core::matrix::{Markdown, Matrix};
use aclmem_core::{CannVersion, CheckReport, Checked, Denial, Product, Verdict};

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

/// The text table of one release.
pub fn table(product: Option<Product>, cann: CannVersion) -> String {
    Matrix { cann, product }.table().to_string()
}

/// `docs/rules.md`: one table per CANN version.
pub fn markdown() -> String {
    Markdown.to_string()
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
            let marker = a.report().marker.unwrap_or(a.product.id());
            format!(
                "{:<16} {:<10} {:<24} {} -> {}",
                marker,
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
