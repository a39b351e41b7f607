//! `cargo xtask publish-check`: the crates meant for crates.io are ready
//! to publish (docs/releasing.md).
//!
//! First, from `cargo metadata`, without compiling: exactly the crates of
//! [`PUBLISHED`] are publishable, each has the metadata its crates.io and
//! docs.rs pages need, and their dependencies allow publishing them one by
//! one in that order. Then `cargo publish --dry-run --workspace`, which
//! packages every publishable crate and builds each from its package,
//! resolving the unpublished ones among them from the packages themselves
//! (cargo skips the `publish = false` members).

use serde_json::Value;
use xshell::{Shell, cmd};

use crate::workspace::{Result, cargo, run, step};

/// The crates published to crates.io, in the order they are published: each
/// after every workspace crate it depends on. Every other member of the
/// workspace has `publish = false`.
pub(crate) const PUBLISHED: &[&str] = &[
    "aclmem-core",
    "aclmem-fork",
    "aclmem-cmem",
    "aclmem-sys",
    "aclmem-hal",
    "aclmem-rc-stub",
    "aclmem-emu",
    "aclmem-driver",
    "aclmem-formats",
    "aclmem-ops",
    "aclmem-hccl",
    "aclmem-emu-capi",
    "aclmem",
    "aclmem-cli",
];

/// The targets docs.rs builds each published crate for.
const DOCS_RS_TARGETS: &[&str] = &["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"];

/// Runs both checks; `no_verify` packages without building.
pub(crate) fn check(sh: &Shell, no_verify: bool) -> Result<()> {
    step("crates.io metadata and publishing order", || metadata(sh))?;
    let cargo = cargo();
    let no_verify = no_verify.then_some("--no-verify");
    step("cargo publish --dry-run (every publishable crate)", || {
        forget_unpacked_packages()?;
        // Cargo never rebuilds a registry package whose version it has
        // built: the dry run builds in a target directory of its own,
        // emptied first, so no build of an earlier run's packages is reused.
        let scratch = crate::workspace::target_dir().join("publish-check");
        crate::workspace::remove_dir_if_present(&scratch)?;
        let _dir = sh.push_env("CARGO_TARGET_DIR", &scratch);
        run(cmd!(
            sh,
            "{cargo} publish --dry-run --workspace --allow-dirty {no_verify...}"
        ))
    })
}

/// Removes the copies of this workspace's packages that an earlier dry run
/// unpacked into cargo's registry sources. The dry run serves the packages
/// to each other from a registry in the target directory and unpacks them
/// under `$CARGO_HOME/registry/src/-<hash of that path>/`; a later run from
/// the same path with changed sources but the same version finds the old
/// unpacked copy complete and builds against it (a dependent crate then
/// misses what was added since). Only those directories go: the name of a
/// crates.io source directory never starts with `-`.
fn forget_unpacked_packages() -> Result<()> {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set")?;
    let Ok(sources) = std::fs::read_dir(home.join("registry").join("src")) else {
        return Ok(());
    };
    for registry in sources.flatten() {
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        let Ok(unpacked) = std::fs::read_dir(registry.path()) else {
            continue;
        };
        for dir in unpacked.flatten() {
            let name = dir.file_name().to_string_lossy().into_owned();
            let ours = PUBLISHED.iter().any(|p| {
                name.strip_prefix(p)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
            });
            if ours {
                crate::workspace::remove_dir_if_present(&dir.path())?;
            }
        }
    }
    Ok(())
}

/// The workspace's packages, as `cargo metadata --no-deps` describes them.
pub(crate) fn packages(sh: &Shell) -> Result<Vec<Value>> {
    let cargo = cargo();
    let c = cmd!(sh, "{cargo} metadata --no-deps --format-version 1");
    eprintln!("$ {c}");
    let json = c.read().map_err(|e| e.to_string())?;
    let mut meta: Value = serde_json::from_str(&json).map_err(|e| e.to_string())?;
    match meta["packages"].take() {
        Value::Array(packages) => Ok(packages),
        _ => Err("cargo metadata lists no packages".into()),
    }
}

