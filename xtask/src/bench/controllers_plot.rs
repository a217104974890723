//! The plot of `cargo xtask bench controllers --plot`: the controllers' CPU over both phases
//! (create + rollout) against the number of Deployments N, one line per side and per
//! (QPS, namespaces) series, from every JSON line kept in `target/bench/controllers.jsonl`
//! (medians per point). A hand-written SVG in the style of the rollout timeline
//! (`crate::observe`).
//!
//! Lines from before `--qps` and `--namespaces` existed carry neither field: they ran at QPS 20
//! in one namespace, and count as such.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, bail};
use serde_json::Value;

use super::controllers_args::DEFAULT_QPS;
use super::table::median;
use crate::svg::{self, PALETTE, xml_escape};

/// One line of the plot: a side at one QPS and namespace count.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// `upstream` or `kcm`.
    pub side: String,
    pub qps: u64,
    pub namespaces: u64,
    /// By N, ascending.
    pub points: Vec<Point>,
}

/// The median of one series at one N.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub deployments: u64,
    /// Median controller CPU, create + rollout, in seconds.
    pub cpu_s: f64,
    /// The lines the median is of.
    pub samples: usize,
    /// Some of those lines had their rollout stopped at `--rollout-limit`: the point is a
    /// lower bound (drawn hollow).
    pub lower_bound: bool,
}

/// A side as tables and the plot name it: `kube-controller-manager` for upstream.
pub(super) fn side_name(side: &str) -> &str {
    match side {
        "upstream" => "kube-controller-manager",
        other => other,
    }
}

impl Series {
    /// The legend's words: `kcm, QPS 100, 3 namespaces`.
    pub fn label(&self) -> String {
        let side = side_name(&self.side);
        let ns = match self.namespaces {
            1 => "1 namespace".to_string(),
            m => format!("{m} namespaces"),
        };
        format!("{side}, QPS {}, {ns}", self.qps)
    }
}

/// Groups the controllers benchmark's lines (real control plane only) by side, QPS and
/// namespaces, and takes the median controller CPU per N. Lines without the figures are
/// skipped; series come ordered by QPS, namespaces, then side.
pub fn series(lines: &[Value]) -> Vec<Series> {
    // Per (QPS, namespaces, side) and N: the CPU figures, and whether any was stopped early.
    type Samples = (Vec<f64>, bool);
    let mut groups: BTreeMap<(u64, u64, String), BTreeMap<u64, Samples>> = BTreeMap::new();
    for l in lines {
        let upstream_cluster = l.get("cluster").is_none_or(|c| c == "upstream");
        if l["workload"] != "controllers" || !upstream_cluster {
            continue;
        }
        let (Some(side), Some(n), Some(create), Some(rollout)) = (
            l["impl"].as_str(),
            l["deployments"].as_u64(),
            l["cpu_create_s"].as_f64(),
            l["cpu_rollout_s"].as_f64(),
        ) else {
            continue;
        };
        let qps = l["qps"].as_u64().unwrap_or(u64::from(DEFAULT_QPS));
        let namespaces = l["namespaces"].as_u64().unwrap_or(1);
        let samples = groups
            .entry((qps, namespaces, side.to_string()))
            .or_default()
            .entry(n)
            .or_default();
        samples.0.push(create + rollout);
        samples.1 |= l["rollout_stopped_s"].as_f64().is_some();
    }
    groups
        .into_iter()
        .map(|((qps, namespaces, side), by_n)| Series {
            side,
            qps,
            namespaces,
            points: by_n
                .into_iter()
                .filter_map(|(n, (v, stopped))| {
                    median(&v).map(|cpu_s| Point {
                        deployments: n,
                        cpu_s,
                        samples: v.len(),
                        lower_bound: stopped,
                    })
                })
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// One axis: logarithmic when the values span ten times or more (all positive), else linear
/// from zero.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Axis {
    fn fit(values: impl Iterator<Item = f64> + Clone) -> Axis {
        let min = values.clone().fold(f64::INFINITY, f64::min);
        let max = values.fold(0.0, f64::max);
        if min > 0.0 && max / min >= 10.0 {
            let grid = log_grid(min, max);
            return Axis {
                lo: grid.iter().copied().rfind(|g| *g <= min).unwrap_or(min),
                hi: grid.iter().copied().find(|g| *g >= max).unwrap_or(max),
                log: true,
            };
        }
        let step = nice_step(max / 5.0);
        Axis {
            lo: 0.0,
            hi: ((max / step).ceil() * step).max(step),
            log: false,
        }
    }

    /// Where `v` falls, from 0 (at `lo`) to 1 (at `hi`).
    fn fraction(&self, v: f64) -> f64 {
        if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    /// The labelled values: 1, 2, 5 of each decade on a log axis; even steps on a linear one.
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            log_grid(self.lo, self.hi)
                .into_iter()
                .filter(|g| *g >= self.lo && *g <= self.hi)
                .collect()
        } else {
            let step = nice_step(self.hi / 5.0);
            let count = (self.hi / step).round() as usize;
            (0..=count).map(|i| i as f64 * step).collect()
        }
    }
}

/// 1, 2 and 5 × 10^k, ascending, from the decade below `min` to the one above `max` (both
/// positive).
fn log_grid(min: f64, max: f64) -> Vec<f64> {
    let (from, to) = (min.log10().floor() as i32, max.log10().ceil() as i32);
    (from..=to)
        .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
        .collect()
}

/// The smallest 1, 2 or 5 × 10^k at least `raw` (1 for nothing positive).
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let decade = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * decade)
}

