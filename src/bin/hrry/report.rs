//! `hrry report FILE -o report.html`: one self-contained HTML page (no network,
//! no external scripts, styles or fonts) showing a file drawn to scale — its
//! regions and every violation at its offset, linked to its rule — the tensor
//! table (sortable), parameter counts per type, per-tensor statistics with small
//! histograms, and the verdict with the findings grouped by level.

mod regions;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use hrry::content::{self, ModelFile, TensorStats};
use hrry::file::OpenOptions;
use hrry::validate::{Level, Report};

use regions::Region;

use crate::text::plural;
use crate::{Failure, Outcome};

/// Width of the byte map, in SVG units.
const MAP_WIDTH: f64 = 1000.0;

/// Arguments of `hrry report`.
#[derive(clap::Args)]
#[command(after_help = see_exit_codes!())]
pub struct Args {
    /// The file to report on: a HRRYFILE, safetensors or GGUF file, a .holo
    /// archive, a bare stream (.hrrys) or a captured conversation (.hrrymsg); a
    /// path or an http(s):// or s3:// URL.
    file: PathBuf,
    /// Where to write the HTML page.
    #[arg(short, long, value_name = "HTML")]
    output: PathBuf,
    /// Leave out the statistics of values (reads no tensor data).
    #[arg(long)]
    no_stats: bool,
    #[command(flatten)]
    pub net: crate::remote::NetArgs,
}

/// Escapes text for HTML content and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// The verdict of a report: `valid`, `invalid` (a spec violation) or `refused`.
fn verdict(report: &Report) -> &'static str {
    if report
        .violations
        .iter()
        .any(|v| v.rule.level == Level::Spec)
    {
        "invalid"
    } else if report.violations.is_empty() {
        "valid"
    } else {
        "refused"
    }
}

/// Height of one row of the byte map, in SVG units.
const ROW: f64 = 36.0;

/// The byte map: `rows` of regions drawn to scale (the file's own parts, then
/// what lies inside them), each violation marked at its offset across all rows.
fn byte_map(rows: &[Vec<Region>], report: &Report, len: u64) -> String {
    let scale = |x: u64| {
        if len == 0 {
            0.0
        } else {
            x as f64 / len as f64 * MAP_WIDTH
        }
    };
    let bottom = 8.0 + ROW * rows.len().max(1) as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg id="bytemap" viewBox="-4 0 {} {}" preserveAspectRatio="none" role="img" aria-label="byte map" style="height:{}px">"#,
        MAP_WIDTH + 8.0,
        bottom + 20.0,
        (bottom + 20.0) * 80.0 / 64.0,
    );
    for (row, regions) in rows.iter().enumerate() {
        let y = 8.0 + ROW * row as f64;
        // Regions narrower than a unit are drawn together (the kind with the most
        // bytes colours them), so that a file of thousands of tensors stays a few
        // thousand shapes.
        let mut i = 0;
        while i < regions.len() {
            let start = regions[i].start;
            let mut j = i + 1;
            while j < regions.len() && scale(regions[j].end()) - scale(start) < 1.0 {
                j += 1;
            }
            let group = &regions[i..j];
            let end = group.last().map_or(start, Region::end);
            let main = group.iter().max_by_key(|r| r.len).unwrap_or(&regions[i]);
            let label = if group.len() == 1 {
                esc(&main.label)
            } else {
                format!("{} regions (mostly {})", group.len(), main.kind)
            };
            let _ = write!(
                s,
                r#"<rect class="region {k}" x="{x:.3}" y="{y}" width="{w:.3}" height="{h}"><title>{label}: bytes {a}..{b} ({n} bytes)</title></rect>"#,
                k = main.kind,
                x = scale(start),
                w = (scale(end) - scale(start)).max(0.3),
                h = ROW - 2.0,
                a = start,
                b = end,
                n = end - start
            );
            i = j;
        }
    }
    for v in &report.violations {
        let x = scale(v.offset.min(len));
        let _ = write!(
            s,
            r##"<a href="#rule-{id}" class="violation-mark" data-rule="{id}" data-offset="{o}"><path d="M{x:.3} {bottom} l-4 12 h8 z M{x:.3} 4 V{bottom}" class="mark {lv}"/><title>{id} at offset {o}: {m}</title></a>"##,
            id = esc(v.rule.id),
            o = v.offset,
            lv = v.rule.level.name(),
            m = esc(&v.message),
        );
    }
    s.push_str("</svg>");
    s
}