fn metadata(sh: &Shell) -> Result<()> {
    let packages = &packages(sh)?;
    let mut problems = Vec::new();
    for p in packages {
        let name = p["name"].as_str().unwrap_or("?");
        // `publish = false` is an empty list of registries.
        let publishable = p["publish"].as_array().is_none_or(|r| !r.is_empty());
        match (PUBLISHED.contains(&name), publishable) {
            (true, true) => problems.extend(
                package_problems(p, packages)
                    .into_iter()
                    .map(|e| format!("{name}: {e}")),
            ),
            (false, false) => {}
            (true, false) => problems.push(format!(
                "{name}: listed in xtask/src/publish.rs but has `publish = false`"
            )),
            (false, true) => problems.push(format!(
                "{name}: not in xtask/src/publish.rs's list of published crates: add it there (and to docs/releasing.md), or set `publish = false`"
            )),
        }
    }
    if problems.is_empty() {
        eprintln!(
            "{} crates to publish, in this order: {}",
            PUBLISHED.len(),
            PUBLISHED.join(", ")
        );
        Ok(())
    } else {
        Err(format!("\n  {}", problems.join("\n  ")))
    }
}

/// What keeps one published crate's page or upload from being right.
fn package_problems(p: &Value, packages: &[Value]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut need = |field: &str| {
        if p[field].as_str().is_none_or(str::is_empty) {
            problems.push(format!("no `{field}`"));
        }
    };
    for field in [
        "description",
        "license",
        "repository",
        "readme",
        "rust_version",
    ] {
        need(field);
    }
    let keywords = strings(&p["keywords"]);
    if keywords.is_empty() || keywords.len() > 5 {
        problems.push(format!("{} keywords (1 to 5)", keywords.len()));
    }
    for k in keywords {
        let valid = k.len() <= 20
            && k.starts_with(|c: char| c.is_ascii_lowercase())
            && k.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_+".contains(c));
        if !valid {
            problems.push(format!(
                "keyword `{k}`: at most 20 characters, lowercase ASCII letters, digits, `-`, `_`, `+`, starting with a letter"
            ));
        }
    }
    let categories = strings(&p["categories"]).len();
    if categories == 0 || categories > 5 {
        problems.push(format!("{categories} categories (1 to 5)"));
    }
    let targets = strings(&p["metadata"]["docs"]["rs"]["targets"]);
    if targets != DOCS_RS_TARGETS {
        problems.push(format!(
            "[package.metadata.docs.rs] targets are {targets:?}, not {DOCS_RS_TARGETS:?}"
        ));
    }
    let name = p["name"].as_str().unwrap_or("?");
    let position = |n: &str| PUBLISHED.iter().position(|x| *x == n);
    for dep in p["dependencies"].as_array().into_iter().flatten() {
        let dep_name = dep["name"].as_str().unwrap_or("?");
        // Only the workspace's own crates (path dependencies) matter here.
        if dep["path"].is_null() || !packages.iter().any(|q| q["name"] == dep_name) {
            continue;
        }
        let dev = dep["kind"] == "dev";
        // A path dependency without a version is "*", which cargo leaves
        // out of the published manifest (allowed for dev-dependencies only).
        let versioned = dep["req"] != "*";
        let before = position(dep_name).is_some_and(|d| Some(d) < position(name));
        match (dev, versioned, before) {
            (false, false, _) => problems.push(format!(
                "depends on {dep_name} without a version: give it one in [workspace.dependencies]"
            )),
            (false, true, false) => problems.push(format!(
                "depends on {dep_name}, which is not published before it (xtask/src/publish.rs)"
            )),
            (true, true, false) => problems.push(format!(
                "dev-depends on {dep_name} with a version, but {dep_name} is not published before it: make that dev-dependency path-only"
            )),
            _ => {}
        }
    }
    problems
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}