fn tick_label(v: f64) -> String {
    if v >= 10.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The SVG: one polyline (and a dot per point) per series, upstream dashed, kcm solid, a colour
/// per (QPS, namespaces); axes with their labels and a legend.
pub fn svg(series: &[Series]) -> String {
    let (w, h, left, right, top, bottom) = (1000.0, 460.0, 70.0, 340.0, 50.0, 55.0);
    let xs = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.deployments as f64));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.cpu_s));
    let (ax, ay) = (Axis::fit(xs), Axis::fit(ys));
    let x = |v: f64| left + ax.fraction(v) * (w - left - right);
    let y = |v: f64| top + (1.0 - ay.fraction(v)) * (h - top - bottom);
    let scale = |a: &Axis| if a.log { "log scale" } else { "linear" };
    let mut svg = svg::open(w, h);
    let _ = write!(
        svg,
        "<text x=\"{left}\" y=\"22\" font-size=\"15\">Controller CPU (create + rollout) against N: kcm and kube-controller-manager v1.37.2</text>\n\
         <text x=\"{left}\" y=\"38\" fill=\"#555\">medians of every run kept; N Deployments × 10 pods; `cargo xtask bench controllers`</text>\n"
    );
    let (x0, x1, y0, y1) = (left, w - right, h - bottom, top);
    let _ = writeln!(
        svg,
        "<line x1=\"{x0}\" y1=\"{y0}\" x2=\"{x1}\" y2=\"{y0}\" stroke=\"black\"/>\n\
         <line x1=\"{x0}\" y1=\"{y0}\" x2=\"{x0}\" y2=\"{y1}\" stroke=\"black\"/>"
    );
    for t in ay.ticks() {
        let _ = writeln!(
            svg,
            "<line x1=\"{x0}\" y1=\"{0:.1}\" x2=\"{x1}\" y2=\"{0:.1}\" stroke=\"#ddd\"/><text x=\"{1}\" y=\"{2:.1}\" text-anchor=\"end\">{3}</text>",
            y(t),
            x0 - 6.0,
            y(t) + 4.0,
            tick_label(t)
        );
    }
    for t in ax.ticks() {
        let _ = writeln!(
            svg,
            "<line x1=\"{0:.1}\" y1=\"{y0}\" x2=\"{0:.1}\" y2=\"{y1}\" stroke=\"#eee\"/><text x=\"{0:.1}\" y=\"{1}\" text-anchor=\"middle\">{2}</text>",
            x(t),
            y0 + 16.0,
            tick_label(t)
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">Deployments N ({2})</text>\n\
         <text x=\"18\" y=\"{3}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {3})\">controller CPU, create + rollout (s, {4})</text>",
        (x0 + x1) / 2.0,
        h - 12.0,
        scale(&ax),
        (y0 + y1) / 2.0,
        scale(&ay)
    );
    // A colour per (QPS, namespaces), in order of appearance.
    let mut keys: Vec<(u64, u64)> = Vec::new();
    let mut legend_y = top + 10.0;
    for s in series {
        let key = (s.qps, s.namespaces);
        let i = keys.iter().position(|k| *k == key).unwrap_or_else(|| {
            keys.push(key);
            keys.len() - 1
        });
        let color = PALETTE[i % PALETTE.len()];
        let dash = if s.side == "upstream" {
            " stroke-dasharray=\"6 3\""
        } else {
            ""
        };
        let points: Vec<String> = s
            .points
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.deployments as f64), y(p.cpu_s)))
            .collect();
        svg::polyline(&mut svg, color, s.side == "upstream", &points);
        for p in &s.points {
            // A lower bound is hollow, with an arrow up: the rollout was stopped at the limit.
            let (fill, at_least, arrow) = if p.lower_bound {
                (
                    "white",
                    "at least ",
                    format!(
                        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{color}\">↑</text>",
                        x(p.deployments as f64),
                        y(p.cpu_s) - 6.0
                    ),
                )
            } else {
                (color, "", String::new())
            };
            let _ = writeln!(
                svg,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{fill}\" stroke=\"{color}\"><title>{}: N = {}, {at_least}{:.1} s (median of {})</title></circle>{arrow}",
                x(p.deployments as f64),
                y(p.cpu_s),
                xml_escape(&s.label()),
                p.deployments,
                p.cpu_s,
                p.samples
            );
        }
        let _ = writeln!(
            svg,
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/><text x=\"{3}\" y=\"{4}\">{5}</text>",
            x1 + 10.0,
            legend_y - 4.0,
            x1 + 34.0,
            x1 + 40.0,
            legend_y,
            xml_escape(&s.label())
        );
        legend_y += 18.0;
    }
    svg.push_str("</svg>\n");
    svg
}