fn histogram_svg(s: &TensorStats) -> String {
    let max = s.histogram.counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let n = s.histogram.counts.len().max(1) as f64;
    // One path per histogram: thousands of rows stay light for the browser.
    let mut d = String::new();
    for (i, &c) in s.histogram.counts.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let h = c as f64 / max * 24.0;
        let _ = write!(
            d,
            "M{:.1} 24v{:.1}h{:.1}v{:.1}z",
            i as f64 * 96.0 / n,
            -h,
            96.0 / n,
            h
        );
    }
    format!(
        r#"<svg class="hist" viewBox="0 0 96 24" preserveAspectRatio="none"><path d="{d}"/></svg>"#
    )
}

fn num(x: f64) -> String {
    if x.is_nan() {
        "–".into()
    } else if x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
        format!("{x:.4e}")
    } else {
        format!("{x:.6}")
    }
}

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d232b;background:#fafbfc}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #d5dae0}
code,td.num,td.mono{font-family:ui-monospace,monospace;font-size:12.5px}
.verdict{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:600;color:#fff}
.verdict.valid{background:#2e7d32}.verdict.invalid{background:#c62828}.verdict.refused{background:#ef6c00}
#bytemap{width:100%;background:#fff;border:1px solid #d5dae0}
.region{stroke:#fff;stroke-width:.5;vector-effect:non-scaling-stroke}
.region.header{fill:#5c6bc0}.region.descriptor{fill:#26a69a}.region.data{fill:#90caf9}
.region.padding{fill:#e0e0e0}.region.section{fill:#81c784}.region.unread{fill:#bdbdbd}.region.kv{fill:#ab47bc}.region.index{fill:#ffa726}.region.trailer{fill:#8d6e63}
.mark{stroke:#b71c1c;fill:#b71c1c;stroke-width:1.2}.mark.hardening{stroke:#ef6c00;fill:#ef6c00}.mark.limit{stroke:#6d4c41;fill:#6d4c41}
.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px}
table{border-collapse:collapse;background:#fff} th,td{border:1px solid #e3e6ea;padding:3px 8px;text-align:left}
th{background:#f0f2f5;cursor:pointer;user-select:none;position:sticky;top:0} td.num{text-align:right}
.wrap{max-height:600px;overflow:auto;border:1px solid #d5dae0;display:inline-block;max-width:100%}
.hist{width:96px;height:24px;fill:#1e88e5;display:block}
.finding{background:#fff;border-left:4px solid #c62828;padding:6px 10px;margin:6px 0}
.finding.hardening{border-color:#ef6c00}.finding.limit{border-color:#6d4c41}.finding.statistics{border-color:#546e7a}
.finding:target{outline:2px solid #1e88e5}
"#;

const SCRIPT: &str = r#"
(function(){
  function key(td){var v=td.getAttribute('data-v');if(v===null)v=td.textContent;var n=parseFloat(v);return isNaN(n)?v.toLowerCase():n;}
  document.querySelectorAll('table.sortable').forEach(function(t){
    t.querySelectorAll('th').forEach(function(th,i){
      th.addEventListener('click',function(){
        var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows),asc=th.getAttribute('data-asc')!=='1';
        rows.sort(function(a,b){var x=key(a.cells[i]),y=key(b.cells[i]);return (x<y?-1:x>y?1:0)*(asc?1:-1);});
        th.setAttribute('data-asc',asc?'1':'0');
        var f=document.createDocumentFragment();rows.forEach(function(r){f.appendChild(r);});body.appendChild(f);
      });
    });
  });
  document.body.setAttribute('data-ready','1');
})();
"#;

pub fn run(args: Args) -> Result<Outcome, Failure> {
    let page = render(&args.file, !args.no_stats)?;
    let mut out = crate::output::create(&args.output, &[args.file.as_path()])
        .map_err(|e| Failure(e.to_string()))?;
    std::io::Write::write_all(&mut out, page.as_bytes()).map_err(crate::output_failure)?;
    out.commit().map_err(|e| Failure(e.to_string()))?;
    eprintln!("wrote {}", crate::text::path(&args.output));
    Ok(Outcome::Ok)
}

/// The colours of the regions' kinds, in legend order.
const KINDS: [(&str, &str); 10] = [
    ("header", "#5c6bc0"),
    ("descriptor", "#26a69a"),
    ("data", "#90caf9"),
    ("section", "#81c784"),
    ("padding", "#e0e0e0"),
    ("kv", "#ab47bc"),
    ("index", "#ffa726"),
    ("trailer", "#8d6e63"),
    ("unread", "#bdbdbd"),
    ("violation", "#b71c1c"),
];

/// The whole page for `path` (a path or URL).
fn render(path: &Path, with_stats: bool) -> Result<String, Failure> {
    let shown = crate::remote::shown(path);
    let (source, format) = crate::diff::open_input(path)?;
    let len = source.len();
    let options = hrry::validate::Options::default();
    let cannot = |e: std::io::Error| Failure(format!("cannot read {shown}: {e}"));
    // A HRRYFILE is opened leniently, so that one breaking rules still shows its
    // structure.
    let lenient;
    let mut note = None;
    let (report, rows, model): (Report, Vec<Vec<Region>>, Option<ModelFile<'_>>) = match format {
        hrry::Format::Holo => {
            let (report, map) = hrry::holo::map_source(&*source, &options).map_err(cannot)?;
            let rows = regions::holo_rows(&source, map.as_ref(), len);
            let model = match map.map(|m| ModelFile::of_archive(source.clone(), &m)) {
                Some(Ok(m)) if !m.tensors().is_empty() => Some(m),
                Some(Ok(_)) => {
                    note = Some(
                        "The archive holds no HRRYFILE: its sections are shown in the byte map."
                            .to_string(),
                    );
                    None
                }
                Some(Err(e)) => {
                    note = Some(format!(
                        "The HRRYFILEs inside the archive could not be read: {e}."
                    ));
                    None
                }
                None => None,
            };
            (report, rows, model)
        }
        hrry::Format::Stream => {
            let report = format.validate_source(&*source, &options).map_err(cannot)?;
            let rows = vec![regions::stream_regions(&*source, len)];
            let reader = std::io::BufReader::new(hrry::source::Sequential::new(&*source));
            let model = ModelFile::open_stream(reader, len)
                .map_err(|e| note = Some(format!("The stream's tensors could not be read: {e}.")))
                .ok();
            (report, rows, model)
        }
        hrry::Format::Messages => {
            let report = format.validate_source(&*source, &options).map_err(cannot)?;
            note =
                Some("A captured conversation: its frames are shown in the byte map.".to_string());
            (report, vec![regions::message_regions(&*source, len)], None)
        }
        hrry::Format::HrryFile => {
            let report = format.validate_source(&*source, &options).map_err(cannot)?;
            lenient = OpenOptions::new()
                .allow_all()
                .open_source(source.clone())
                .ok();
            let model = match &lenient {
                Some(f) => Some(ModelFile::of_hrry(f)),
                None => ModelFile::open_source(source.clone()).ok(),
            };
            let rows = match (&lenient, &model) {
                (Some(f), _) => regions::hrry_regions(f, 0, ""),
                (None, Some(m)) => regions::model_regions(m),
                (None, None) => regions::with_padding(Vec::new(), 0, len),
            };
            (report, vec![rows], model)
        }
    };
    let verdict = verdict(&report);
    let mut h = String::new();
    let _ = write!(
        h,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"><meta name="viewport" content="width=device-width"><title>hrry report: {t}</title><style>{STYLE}</style></head><body>"#,
        t = esc(&shown)
    );
    let format_name = match (&model, format) {
        (Some(m), _) => m.format_name(),
        (None, hrry::Format::HrryFile) => "unreadable",
        (None, f) => f.name(),
    };
    let _ = write!(
        h,
        r#"<h1>{t}</h1><p>{f}, {n} bytes &middot; verdict <span id="verdict" class="verdict {verdict}">{verdict}</span> &middot; {v}</p>"#,
        t = esc(&shown),
        f = format_name,
        n = len,
        v = plural(report.violations.len() as u64, "violation", "violations"),
    );
    h.push_str("<h2>Byte map</h2>");
    if rows.len() > 1 {
        h.push_str("<p>Top row: the file's own parts; below: what lies inside them.</p>");
    }
    h.push_str(&byte_map(&rows, &report, len));
    h.push_str(r#"<p class="legend">"#);
    for (k, c) in KINDS {
        if k == "violation" || rows.iter().flatten().any(|r| r.kind == k) {
            let _ = write!(h, r#"<span><i style="background:{c}"></i>{k}</span>"#);
        }
    }
    h.push_str("</p>");

    // Statistics, computed once.
    let mut stats: Vec<Option<Result<TensorStats, String>>> = Vec::new();
    let mut mismatches = Vec::new();
    if let Some(m) = &model {
        if with_stats {
            let extra = std::thread::available_parallelism().map_or(0, |n| n.get() - 1);
            for (info, s) in m.tensors().iter().zip(content::file_stats(m, extra)) {
                let s = s.map_err(|e| e.to_string());
                if let Ok(s) = &s {
                    mismatches.extend(content::check_statistics(info, s));
                }
                stats.push(Some(s));
            }
        } else {
            stats.resize_with(m.tensors().len(), || None);
        }
        h.push_str("<h2>Parameters by type</h2><table class=\"sortable\" id=\"params\"><thead><tr><th>type</th><th>tensors</th><th>elements</th><th>stored bytes</th><th>bits/element</th></tr></thead><tbody>");
        for c in content::parameter_counts(m) {
            let bits = if c.elements > 0 {
                format!("{:.2}", c.stored_bytes as f64 * 8.0 / c.elements as f64)
            } else {
                "–".into()
            };
            let _ = write!(
                h,
                r#"<tr><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td></tr>"#,
                esc(&c.dtype),
                c.tensors,
                c.elements,
                c.stored_bytes,
                bits
            );
        }
        h.push_str("</tbody></table>");
        let _ = write!(
            h,
            "<h2>Tensors ({})</h2><p>Click a column to sort.</p><div class=\"wrap\"><table class=\"sortable\" id=\"tensors\"><thead><tr><th>name</th><th>type</th><th>shape</th><th>layout</th><th>quantization</th><th>elements</th><th>bytes</th><th>offset</th><th>min</th><th>max</th><th>mean</th><th>std</th><th>NaN</th><th>Inf</th><th>zeros</th><th>histogram</th></tr></thead><tbody>",
            m.tensors().len()
        );
        for (t, s) in m.tensors().iter().zip(&stats) {
            let _ = write!(
                h,
                r#"<tr><td class="mono">{}</td><td>{}</td><td class="mono" data-v="{}">{}</td><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td>"#,
                esc(&t.name),
                esc(&t.dtype),
                t.elements.unwrap_or(0),
                esc(&format!("{:?}", t.shape)),
                esc(&t.layout),
                esc(t.quantization.as_deref().unwrap_or("")),
                t.elements.map_or("overflow".into(), |e| e.to_string()),
                t.stored_bytes,
                t.data_offset
            );
            match s {
                Some(Ok(s)) => {
                    let _ = write!(
                        h,
                        r#"<td class="num" data-v="{}">{}</td><td class="num" data-v="{}">{}</td><td class="num" data-v="{}">{}</td><td class="num" data-v="{}">{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td>{}</td></tr>"#,
                        s.min,
                        num(s.min),
                        s.max,
                        num(s.max),
                        s.mean,
                        num(s.mean),
                        s.std,
                        num(s.std),
                        s.nan,
                        s.inf,
                        s.zeros,
                        histogram_svg(s)
                    );
                }
                Some(Err(why)) => {
                    let _ = write!(h, r#"<td colspan="8">not read: {}</td></tr>"#, esc(why));
                }
                None => h.push_str(r#"<td colspan="8"></td></tr>"#),
            }
        }
        h.push_str("</tbody></table></div>");
    } else {
        let why = note
            .as_deref()
            .unwrap_or("The file could not be read as a model file: only its validation is shown.");
        let _ = write!(h, "<p>{}</p>", esc(why));
    }

    h.push_str("<h2>Findings</h2>");
    if report.violations.is_empty() && mismatches.is_empty() {
        h.push_str("<p>None.</p>");
    }
    for level in [Level::Spec, Level::Hardening, Level::Limit] {
        let group: Vec<_> = report
            .violations
            .iter()
            .filter(|v| v.rule.level == level)
            .collect();
        if group.is_empty() {
            continue;
        }
        let _ = write!(h, "<h3>{} ({})</h3>", level.name(), group.len());
        let mut seen = std::collections::HashSet::new();
        for v in group {
            let anchor = if seen.insert(v.rule.id) {
                format!(r#" id="rule-{}""#, esc(v.rule.id))
            } else {
                String::new()
            };
            let _ = write!(
                h,
                r#"<div class="finding {lv}"{anchor}><b><code>{id}</code></b> at offset <code>{o}</code> ({o:#x}): {m}<br><small>Rule: {s}. Spec: {spec}. Level <i>{lv}</i>: {note}</small></div>"#,
                lv = level.name(),
                id = esc(v.rule.id),
                o = v.offset,
                m = esc(&v.message),
                s = esc(v.rule.summary),
                spec = esc(v.rule.spec),
                note = match level {
                    Level::Spec => "the spec requires this; a file breaking it is invalid.",
                    Level::Hardening =>
                        "hrry's own stricter check; the file is refused under the hardened policy.",
                    Level::Limit => "a resource bound; the spec verdict is incomplete.",
                },
            );
        }
    }
    if !mismatches.is_empty() {
        let _ = write!(h, "<h3>statistics ({})</h3>", mismatches.len());
        for m in &mismatches {
            let _ = write!(
                h,
                r#"<div class="finding statistics">{}<br><small>Statistics sections are advisory: a disagreement is reported, not a violation.</small></div>"#,
                esc(&m.to_string())
            );
        }
    }
    let _ = write!(h, "<script>{SCRIPT}</script></body></html>");
    Ok(h)
}

/// The statuses of a conformance scoreboard, in column order, as the JSON names them.
fn statuses(total: &serde_json::Value) -> Vec<String> {
    total
        .as_object()
        .map(|m| m.keys().filter(|k| *k != "cases").cloned().collect())
        .unwrap_or_default()
}

/// `hrry conformance --html FILE`: a run's scoreboard (`results` is the
/// `--json` document) as one self-contained page in the style of `hrry report`.
pub fn scoreboard(results: &serde_json::Value) -> String {
    let summary = &results["summary"];
    let ok = summary["ok"].as_bool().unwrap_or(false);
    let verdict = if ok { "valid" } else { "invalid" };
    let testee = esc(&match &results["testee"] {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    });
    let cols = statuses(&summary["total"]);
    let mut h = String::new();
    let _ = write!(
        h,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"><title>hrry conformance: {testee}</title><style>{STYLE}</style></head><body><h1>Conformance: {testee}</h1><p>corpus {c} &middot; result <span id="verdict" class="verdict {verdict}">{r}</span></p>"#,
        c = esc(results["corpus"]["source"].as_str().unwrap_or("")),
        r = if ok { "pass" } else { "fail" },
    );
    let head = |h: &mut String, first: &str| {
        let _ = write!(h, "<thead><tr><th>{first}</th><th>cases</th>");
        for c in &cols {
            let _ = write!(h, "<th>{}</th>", esc(c));
        }
        h.push_str("</tr></thead><tbody>");
    };
    let row = |h: &mut String, first: &str, v: &serde_json::Value| {
        let _ = write!(
            h,
            r#"<tr><td>{}</td><td class="num">{}</td>"#,
            esc(first),
            v["cases"]
        );
        for c in &cols {
            let _ = write!(h, r#"<td class="num">{}</td>"#, v[c.as_str()]);
        }
        h.push_str("</tr>");
    };
    h.push_str("<h2>By tier</h2><table class=\"sortable\">");
    head(&mut h, "tier");
    if let Some(tiers) = summary["tiers"].as_object() {
        for (t, v) in tiers {
            row(&mut h, t, v);
        }
    }
    row(&mut h, "total", &summary["total"]);
    h.push_str("</tbody></table><h2>By format, rule family and tier</h2><div class=\"wrap\"><table class=\"sortable\">");
    head(&mut h, "format / family / tier");
    for g in summary["groups"].as_array().into_iter().flatten() {
        let label = format!(
            "{} / {} / {}",
            g["format"].as_str().unwrap_or(""),
            g["family"].as_str().unwrap_or(""),
            g["tier"].as_str().unwrap_or("")
        );
        row(&mut h, &label, g);
    }
    h.push_str("</tbody></table></div><h2>Cases that did not pass</h2>");
    let failing: Vec<_> = results["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["status"] != "pass")
        .collect();
    if failing.is_empty() {
        h.push_str("<p>None.</p>");
    } else {
        h.push_str("<div class=\"wrap\"><table class=\"sortable\"><thead><tr><th>case</th><th>tier</th><th>status</th><th>detail</th></tr></thead><tbody>");
        for c in failing {
            let _ = write!(
                h,
                r#"<tr><td class="mono">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
                esc(c["path"].as_str().unwrap_or("")),
                esc(c["tier"].as_str().unwrap_or("")),
                esc(c["status"].as_str().unwrap_or("")),
                esc(c["detail"].as_str().unwrap_or(""))
            );
        }
        h.push_str("</tbody></table></div>");
    }
    let _ = write!(h, "<script>{SCRIPT}</script></body></html>");
    h
}
