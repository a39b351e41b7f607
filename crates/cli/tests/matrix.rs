//! `aclmem matrix`, `check`, `diff` and `errors`: every combination once, the
//! documented rules, releases as a dimension, loose names with suggestions,
//! and tables that line up.

mod cli_harness;

use cli_harness::*;

#[test]
fn json_matrix_has_every_combination_once() {
    let rows = json_rows(&["matrix", "--format", "json"]);
    assert_eq!(rows.len(), CELLS);
    let mut keys: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{}/{}/{}/{}",
                r["product"], r["run_mode"], r["location"], r["attribute"]
            )
        })
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), CELLS);
    for r in &rows {
        for field in [
            "product",
            "run_mode",
            "location",
            "attribute",
            "raw_value",
            "verdict",
        ] {
            assert!(!r[field].is_null(), "{field} missing in {r}");
        }
    }
}

#[test]
fn json_rows_are_check_reports() {
    // The record Python's `aclmem.check` returns: same keys, releases as ids.
    let rows = json_rows(&["matrix", "--cann", "8.3", "--format", "json"]);
    let huge = find(&rows, "a2", "ep", "device", "ACL_MEM_HUGE");
    let expected = aclmem_core::Checked::new(
        aclmem_core::Product::AtlasA2,
        aclmem_core::RunMode::Ep,
        aclmem_core::CannVersion::V8_3,
        aclmem_core::Location::Device,
        aclmem_core::MemAttr::MemHuge,
    )
    .report();
    assert_eq!(*huge, serde_json::to_value(expected).unwrap());
    assert_eq!(huge["allowed"], false);
    assert_eq!(huge["denial"], "needs-newer-cann");
    assert_eq!(huge["code"], 100000);
    assert_eq!(huge["since"], "8.5");
    assert!(
        huge["message"]
            .as_str()
            .unwrap()
            .starts_with("ACL_MEM_HUGE needs CANN 8.5")
    );
    let hbm = find(&rows, "a2", "ep", "device", "ACL_HBM_MEM_HUGE");
    assert_eq!((&hbm["allowed"], &hbm["code"]), (&true.into(), &0.into()));
    assert!(hbm["since"].is_null() && hbm["denial"].is_null());
}

#[test]
fn json_matrix_states_the_documented_rules() {
    let rows = json_rows(&["matrix", "--format", "json"]);
    let a2 = find(&rows, "a2", "ep", "device", "ACL_HBM_MEM_HUGE1G");
    assert_eq!(a2["verdict"], "allowed");
    assert_eq!(a2["raw_value"], 10);
    for r in rows
        .iter()
        .filter(|r| r["product"] == "200i-a2" && r["run_mode"] == "rc")
    {
        assert_eq!(r["verdict"], "denied");
        assert_eq!(r["code"], 207000);
    }
    for r in rows
        .iter()
        .filter(|r| r["location"] == "host" && r["attribute"] == "ACL_HBM_MEM_HUGE1G")
    {
        assert_eq!(r["verdict"], "denied", "{r}");
    }
    let ddr = find(&rows, "a3", "ep", "device", "ACL_DDR_MEM_HUGE");
    assert_eq!(ddr["code"], 100000);
    assert_eq!(
        find(&rows, "a3", "ep", "device", "ACL_MEM_P2P_HUGE1G")["verdict"],
        "allowed-if-device-confirms"
    );
    assert_eq!(
        find(&rows, "a3", "ep", "host-numa", "ACL_MEM_P2P_HUGE")["verdict"],
        "size-limited-by-platform"
    );
}

#[test]
fn product_filter_and_other_formats() {
    assert_eq!(
        json_rows(&["matrix", "--product", "a2", "--format", "json"]).len(),
        PER_PLATFORM
    );
    assert_eq!(
        json_rows(&["matrix", "--product", "200i-a2", "--format", "json"]).len(),
        2 * PER_PLATFORM // EP and RC form
    );
    let (ok, table) = aclmem(&["matrix", "--product", "training"]);
    assert!(ok);
    assert!(table.contains("AtlasTraining"));
    assert!(!table.contains("AtlasA2"));
    let (ok, md) = aclmem(&["matrix", "--format", "markdown"]);
    assert!(ok);
    // One table per release.
    assert_eq!(
        md.matches("\n## CANN ").count(),
        aclmem_core::CannVersion::COUNT
    );
    assert!(md.contains("## Values refused everywhere"));
    let (ok, _) = aclmem(&["matrix", "--product", "nope"]);
    assert!(!ok);
}