/// Reads the JSON lines of `jsonl`, writes the plot to `out`; returns how many series it has.
pub fn write(jsonl: &Path, out: &Path) -> anyhow::Result<usize> {
    let text = std::fs::read_to_string(jsonl)
        .with_context(|| format!("reading {} (run the benchmark first)", jsonl.display()))?;
    let series = series(&crate::bench::peer::parse_json_lines(&text));
    if series.is_empty() {
        bail!(
            "{} has no line of the controllers benchmark on the real control plane",
            jsonl.display()
        );
    }
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(out, svg(&series)).with_context(|| format!("writing {}", out.display()))?;
    Ok(series.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(side: &str, n: u64, create: f64, rollout: f64, extra: Value) -> Value {
        let mut l = json!({"workload": "controllers", "impl": side, "cluster": "upstream",
                           "deployments": n, "cpu_create_s": create, "cpu_rollout_s": rollout});
        if let (Some(l), Some(extra)) = (l.as_object_mut(), extra.as_object()) {
            l.extend(extra.clone());
        }
        l
    }

    #[test]
    fn points_are_medians_per_side_qps_namespaces_and_n() {
        let none = json!({});
        let q100 = json!({"qps": 100, "namespaces": 3});
        let lines = vec![
            // Before --qps and --namespaces: QPS 20 in one namespace.
            line("kcm", 300, 6.0, 20.0, none.clone()),
            line("kcm", 300, 5.0, 22.0, json!({"qps": 20, "namespaces": 1})),
            line("kcm", 300, 7.0, 30.0, none.clone()),
            line("upstream", 300, 9.0, 35.0, none.clone()),
            line("upstream", 30, 1.0, 3.0, none.clone()),
            line("kcm", 30, 0.5, 2.0, q100.clone()),
            line("kcm", 30, 0.7, 2.0, q100.clone()),
            // Not counted: testenv, the sharded benchmark, a line without CPU.
            json!({"workload": "controllers", "impl": "kcm", "cluster": "testenv",
                   "deployments": 300, "cpu_create_s": 1.0, "cpu_rollout_s": 1.0}),
            json!({"workload": "controllers-sharded", "impl": "kcm", "deployments": 300,
                   "cpu_create_s": 1.0, "cpu_rollout_s": 1.0}),
            json!({"workload": "controllers", "impl": "kcm", "deployments": 300}),
        ];
        let s = series(&lines);
        let want = |side: &str, qps: u64, namespaces: u64, points: &[(u64, f64, usize)]| Series {
            side: side.to_string(),
            qps,
            namespaces,
            points: points
                .iter()
                .map(|&(deployments, cpu_s, samples)| Point {
                    deployments,
                    cpu_s,
                    samples,
                    lower_bound: false,
                })
                .collect(),
        };
        assert_eq!(
            s,
            [
                want("kcm", 20, 1, &[(300, 27.0, 3)]),
                want("upstream", 20, 1, &[(30, 4.0, 1), (300, 44.0, 1)]),
                want("kcm", 100, 3, &[(30, 2.6, 2)]),
            ]
        );
        assert_eq!(s[1].label(), "kube-controller-manager, QPS 20, 1 namespace");
        assert_eq!(s[2].label(), "kcm, QPS 100, 3 namespaces");
    }

    #[test]
    fn the_svg_has_a_polyline_per_series_axis_labels_and_a_legend() {
        let lines = vec![
            line("kcm", 30, 1.0, 2.0, json!({})),
            line("kcm", 300, 10.0, 20.0, json!({})),
            line("kcm", 1000, 30.0, 60.0, json!({})),
            line("upstream", 30, 2.0, 3.0, json!({})),
            line("upstream", 300, 15.0, 30.0, json!({})),
            line(
                "kcm",
                300,
                8.0,
                12.0,
                json!({"qps": 100, "namespaces": 100}),
            ),
        ];
        let out = svg(&series(&lines));
        assert_eq!(out.matches("<polyline").count(), 3);
        assert_eq!(out.matches("<circle").count(), 6);
        assert!(out.contains("Deployments N (log scale)"));
        assert!(out.contains("controller CPU, create + rollout (s, log scale)"));
        assert!(out.contains(">kcm, QPS 100, 100 namespaces</text>"));
        assert!(out.contains(">kube-controller-manager, QPS 20, 1 namespace</text>"));
        // upstream dashed, kcm solid; the two QPS series in different colours.
        assert_eq!(out.matches("stroke-dasharray=\"6 3\" points=").count(), 1);
        assert!(out.contains(&format!("stroke=\"{}\"", PALETTE[1])));
        assert!(out.trim_end().ends_with("</svg>"));
        assert!(!out.contains("at least"));
    }

    #[test]
    fn a_point_with_a_stopped_rollout_is_a_hollow_lower_bound() {
        let stopped = json!({"rollout_stopped_s": 1500.0, "rollout_complete": 291});
        let lines = vec![
            line("upstream", 1000, 17.0, 95.0, json!({})),
            line("upstream", 3000, 60.0, 600.0, stopped),
            line("upstream", 3000, 70.0, 800.0, json!({})),
        ];
        let s = series(&lines);
        let flags: Vec<(u64, bool)> = s[0]
            .points
            .iter()
            .map(|p| (p.deployments, p.lower_bound))
            .collect();
        assert_eq!(flags, [(1000, false), (3000, true)]);
        let out = svg(&s);
        assert_eq!(out.matches("fill=\"white\" stroke=").count(), 1);
        assert!(out.contains("N = 3000, at least 765.0 s (median of 2)"));
        assert_eq!(out.matches(">↑</text>").count(), 1);
    }

    #[test]
    fn axes_go_logarithmic_only_over_a_decade() {
        let log = Axis::fit([30.0, 1000.0].into_iter());
        assert_eq!((log.lo, log.hi, log.log), (20.0, 1000.0, true));
        assert_eq!(log.ticks(), [20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]);
        assert!(log.fraction(20.0).abs() < 1e-9);
        assert!((log.fraction(1000.0) - 1.0).abs() < 1e-9);
        let log = Axis::fit([2.2, 216.0].into_iter());
        assert_eq!((log.lo, log.hi), (2.0, 500.0));
        assert!((log.fraction(100.0) - 50f64.log10() / 250f64.log10()).abs() < 1e-9);
        let lin = Axis::fit([30.0, 120.0].into_iter());
        assert_eq!((lin.lo, lin.hi, lin.log), (0.0, 150.0, false));
        assert_eq!(lin.ticks(), [0.0, 50.0, 100.0, 150.0]);
        assert!((lin.fraction(75.0) - 0.5).abs() < 1e-9);
        // One point, or zeros: a linear axis with a positive range.
        let one = Axis::fit([0.0].into_iter());
        assert!(!one.log && one.hi > 0.0);
        assert_eq!([0.3, 1.0, 7.0, 12.0].map(nice_step), [0.5, 1.0, 10.0, 20.0]);
    }

    #[test]
    fn writing_needs_lines_of_the_benchmark() {
        let dir = std::env::temp_dir().join(format!("kcm-xtask-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let (jsonl, out) = (dir.join("c.jsonl"), dir.join("sub").join("c.svg"));
        assert!(write(&jsonl, &out).is_err(), "no file");
        std::fs::write(&jsonl, "not json\n{\"workload\": \"store\"}\n").expect("write");
        assert!(write(&jsonl, &out).is_err(), "no controllers line");
        let l = line("kcm", 30, 1.0, 2.0, json!({}));
        std::fs::write(&jsonl, format!("{l}\n{l}\n")).expect("write");
        assert_eq!(write(&jsonl, &out).ok(), Some(1));
        let svg = std::fs::read_to_string(&out).expect("read");
        assert_eq!(svg.matches("<polyline").count(), 1);
        std::fs::remove_dir_all(&dir).ok();
    }
}
