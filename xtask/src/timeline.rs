//! The memory timeline, checked in a real browser: the sleep/wake example
//! and the two-process sharing example run under `aclmem sanitize
//! --trace`, `aclmem timeline` writes their pages, and headless chromium
//! renders them. The page's own script computes the
//! summary, so the DOM chromium dumps proves the script ran; the
//! screenshot is kept in `target/timeline/` for people to look at.

use std::path::Path;

use xshell::{Shell, cmd};

use crate::workspace::{Result, run, target_dir};

pub fn check(sh: &Shell, lib: &Path) -> Result<()> {
    let dir = target_dir().join("timeline");
    sh.create_dir(&dir).map_err(|e| e.to_string())?;
    let aclmem = lib.with_file_name("aclmem");
    let example = target_dir().join("c-examples/native/sleep_wake");
    if !example.exists() {
        crate::examples::run_all(sh, lib, &crate::examples::Toolchain::native())?;
    }
    let trace = dir.join("sleep_wake.jsonl");
    let out = dir.join("sleep_wake");
    {
        let _m = sh.push_env(
            "ACLMEM_EMU_MACHINE",
            format!("xtask-timeline-{}", std::process::id()),
        );
        let _q = sh.push_env("ACLMEM_EMU_QUIET", "1");
        run(cmd!(sh, "{aclmem} sanitize --trace {trace} -- {example}").ignore_stdout())?;
    }
    run(cmd!(sh, "{aclmem} timeline {trace} -o {out}"))?;
    let html = out.with_extension("html");
    let url = format!("file://{}", html.display());
    let browser = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| cmd!(sh, "which {b}").quiet().ignore_stderr().read().is_ok())
        .ok_or("no chromium (apt-get install chromium)")?;
    let flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
    ];
    let c = cmd!(sh, "{browser} {flags...} --dump-dom {url}").ignore_stderr();
    eprintln!("$ {c}");
    let dom = c.read().map_err(|e| e.to_string())?;
    let want = "device 0: physical levels 0 MiB → 64 MiB → 0 MiB → 64 MiB → 0 MiB";
    if !dom.contains(want) {
        return Err(format!(
            "the rendered page does not show the sleep and the wake ({want:?}); its summary: {}",
            dom.split("id=\"summary\">")
                .nth(1)
                .and_then(|s| s.split('<').next())
                .unwrap_or("none")
        ));
    }
    // Every step has a tooltip naming its call (the script drew them), and
    // a mapping's names the stack that made it (a line per frame).
    if !dom.contains("<circle class=\"hit\"") || !dom.contains("<title>aclrtMapMem(") {
        return Err("the rendered page has no tooltips naming the calls".into());
    }
    let with_stack = dom.split("<title>aclrtMapMem(").skip(1).any(|t| {
        t.split("</title>")
            .next()
            .is_some_and(|title| title.lines().count() >= 3)
    });
    if !with_stack {
        return Err("the mappings' tooltips name no stack".into());
    }
    let png = dir.join("sleep_wake.png");
    let shot = format!("--screenshot={}", png.display());
    run(cmd!(
        sh,
        "{browser} {flags...} --window-size=1000,640 {shot} {url}"
    )
    .ignore_stderr())?;
    let size = std::fs::metadata(&png).map_err(|e| e.to_string())?.len();
    if size < 10_000 {
        return Err(format!(
            "{} is only {size} bytes: a blank page?",
            png.display()
        ));
    }
    eprintln!(
        "the page renders the sleep and the wake; screenshot {} ({size} bytes)",
        png.display()
    );
    sharing(sh, &aclmem, browser, &flags)
}

/// The sharing example (a parent exports, a whitelisted child imports, an
/// outsider is refused): the page has a track per process, their address
/// spaces, and the arrows from the export to the imports.
fn sharing(sh: &Shell, aclmem: &Path, browser: &str, flags: &[&str]) -> Result<()> {
    let dir = target_dir().join("timeline");
    let example = target_dir().join("c-examples/native/vmm_share");
    let trace = dir.join("vmm_share.jsonl");
    let out = dir.join("vmm_share");
    {
        let _m = sh.push_env(
            "ACLMEM_EMU_MACHINE",
            format!("xtask-timeline-share-{}", std::process::id()),
        );
        let _q = sh.push_env("ACLMEM_EMU_QUIET", "1");
        // The example imports its own export on purpose (the call is
        // refused): that finding is not what this step checks.
        run(cmd!(
            sh,
            "{aclmem} sanitize --error-exitcode 0 --trace {trace} -- {example}"
        )
        .ignore_stdout()
        .ignore_stderr())?;
    }
    run(cmd!(sh, "{aclmem} timeline {trace} -o {out}"))?;
    let url = format!("file://{}", out.with_extension("html").display());
    let dom = cmd!(sh, "{browser} {flags...} --dump-dom {url}")
        .ignore_stderr()
        .read()
        .map_err(|e| e.to_string())?;
    for want in [
        "Sharing across processes",
        "<line class=\"flow\"",
        "<rect class=\"import failed\"",
        "address space: reserved levels 0 MiB → 4 MiB",
    ] {
        if !dom.contains(want) {
            return Err(format!(
                "the sharing example's page lacks {want:?}; its summary: {}",
                dom.split("id=\"summary\">")
                    .nth(1)
                    .and_then(|s| s.split('<').next())
                    .unwrap_or("none")
            ));
        }
    }
    let png = dir.join("vmm_share.png");
    let shot = format!("--screenshot={}", png.display());
    run(cmd!(
        sh,
        "{browser} {flags...} --window-size=1000,1800 {shot} {url}"
    )
    .ignore_stderr())?;
    eprintln!(
        "the page shows both processes and the export's arrows; screenshot {}",
        png.display()
    );
    Ok(())
}
