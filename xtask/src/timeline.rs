//! The memory timeline, checked in a real browser: the sleep/wake example
//! runs under `aclmem sanitize --trace`, `aclmem timeline` writes the page,
//! and headless chromium renders it. The page's own script computes the
//! summary, so the DOM chromium dumps proves the script ran; the
//! screenshot is kept in `target/timeline/` for people to look at.

use std::path::Path;

use xshell::{Shell, cmd};

use crate::{Result, run, target_dir};

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
    // Every step has a tooltip naming its call (the script drew them).
    if !dom.contains("<circle class=\"hit\"") || !dom.contains("<title>aclrtMapMem(") {
        return Err("the rendered page has no tooltips naming the calls".into());
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
    Ok(())
}
