//! Watching a Deployment's rollout from outside, as a user would with kubectl: samples of its
//! ReplicaSets (spec replicas, ready, available) and its status over time, rendered as terminal
//! progress bars and as an SVG timeline.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use crate::cluster::Cluster;
use crate::svg::{self, PALETTE, xml_escape};

/// One ReplicaSet at one instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsSample {
    /// ReplicaSet name.
    pub name: String,
    /// `deployment.kubernetes.io/revision`.
    pub revision: String,
    /// `spec.replicas`.
    pub replicas: i64,
    /// `status.readyReplicas`.
    pub ready: i64,
    /// `status.availableReplicas`.
    pub available: i64,
}

/// The Deployment and its ReplicaSets at one instant.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Seconds since the observer started.
    pub t: f64,
    /// `spec.replicas` of the Deployment.
    pub desired: i64,
    /// `status.availableReplicas`.
    pub available: i64,
    /// `status.updatedReplicas`.
    pub updated: i64,
    /// ReplicaSets owned by the Deployment, oldest revision first.
    pub rs: Vec<RsSample>,
}

fn int(v: &Value, path: &[&str]) -> i64 {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    cur.as_i64().unwrap_or(0)
}

/// Reads the Deployment `name` in `ns` and the ReplicaSets it controls.
pub fn sample(cluster: &Cluster, ns: &str, name: &str, t: f64) -> anyhow::Result<Sample> {
    let d = cluster.get_json(&["deployment", name, "-n", ns])?;
    let uid = d["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let list = cluster.get_json(&["replicasets", "-n", ns])?;
    let mut rs: Vec<RsSample> = list["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|r| {
            r["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|refs| {
                    refs.iter()
                        .any(|o| o["uid"] == uid.as_str() && o["controller"] == true)
                })
        })
        .map(|r| RsSample {
            name: r["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            revision: r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                .as_str()
                .unwrap_or("?")
                .to_string(),
            replicas: int(r, &["spec", "replicas"]),
            ready: int(r, &["status", "readyReplicas"]),
            available: int(r, &["status", "availableReplicas"]),
        })
        .collect();
    rs.sort_by_key(|r| {
        (
            r.revision.parse::<i64>().unwrap_or(i64::MAX),
            r.name.clone(),
        )
    });
    Ok(Sample {
        t,
        desired: int(&d, &["spec", "replicas"]),
        available: int(&d, &["status", "availableReplicas"]),
        updated: int(&d, &["status", "updatedReplicas"]),
        rs,
    })
}

/// Collects samples and prints a progress view whenever something changes.
#[derive(Debug)]
pub struct Observer {
    start: Instant,
    /// Every sample taken, in order.
    pub samples: Vec<Sample>,
    quiet: bool,
}

impl Observer {
    /// A new observer; `quiet` suppresses the progress lines.
    pub fn new(quiet: bool) -> Self {
        Observer {
            start: Instant::now(),
            samples: Vec::new(),
            quiet,
        }
    }

    /// Takes one sample; prints it if it differs from the previous one.
    pub fn observe(&mut self, cluster: &Cluster, ns: &str, name: &str) -> anyhow::Result<&Sample> {
        let t = self.start.elapsed().as_secs_f64();
        let s = sample(cluster, ns, name, t)?;
        let changed = self
            .samples
            .last()
            .is_none_or(|p| p.rs != s.rs || p.available != s.available || p.desired != s.desired);
        if changed && !self.quiet {
            println!("{}", render(&s));
        }
        self.samples.push(s);
        Ok(self.samples.last().expect("just pushed"))
    }
}

fn bar(filled: i64, total: i64, width: usize) -> String {
    let total = total.max(1);
    let n = ((filled.clamp(0, total) as f64 / total as f64) * width as f64).round() as usize;
    format!("{}{}", "█".repeat(n), "░".repeat(width - n))
}

/// One progress block: a line per ReplicaSet plus the Deployment's availability.
pub fn render(s: &Sample) -> String {
    let mut out = format!(
        "  [{:>6.1}s] available {:>2}/{:<2} {}",
        s.t,
        s.available,
        s.desired,
        bar(s.available, s.desired, 20)
    );
    let newest = s.rs.last().map(|r| r.name.clone());
    for r in &s.rs {
        let tag = if Some(&r.name) == newest.as_ref() {
            "new"
        } else {
            "old"
        };
        let _ = write!(
            out,
            "\n            {:<24} rev {:<2} {tag}  replicas {:>2}  ready {:>2}  available {:>2} {}",
            r.name,
            r.revision,
            r.replicas,
            r.ready,
            r.available,
            bar(r.available, s.desired, 12)
        );
    }
    out
}

