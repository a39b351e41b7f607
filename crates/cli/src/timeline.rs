//! `aclmem timeline trace.jsonl`: the sanitizer's memory trace as a
//! Perfetto / Chrome trace (`<out>.json`) and a self-contained HTML page
//! (`<out>.html`) plotting each device's physical and mapped bytes.

use std::path::Path;

/// One sample of a device's memory.
struct Sample {
    t: u64,
    device: String,
    phys: u64,
    mapped: u64,
}

/// Reads the trace; writes `<out>.json` and `<out>.html`.
pub fn run(trace: &Path, out: &Path) -> Result<(usize, Vec<String>), String> {
    let text = std::fs::read_to_string(trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    let mut events = Vec::new();
    let mut samples = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| format!("{}:{}: {e}", trace.display(), i + 1))?;
        let t = v["t"].as_u64().unwrap_or(0);
        let call = v["call"].as_str().unwrap_or("?").to_owned();
        events.push(serde_json::json!({
            "name": call, "ph": "i", "s": "t", "ts": t, "pid": 1,
            "tid": v["tid"].as_i64().unwrap_or(0),
            "args": {"size": v["size"], "ret": v["ret"], "device": v["device"]},
        }));
        if let (Some(phys), Some(mapped)) = (v["phys"].as_u64(), v["mapped"].as_u64()) {
            let device = match &v["device"] {
                serde_json::Value::Number(n) => format!("device {n}"),
                serde_json::Value::String(s) => s.clone(),
                _ => "?".into(),
            };
            events.push(serde_json::json!({
                "name": format!("{device} memory"), "ph": "C", "ts": t, "pid": 1,
                "args": {"physical": phys, "mapped": mapped},
            }));
            samples.push(Sample {
                t,
                device,
                phys,
                mapped,
            });
        }
    }
    let chrome = serde_json::json!({ "traceEvents": events, "displayTimeUnit": "ms" });
    let json_path = out.with_extension("json");
    std::fs::write(&json_path, chrome.to_string()).map_err(|e| e.to_string())?;
    let mut devices: Vec<String> = samples.iter().map(|s| s.device.clone()).collect();
    devices.sort();
    devices.dedup();
    let data: Vec<serde_json::Value> = samples
        .iter()
        .map(|s| serde_json::json!([s.t, s.device, s.phys, s.mapped]))
        .collect();
    let html = PAGE
        .replace("/*DATA*/", &serde_json::Value::from(data).to_string())
        .replace(
            "/*TITLE*/",
            &trace.display().to_string().replace('<', "&lt;"),
        );
    std::fs::write(out.with_extension("html"), html).map_err(|e| e.to_string())?;
    Ok((text.lines().count(), devices))
}

const PAGE: &str = r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>aclmem memory timeline</title>
<style>
 body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; }
 h1 { font-size: 20px; margin: 0 0 4px; }
 .sub { color: #666; margin-bottom: 16px; }
 .device { margin: 18px 0; }
 .device h2 { font-size: 16px; margin: 0 0 6px; }
 svg { background: #fafafa; border: 1px solid #ddd; }
 .phys { fill: rgba(33,113,181,.18); stroke: #2171b5; stroke-width: 2; }
 .mapped { fill: none; stroke: #e6550d; stroke-width: 2; stroke-dasharray: 6 4; }
 .axis { stroke: #999; stroke-width: 1; }
 .label { fill: #555; font-size: 12px; }
 .legend span { display: inline-block; width: 14px; height: 4px; margin: 0 6px 3px 12px; }
 #summary { white-space: pre; font-family: ui-monospace, monospace; background: #f4f4f4; padding: 8px; }
</style></head>
<body>
<h1>Device memory over time</h1>
<div class="sub">From <code>/*TITLE*/</code>, written by <code>aclmem timeline</code>.
 <span class="legend"><span style="background:#2171b5"></span>physical (allocated)
 <span style="background:#e6550d"></span>mapped</span></div>
<div id="plots"></div>
<h2>Summary</h2>
<div id="summary">(the page's script did not run)</div>
<script>
const DATA = /*DATA*/;
const MIB = 1 << 20;
const fmt = b => (b / MIB).toFixed(b % MIB ? 1 : 0) + " MiB";
const byDevice = new Map();
for (const [t, d, p, m] of DATA) {
  if (!byDevice.has(d)) byDevice.set(d, []);
  byDevice.get(d).push([t, p, m]);
}
const tMax = Math.max(1, ...DATA.map(r => r[0]));
const W = 900, H = 180, L = 70, B = 28;
const lines = [];
for (const [d, rows] of [...byDevice.entries()].sort()) {
  const yMax = Math.max(MIB, ...rows.map(r => Math.max(r[1], r[2])));
  const div = document.createElement("div"); div.className = "device";
  div.innerHTML = `<h2>${d}</h2>`;
  // Over time, and call by call (short-lived dips are wide there).
  for (const [mode, xOf, xEnd, xLabel] of [
      ["over time", r => r[0], tMax, `${(tMax / 1000).toFixed(1)} ms`],
      ["call by call", (r, i) => i + 1, rows.length + 1, `${rows.length} calls`]]) {
    const x = v => L + (W - L - 10) * v / xEnd;
    const y = v => H - B - (H - B - 10) * v / yMax;
    const step = (k) => { let s = `M ${x(0)} ${y(0)}`; let last = 0;
      rows.forEach((r, i) => { s += ` L ${x(xOf(r, i))} ${y(last)} L ${x(xOf(r, i))} ${y(r[k])}`; last = r[k]; });
      return s + ` L ${x(xEnd)} ${y(last)}`; };
    div.innerHTML += `<div class="label">${mode}</div><svg width="${W}" height="${H}">
      <line class="axis" x1="${L}" y1="${H - B}" x2="${W - 10}" y2="${H - B}"/>
      <line class="axis" x1="${L}" y1="10" x2="${L}" y2="${H - B}"/>
      <text class="label" x="4" y="16">${fmt(yMax)}</text>
      <text class="label" x="4" y="${H - B}">0</text>
      <text class="label" x="${L}" y="${H - 8}">0</text>
      <text class="label" x="${W - 90}" y="${H - 8}">${xLabel}</text>
      <path class="phys" d="${step(1)} L ${x(xEnd)} ${y(0)} Z"/>
      <path class="mapped" d="${step(2)}"/></svg>`;
  }
  document.getElementById("plots").appendChild(div);
  const levels = [0];
  for (const r of rows) if (r[1] !== levels[levels.length - 1]) levels.push(r[1]);
  lines.push(`${d}: peak physical ${fmt(Math.max(...rows.map(r => r[1])))}, peak mapped ${fmt(Math.max(...rows.map(r => r[2])))}`);
  lines.push(`${d}: physical levels ${levels.map(fmt).join(" → ")}`);
}
document.getElementById("summary").textContent = lines.join("\n") || "no memory events in the trace";
</script>
</body></html>
"##;
