//! `cargo xtask ci`: every check CI runs, stopping at the first failure,
//! and the checks only CI makes (lints alike everywhere, `no_std` trees,
//! the library's exports, generated documents up to date).

use std::path::{Path, PathBuf};
use std::time::Instant;

use xshell::{Shell, cmd};

use crate::workspace::{
    PYTHON_MANIFEST, Result, SHELL_MANIFESTS, TestCounts, build_lib, cargo, run, step,
};
use crate::{cross, examples, fuzz, publish, python, timeline, torch_npu, wheels};

pub(crate) fn ci(sh: &Shell) -> Result<()> {
    let cargo = cargo();
    let start = Instant::now();
    step("tools CI needs (apt, when missing)", || {
        cross::provision(sh)
    })?;
    step("format", || {
        run(cmd!(sh, "{cargo} fmt --all -- --check"))?;
        for manifest in SHELL_MANIFESTS {
            run(cmd!(
                sh,
                "{cargo} fmt --manifest-path {manifest} -- --check"
            ))?;
        }
        Ok(())
    })?;
    step("clippy", || {
        run(cmd!(
            sh,
            "{cargo} clippy --workspace --all-targets --all-features -- -D warnings"
        ))
    })?;
    let mut lib = PathBuf::new();
    step("build the emulated libascendcl.so", || {
        lib = build_lib(sh, false)?;
        Ok(())
    })?;
    step("libascendcl.so exports the ACL symbols", || {
        check_exports(sh, &lib)
    })?;
    let mut host = TestCounts::default();
    step(
        "tests (the driver loads the library through $ACLMEM_ASCENDCL)",
        || {
            let env = [
                ("ACLMEM_ASCENDCL", lib.display().to_string()),
                // Installed above: its tests may not pass by its absence.
                ("ACLMEM_TEST_REQUIRE_ONEDNN", "1".to_owned()),
            ];
            host = cross::cargo_test(cross::TEST_ARGS, &env, false)?;
            eprintln!("x86_64: {host}");
            Ok(())
        },
    )?;
    step(
        "the crates with features, every feature on (defmt-1, facade backends)",
        || {
            // Only these crates declare features (clippy and rustdoc above
            // already take every feature for the whole workspace); the
            // other members' tests ran in the step before, and running them
            // again with defmt's derives on would only repeat them.
            let _env = sh.push_env("ACLMEM_ASCENDCL", &lib);
            let packages: Vec<String> = featured_crates(sh)?
                .into_iter()
                .flat_map(|p| ["-p".to_owned(), p])
                .collect();
            run(cmd!(sh, "{cargo} test --all-features {packages...}"))
        },
    )?;
    step("ui tests (trybuild, pinned toolchain)", || {
        run(cmd!(sh, "{cargo} test -p aclmem-ui-tests"))
    })?;
    step("rustdoc -D warnings", || {
        let _env = sh.push_env("RUSTDOCFLAGS", "-D warnings");
        // With default features too: links to feature-gated items must not
        // break for a reader of the default build.
        run(cmd!(sh, "{cargo} doc --workspace --no-deps"))?;
        run(cmd!(sh, "{cargo} doc --workspace --no-deps --all-features"))
    })?;
    step("generated docs (rules, error table) are up to date", || {
        check_generated_docs(sh)
    })?;
    step("no_std crates depend on no std-only crate", || {
        check_no_std_trees(sh)
    })?;
    step("examples", || {
        for example in ["alias", "share"] {
            run(cmd!(
                sh,
                "{cargo} run --quiet -p aclmem --example {example} --features emu"
            ))?;
        }
        Ok(())
    })?;
    step("clippy -D warnings on the Python native module", || {
        same_lints(sh)?;
        run(cmd!(
            sh,
            "{cargo} clippy --manifest-path {PYTHON_MANIFEST} --all-targets -- -D warnings"
        ))
    })?;
    let mut pyacl = PathBuf::new();
    step("the Python package: pip install ./python, pytest", || {
        pyacl = python::test(sh, &lib)?;
        Ok(())
    })?;
    step(
        "real torch_npu on the emulated CANN libraries (tests/torch_npu)",
        || torch_npu::test(sh, &lib, &pyacl),
    )?;
    step("fuzzing smoke run (2,000 executions per target)", || {
        run(cmd!(
            sh,
            "{cargo} clippy --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings"
        ))?;
        fuzz::fuzz(sh, 0, Some(2000), &[], false).map(drop)
    })?;
    step(
        "C and C++ examples against the emulated libascendcl.so",
        || examples::run_all(sh, &lib, &examples::Toolchain::native()),
    )?;
    step("the memory timeline renders in headless chromium", || {
        timeline::check(sh, &lib)
    })?;
    step(
        "the x86_64 wheel (manylinux_2_28), installed and used without Rust, its collectives without the system's Gloo",
        || {
            let built = wheels::wheels(sh, &["x86_64-unknown-linux-gnu".into()])?;
            wheels::check(sh, &built)
        },
    )?;
    let aarch64 = cross::cross(
        sh,
        &cross::Options {
            targets: Vec::new(),
            no_run: false,
            release: false,
        },
    )?;
    step("aarch64 runs the same tests as x86_64", || match aarch64 {
        Some(a) if a.passed == host.passed && a.failed == 0 => {
            eprintln!("x86_64:  {host}\naarch64: {a}");
            Ok(())
        }
        Some(a) => Err(format!("x86_64: {host}, but aarch64: {a}")),
        None => Err("the aarch64 tests did not run".into()),
    })?;
    step(
        "the aarch64 wheel (manylinux_2_28), used by aarch64 Python under qemu, its HCCL on two ranks",
        || {
            let built = wheels::wheels(sh, &["aarch64-unknown-linux-gnu".into()])?;
            wheels::check(sh, &built)
        },
    )?;
    step(
        "every crate meant for crates.io packages and builds (cargo publish --dry-run)",
        || publish::check(sh, false),
    )?;
    eprintln!(
        "\nxtask ci: all steps passed in {:.0}s",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The workspace's members that declare features of their own (read from
/// `cargo metadata`, so a crate that gains a feature is tested with it).
fn featured_crates(sh: &Shell) -> Result<Vec<String>> {
    let featured: Vec<String> = publish::packages(sh)?
        .iter()
        .filter(|p| p["features"].as_object().is_some_and(|f| !f.is_empty()))
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    eprintln!("crates with features: {}", featured.join(", "));
    Ok(featured)
}

/// The Python module's workspace writes out the main workspace's lints (it
/// cannot inherit them): both tables, from `[workspace.lints.rust]` to the
/// end of the manifest, must be the same text.
pub(crate) fn same_lints(sh: &Shell) -> Result<()> {
    const START: &str = "[workspace.lints.rust]";
    let lints = |path: &str| -> Result<String> {
        let text = sh.read_file(path).map_err(|e| e.to_string())?;
        let at = text
            .find(START)
            .ok_or_else(|| format!("{path} has no {START} table"))?;
        Ok(text[at..].trim().to_owned())
    };
    if lints("Cargo.toml")? != lints(PYTHON_MANIFEST)? {
        return Err(format!(
            "the lints of {PYTHON_MANIFEST} differ from the workspace's (Cargo.toml): copy them over"
        ));
    }
    Ok(())
}

/// The normal (non-dev) dependency closure of each no_std crate, with every
/// feature on and proc-macros (which run on the build host) left out, must stay inside this list of no_std crates. The bare-metal
/// builds of `cargo xtask cross` prove the same by compiling.
pub(crate) const NO_STD_CLOSURE: &[&str] = &[
    "aclmem-core",
    "aclmem-hal",
    "aclmem-rc-stub",
    "defmt",
    "bitflags",
    // With default features off (the workspace's `serde` entry): no_std.
    "serde",
    "serde_core",
    "portable-atomic",
    "heapless",
    "hash32",
    "byteorder",
    "stable_deref_trait",
];

pub(crate) fn check_no_std_trees(sh: &Shell) -> Result<()> {
    let cargo = cargo();
    for krate in ["aclmem-core", "aclmem-hal", "aclmem-rc-stub"] {
        let format = "{p}";
        let c = cmd!(
            sh,
            "{cargo} tree -p {krate} -e normal,no-proc-macro --all-features --prefix none --format {format}"
        );
        eprintln!("$ {c}");
        let tree = c.read().map_err(|e| e.to_string())?;
        for line in tree.lines().filter(|l| !l.trim().is_empty()) {
            let name = line.split_whitespace().next().unwrap_or_default();
            if !NO_STD_CLOSURE.contains(&name) {
                return Err(format!(
                    "{krate} depends on `{name}`, which is not known to be no_std"
                ));
            }
        }
        eprintln!("{krate}: {} crates, all no_std", tree.lines().count());
    }
    Ok(())
}

/// The emulated library exports exactly the functions of the catalogue
/// (`aclmem_sys::catalogue`), nothing missing and no other `acl*`,
/// `Hccl*`, `Msprof*` or `rt*` symbol.
pub(crate) fn check_exports(sh: &Shell, lib: &Path) -> Result<()> {
    let c = cmd!(sh, "nm -D --defined-only {lib}");
    eprintln!("$ {c}");
    let out = c
        .read()
        .map_err(|e| format!("{e} (is binutils installed?)"))?;
    let defined: Vec<&str> = out
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            match (f.next(), f.next(), f.next()) {
                (Some(_), Some("T"), Some(name)) => Some(name),
                _ => None,
            }
        })
        .collect();
    let listed: Vec<&str> = aclmem_sys::catalogue::entries().map(|e| e.name).collect();
    let missing: Vec<_> = listed.iter().filter(|s| !defined.contains(s)).collect();
    if !missing.is_empty() {
        return Err(format!("{} does not export {missing:?}", lib.display()));
    }
    let extra: Vec<_> = defined
        .iter()
        .filter(|s| {
            ["acl", "Hccl", "Msprof", "rt"]
                .iter()
                .any(|p| s.starts_with(p))
                // aclmem's own extensions, for tools in the process.
                && !s.starts_with("aclmem_")
                && !listed.contains(s)
        })
        .collect();
    if !extra.is_empty() {
        return Err(format!(
            "{} exports {extra:?}, which the catalogue (aclmem_sys::catalogue) does not list",
            lib.display()
        ));
    }
    eprintln!("exactly the {} listed ACL functions exported", listed.len());
    Ok(())
}

/// The documents generated from the project's tables: file and the CLI
/// arguments that print it.
pub(crate) const GENERATED_DOCS: &[(&str, &[&str])] = &[
    ("docs/rules.md", &["matrix", "--format", "markdown"]),
    ("docs/errors.md", &["errors", "--format", "markdown"]),
    ("docs/catalogue.md", &["catalogue", "--format", "markdown"]),
];

pub(crate) fn generated_doc(sh: &Shell, args: &[&str]) -> Result<String> {
    let cargo = cargo();
    let c = cmd!(sh, "{cargo} run --quiet -p aclmem-cli -- {args...}");
    eprintln!("$ {c}");
    c.read().map(|s| s + "\n").map_err(|e| e.to_string())
}

pub(crate) fn check_generated_docs(sh: &Shell) -> Result<()> {
    for (path, args) in GENERATED_DOCS {
        let want = generated_doc(sh, args)?;
        let have = sh.read_file(path).unwrap_or_default();
        if want != have {
            return Err(format!(
                "{path} differs from the table it is generated from; run `cargo xtask docs` and commit the result"
            ));
        }
    }
    Ok(())
}