/// Writes an SVG timeline: spec replicas of every ReplicaSet and the Deployment's available
/// replicas over time, with optional vertical markers for story steps.
pub fn write_timeline(
    path: &Path,
    title: &str,
    samples: &[Sample],
    marks: &[(f64, String)],
) -> anyhow::Result<()> {
    let (w, h, left, right, top, bottom) = (900.0, 420.0, 60.0, 220.0, 40.0, 40.0);
    let t_max = samples.last().map(|s| s.t).unwrap_or(1.0).max(1.0);
    let y_max = samples
        .iter()
        .flat_map(|s| {
            s.rs.iter()
                .map(|r| r.replicas)
                .chain([s.desired, s.available])
        })
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let x = |t: f64| left + (t / t_max) * (w - left - right);
    let y = |v: f64| top + (1.0 - v / y_max) * (h - top - bottom);
    let mut svg = format!(
        "{}<text x=\"{left}\" y=\"22\" font-size=\"15\">{}</text>\n",
        svg::open(w, h),
        xml_escape(title)
    );
    // axes and grid
    let _ = writeln!(
        svg,
        "<line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>",
        y(0.0),
        w - right,
        y(0.0)
    );
    let _ = writeln!(
        svg,
        "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{}\" stroke=\"black\"/>",
        y(0.0)
    );
    let step = (y_max / 5.0).ceil().max(1.0);
    let mut v = 0.0;
    while v <= y_max {
        let _ = writeln!(
            svg,
            "<line x1=\"{left}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"#ddd\"/><text x=\"{2}\" y=\"{3}\" text-anchor=\"end\">{v}</text>",
            y(v),
            w - right,
            left - 6.0,
            y(v) + 4.0
        );
        v += step;
    }
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{t_max:.1} s</text>",
        w - right,
        h - 12.0
    );
    for (t, label) in marks {
        let _ = writeln!(
            svg,
            "<line x1=\"{0}\" y1=\"{top}\" x2=\"{0}\" y2=\"{1}\" stroke=\"#999\" stroke-dasharray=\"4 3\"/><text x=\"{2}\" y=\"{3}\" fill=\"#555\">{4}</text>",
            x(*t),
            y(0.0),
            x(*t) + 3.0,
            top + 12.0,
            xml_escape(label)
        );
    }
    // one polyline per ReplicaSet (spec replicas), plus availability
    let mut names: Vec<String> = Vec::new();
    for s in samples {
        for r in &s.rs {
            if !names.contains(&r.name) {
                names.push(r.name.clone());
            }
        }
    }
    let mut legend_y = top + 10.0;
    for (i, name) in names.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let points: Vec<String> = samples
            .iter()
            .map(|s| {
                let v =
                    s.rs.iter()
                        .find(|r| &r.name == name)
                        .map(|r| r.replicas)
                        .unwrap_or(0);
                format!("{:.1},{:.1}", x(s.t), y(v as f64))
            })
            .collect();
        svg::polyline(&mut svg, color, false, &points);
        let _ = writeln!(
            svg,
            "<rect x=\"{0}\" y=\"{1}\" width=\"12\" height=\"3\" fill=\"{color}\"/><text x=\"{2}\" y=\"{3}\">{4} replicas</text>",
            w - right + 10.0,
            legend_y - 4.0,
            w - right + 28.0,
            legend_y,
            xml_escape(name)
        );
        legend_y += 18.0;
    }
    let points: Vec<String> = samples
        .iter()
        .map(|s| format!("{:.1},{:.1}", x(s.t), y(s.available as f64)))
        .collect();
    svg::polyline(&mut svg, "black", true, &points);
    let _ = writeln!(
        svg,
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\" stroke-dasharray=\"6 3\" stroke-width=\"2\"/><text x=\"{3}\" y=\"{4}\">available pods</text>",
        w - right + 10.0,
        legend_y - 3.0,
        w - right + 22.0,
        w - right + 28.0,
        legend_y
    );
    svg.push_str("</svg>\n");
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, svg)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: f64, rs: &[(&str, &str, i64, i64)], available: i64) -> Sample {
        Sample {
            t,
            desired: 10,
            available,
            updated: 0,
            rs: rs
                .iter()
                .map(|(n, rev, replicas, avail)| RsSample {
                    name: n.to_string(),
                    revision: rev.to_string(),
                    replicas: *replicas,
                    ready: *avail,
                    available: *avail,
                })
                .collect(),
        }
    }

    #[test]
    fn progress_lines_name_old_and_new() {
        let text = render(&s(1.5, &[("web-a", "1", 8, 8), ("web-b", "2", 5, 2)], 10));
        assert!(text.contains("available 10/10"), "{text}");
        assert!(
            text.contains("web-a") && text.contains("rev 1  old"),
            "{text}"
        );
        assert!(
            text.contains("web-b") && text.contains("rev 2  new"),
            "{text}"
        );
    }

    #[test]
    fn timeline_has_a_line_per_replica_set() {
        let dir = std::env::temp_dir().join(format!("kcm-xtask-svg-{}", std::process::id()));
        let path = dir.join("t.svg");
        let samples = vec![
            s(0.0, &[("web-a", "1", 10, 10)], 10),
            s(2.0, &[("web-a", "1", 5, 5), ("web-b", "2", 8, 3)], 8),
        ];
        write_timeline(
            &path,
            "rollout <web>",
            &samples,
            &[(1.0, "set image".into())],
        )
        .expect("written");
        let svg = std::fs::read_to_string(&path).expect("read");
        assert_eq!(
            svg.matches("<polyline").count(),
            3,
            "two ReplicaSets + availability"
        );
        assert!(svg.contains("rollout &lt;web&gt;"));
        assert!(svg.contains("set image"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