#[test]
fn check_subcommand() {
    let (ok, out) = aclmem(&[
        "check",
        "--soc",
        "Ascend910B3",
        "--location",
        "device",
        "--attr",
        "ACL_HBM_MEM_HUGE1G",
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("allowed"));
    let (ok, out) = aclmem(&[
        "check",
        "--soc",
        "Ascend310B1",
        "--run-mode",
        "rc",
        "--location",
        "host",
        "--attr",
        "3",
    ]);
    assert!(!ok);
    assert!(out.contains("207000"), "{out}");
    let (ok, _) = aclmem(&[
        "check",
        "--soc",
        "Ascend123",
        "--location",
        "host",
        "--attr",
        "3",
    ]);
    assert!(!ok);
}

#[test]
fn names_are_matched_loosely_and_misspellings_get_suggestions() {
    let (ok, out) = aclmem(&[
        "check",
        "--soc",
        "ascend910b3",
        "--location",
        "DEVICE",
        "--attr",
        "HbmHuge1G",
    ]);
    assert!(ok, "{out}");
    assert!(
        out.contains("ACL_HBM_MEM_HUGE1G at ACL_MEM_LOCATION_TYPE_DEVICE: allowed"),
        "{out}"
    );
    let out = bin()
        .args([
            "check",
            "--soc",
            "Ascend910B9",
            "--location",
            "device",
            "--attr",
            "4",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("did you mean `Ascend910B` or `Ascend910B1`"),
        "{err}"
    );
    assert!(err.contains("`Ascend910B3`"), "{err}");
    assert!(
        !err.contains("((") && !err.contains("))"),
        "no nested brackets: {err}"
    );
    let out = bin()
        .args([
            "check",
            "--soc",
            "Ascend910B3",
            "--location",
            "device",
            "--attr",
            "HbmHugee",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean `HbmHuge`?"), "{err}");
}

#[test]
fn releases_are_a_dimension_of_the_matrix() {
    let rows = json_rows(&["matrix", "--cann", "8.0", "--format", "json"]);
    assert_eq!(rows.len(), CELLS);
    assert!(rows.iter().all(|r| r["cann"] == "8.0"));
    let a2 = |rows: &[serde_json::Value], loc: &str, attr: &str| {
        find(rows, "a2", "ep", loc, attr)["verdict"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(a2(&rows, "device", "ACL_HBM_MEM_HUGE"), "allowed");
    assert_eq!(a2(&rows, "device", "ACL_HBM_MEM_HUGE1G"), "denied");
    assert_eq!(a2(&rows, "device", "ACL_MEM_HUGE"), "denied");
    for r in rows
        .iter()
        .filter(|r| r["product"] == "a2" && r["location"] != "device")
    {
        assert_eq!(r["verdict"], "denied", "{r}");
    }
    let rows = json_rows(&["matrix", "--cann", "8.3", "--format", "json"]);
    assert_eq!(a2(&rows, "device", "ACL_HBM_MEM_HUGE1G"), "allowed");
    assert_eq!(a2(&rows, "device", "ACL_MEM_HUGE"), "denied");
    assert_eq!(
        find(&rows, "a2", "ep", "device", "ACL_MEM_HUGE")["since"],
        "8.5"
    );
    assert_eq!(a2(&rows, "host", "ACL_HBM_MEM_HUGE"), "denied");
    let rows = json_rows(&["matrix", "--cann", "8.5.0", "--format", "json"]);
    assert_eq!(a2(&rows, "device", "ACL_MEM_HUGE"), "allowed");
    assert_eq!(a2(&rows, "host", "ACL_HBM_MEM_HUGE"), "allowed");
    assert_eq!(a2(&rows, "host-numa", "ACL_MEM_HUGE"), "denied");
    // 9.0 is the default, and the same table apart from the field.
    let strip = |mut rows: Vec<serde_json::Value>| {
        for r in &mut rows {
            r.as_object_mut().unwrap().remove("cann");
        }
        rows
    };
    assert_eq!(
        strip(json_rows(&["matrix", "--cann", "9.0", "--format", "json"])),
        strip(json_rows(&["matrix", "--format", "json"]))
    );
    let (ok, _) = aclmem(&["matrix", "--cann", "8.4"]);
    assert!(!ok);
}

#[test]
fn diff_lists_one_line_per_changed_combination() {
    let (ok, out) = aclmem(&["diff", "8.0", "9.0", "--product", "a2"]);
    assert!(ok);
    let lines: Vec<&str> = out.lines().skip(1).collect();
    assert!(
        out.starts_with(&format!(
            "{} combination(s) change from CANN 8.0 to CANN 9.0:",
            lines.len()
        )),
        "{out}"
    );
    for want in [
        ("device", "ACL_HBM_MEM_HUGE1G"),
        ("device", "ACL_MEM_HUGE"),
        ("host", "ACL_HBM_MEM_HUGE"),
        ("host-numa", "ACL_DDR_MEM_HUGE"),
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.contains(want.0) && l.contains(&format!(" {} ", want.1))),
            "{want:?} missing:\n{out}"
        );
    }
    assert!(
        lines
            .iter()
            .all(|l| l.contains("refused (") && l.contains("-> allowed")),
        "{out}"
    );
    let (ok, out) = aclmem(&["diff", "9.0", "9.0"]);
    assert!(ok);
    assert_eq!(
        out.trim(),
        "0 combination(s) change from CANN 9.0 to CANN 9.0:"
    );
}

/// stderr of a failing run.
fn refused(args: &[&str]) -> String {
    let out = bin().args(args).output().expect("aclmem runs");
    assert!(!out.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn markdown_of_one_release_is_its_section_of_the_document() {
    let (ok, document) = aclmem(&["matrix", "--format", "markdown"]);
    assert!(ok);
    for cann in aclmem_core::CannVersion::ALL {
        let (ok, one) = aclmem(&["matrix", "--cann", cann.id(), "--format", "markdown"]);
        assert!(ok, "{cann}");
        assert!(one.starts_with(&format!("## {cann}\n")), "{one}");
        assert_eq!(one.matches("\n## ").count(), 0, "one release only:\n{one}");
        assert!(
            document.contains(&one),
            "{cann}: not a section of docs/rules.md"
        );
        // A header, a separator and a row per location and attribute.
        assert_eq!(
            one.lines().filter(|l| l.starts_with('|')).count(),
            2 + PER_PLATFORM
        );
    }
    // --product alone: the default release, that product's columns only.
    let (ok, a2) = aclmem(&["matrix", "--product", "a2", "--format", "markdown"]);
    assert!(ok);
    let default = aclmem_core::CannVersion::DEFAULT;
    assert!(a2.starts_with(&format!("## {default}\n")), "{a2}");
    let header = a2.lines().find(|l| l.starts_with("| location")).unwrap();
    assert_eq!(header, "| location | attribute | `AtlasA2` |");
}

#[test]
fn diff_lists_only_verdicts_that_change() {
    let (ok, out) = aclmem(&["diff", "8.3", "9.0"]);
    assert!(ok);
    let lines: Vec<&str> = out.lines().skip(1).collect();
    assert!(!lines.is_empty());
    for line in &lines {
        let (was, is) = line.split_once(" -> ").expect("an arrow");
        let was = was.rsplit("  ").next().unwrap().trim();
        assert_ne!(was, is.trim(), "unchanged verdict listed: {line}");
    }
    // Atlas 350 refuses ACL_MEM_HUGE1G on the device in both releases with
    // 207000 (in 8.3 because the product is not supported yet, in 9.0
    // because the attribute is not): the same answer, not listed.
    let rows = |cann: &str| {
        json_rows(&[
            "matrix",
            "--cann",
            cann,
            "--product",
            "atlas350",
            "--format",
            "json",
        ])
    };
    let (old, new) = (rows("8.3"), rows("9.0"));
    let code = |rows: &[serde_json::Value]| {
        find(rows, "atlas350", "ep", "device", "ACL_MEM_HUGE1G")["code"].clone()
    };
    assert_eq!((code(&old), code(&new)), (207000.into(), 207000.into()));
    assert!(
        !lines.iter().any(|l| l.starts_with("Atlas350")
            && l.contains(" device ")
            && l.contains(" ACL_MEM_HUGE1G ")),
        "{out}"
    );
    // The columns line up.
    let arrows: Vec<usize> = lines.iter().map(|l| l.find(" -> ").unwrap()).collect();
    assert!(arrows.windows(2).all(|w| w[0] == w[1]), "{out}");
}

#[test]
fn a_misspelt_release_or_attribute_gets_one_good_suggestion() {
    let err = refused(&["matrix", "--cann", "8.4"]);
    assert!(
        err.contains("`8.4` is not a CANN release aclmem models; did you mean `8.3`?"),
        "{err}"
    );
    assert_eq!(err.matches("did you mean").count(), 1, "{err}");
    assert!(
        err.contains("expected one of: 8.0, 8.1, 8.2, 8.3, 8.5, 9.0, 9.1"),
        "{err}"
    );
    // Newer than every modelled release: the newest, whose rules apply.
    assert!(refused(&["diff", "8.3", "9.2"]).contains("did you mean `9.1`?"));
    assert!(refused(&["matrix", "--cann", "7.0"]).contains("did you mean `8.0`?"));
    assert!(refused(&["matrix", "--cann", "8,3"]).contains("did you mean `8.3`?"));
    assert!(!refused(&["matrix", "--cann", "latest"]).contains("did you mean"));
    let attr = |a: &str| {
        refused(&[
            "check",
            "--soc",
            "Ascend910B3",
            "--location",
            "device",
            "--attr",
            a,
        ])
    };
    let err = attr("MEM_HUGE");
    assert!(
        err.contains("unknown memory attribute `MEM_HUGE`; did you mean `ACL_MEM_HUGE`?"),
        "{err}"
    );
    assert_eq!(err.matches("did you mean").count(), 1, "{err}");
    assert!(attr("hbm_mem_huge1g").contains("did you mean `ACL_HBM_MEM_HUGE1G`?"));
    let err = refused(&["matrix", "--product", "a22"]);
    assert!(
        err.contains("unknown product `a22`; did you mean `a2`?"),
        "{err}"
    );
    // Nothing of a one-letter name is left in a suggestion: none.
    let err = refused(&["matrix", "--product", "x"]);
    assert!(
        err.contains("unknown product `x`\nexpected one of: atlas350, a3"),
        "{err}"
    );
}

#[test]
fn errors_table_has_a_header_row_and_aligned_columns() {
    let (ok, out) = aclmem(&["errors"]);
    assert!(ok);
    let mut lines = out.lines();
    let header = lines.next().unwrap();
    let words: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(words, ["situation", "code", "name", "basis", "meaning"]);
    let meaning = header.find("meaning").unwrap();
    for line in lines {
        assert_eq!(&line[meaning - 2..meaning], "  ", "{line}");
        assert_ne!(&line[meaning..=meaning], " ", "{line}");
    }
}

/// Where each column of a matrix grid starts: after two spaces.
fn column_starts(line: &str) -> Vec<usize> {
    let b = line.as_bytes();
    (2..b.len())
        .filter(|&i| b[i] != b' ' && b[i - 1] == b' ' && b[i - 2] == b' ')
        .collect()
}

fn matrix_lines(columns: Option<&str>) -> String {
    let mut cmd = bin();
    cmd.args(["matrix", "--cann", "8.3"]).env_remove("COLUMNS");
    if let Some(c) = columns {
        cmd.env("COLUMNS", c);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn matrix_columns_line_up_and_fit_the_terminal() {
    for (columns, limit) in [(None, 100), (Some("100"), 100), (Some("80"), 80)] {
        let out = matrix_lines(columns);
        for line in out.lines() {
            assert!(line.chars().count() <= limit, "{columns:?}: {line}");
        }
        let grid: Vec<&str> = out.lines().filter(|l| l.starts_with("  ")).collect();
        assert_eq!(
            grid.len(),
            aclmem_core::PLATFORMS.len() * (1 + aclmem_core::MemAttr::ALLOCATABLE.len())
        );
        let header = column_starts(grid[0]);
        assert_eq!(
            header.len(),
            1 + aclmem_core::Location::ALL.len(),
            "{}",
            grid[0]
        );
        for line in &grid {
            assert_eq!(
                column_starts(line),
                header,
                "{columns:?}: misaligned\n{line}"
            );
        }
    }
    // Wide enough: the cells as in docs/rules.md; narrow: compact.
    assert!(matrix_lines(None).contains("no (207000, from 9.0)"));
    let narrow = matrix_lines(Some("80"));
    assert!(
        narrow.contains("no (207000) 9.0+") && !narrow.contains(", from "),
        "{narrow}"
    );
}
