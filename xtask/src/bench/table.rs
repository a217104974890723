//! The comparison table of `cargo xtask bench`: medians over rounds, ratios, markdown.
//!
//! Pure functions over the JSON lines the benchmarks print, so they are tested without running
//! a benchmark.

use serde_json::Value;

/// Which way a figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
    /// Neither: context for the other rows (no arrow).
    Neither,
}

/// One row of a table: a field read from the lines each side printed.
#[derive(Debug, Clone, Copy)]
pub struct Figure {
    /// What the row is called in the table.
    pub label: &'static str,
    /// The JSON field.
    pub field: &'static str,
    /// Which lines carry it on client-go's side (every pair must match).
    pub peer: &'static [(&'static str, &'static str)],
    /// Which lines carry it on kcm-rs's side.
    pub ours: &'static [(&'static str, &'static str)],
    pub better: Better,
}

/// The median of the finite values; `None` for none.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

/// `ours / peer`, or `None` when either is missing or the peer is zero.
pub fn ratio(ours: Option<f64>, peer: Option<f64>) -> Option<f64> {
    match (ours, peer) {
        (Some(o), Some(p)) if p != 0.0 => Some(o / p),
        _ => None,
    }
}

/// Whether a line has every `key: value` pair of `select` (as strings).
fn matches(line: &Value, select: &[(&str, &str)]) -> bool {
    select
        .iter()
        .all(|(k, v)| line.get(*k).and_then(Value::as_str) == Some(*v))
}

/// The numeric values of `field` in the lines matching `select`, one per line.
pub fn values(lines: &[Value], select: &[(&str, &str)], field: &str) -> Vec<f64> {
    lines
        .iter()
        .filter(|l| matches(l, select))
        .filter_map(|l| l.get(field).and_then(Value::as_f64))
        .collect()
}

/// A computed row: medians of both sides and their ratio.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub label: String,
    pub peer: Option<f64>,
    pub ours: Option<f64>,
    pub ratio: Option<f64>,
    /// Samples on each side (peer, ours).
    pub samples: (usize, usize),
}

/// The rows of `figures` over every line of every round.
pub fn rows(lines: &[Value], figures: &[Figure]) -> Vec<Row> {
    figures
        .iter()
        .map(|f| {
            let peer = values(lines, f.peer, f.field);
            let ours = values(lines, f.ours, f.field);
            let (p, o) = (median(&peer), median(&ours));
            let label = match f.better {
                Better::Higher => format!("{} ↑", f.label),
                Better::Lower => format!("{} ↓", f.label),
                Better::Neither => f.label.to_string(),
            };
            Row {
                label,
                peer: p,
                ours: o,
                ratio: ratio(o, p),
                samples: (peer.len(), ours.len()),
            }
        })
        .collect()
}

/// A figure as the table shows it: thousands separated from 1,000 on, two decimals below.
pub fn format_number(x: f64) -> String {
    if x.abs() < 1000.0 {
        let s = format!("{x:.2}");
        return s;
    }
    let digits = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 { format!("-{out}") } else { out }
}

/// The markdown table: figure | client-go (median) | kcm-rs (median) | kcm / client-go.
pub fn markdown(rows: &[Row]) -> String {
    let cell = |v: Option<f64>| v.map_or_else(|| "–".to_string(), format_number);
    let mut out = String::from(
        "| figure | client-go (median) | kcm-rs (median) | kcm / client-go |\n\
         | --- | ---: | ---: | ---: |\n",
    );
    for r in rows {
        let ratio = r
            .ratio
            .map_or_else(|| "–".to_string(), |x| format!("{x:.2}"));
        out.push_str(&format!(
            "| {} | {} | {} | {ratio} |\n",
            r.label,
            cell(r.peer),
            cell(r.ours)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn median_of_odd_and_even_counts_ignores_non_finite_values() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn ratio_needs_both_sides_and_a_non_zero_peer() {
        assert_eq!(ratio(Some(3.0), Some(2.0)), Some(1.5));
        assert_eq!(ratio(Some(3.0), Some(0.0)), None);
        assert_eq!(ratio(None, Some(2.0)), None);
        assert_eq!(ratio(Some(1.0), None), None);
    }

    #[test]
    fn numbers_get_thousands_separators_from_one_thousand() {
        assert_eq!(format_number(5_422_810.4), "5,422,810");
        assert_eq!(format_number(1000.0), "1,000");
        assert_eq!(format_number(999.456), "999.46");
        assert_eq!(format_number(-12_345.0), "-12,345");
        assert_eq!(format_number(0.5), "0.50");
    }

    const FIGURES: &[Figure] = &[
        Figure {
            label: "churn adds/s",
            field: "adds_per_s",
            peer: &[("workload", "churn"), ("impl", "client-go")],
            ours: &[("workload", "churn"), ("impl", "kcm-workqueue")],
            better: Better::Higher,
        },
        Figure {
            label: "delay p99 µs",
            field: "lateness_p99_us",
            peer: &[("workload", "delay"), ("impl", "client-go")],
            ours: &[("workload", "delay"), ("impl", "kcm-workqueue")],
            better: Better::Lower,
        },
        Figure {
            label: "churn gets",
            field: "gets",
            peer: &[("workload", "churn"), ("impl", "client-go")],
            ours: &[("workload", "churn"), ("impl", "kcm-workqueue")],
            better: Better::Neither,
        },
    ];

    #[test]
    fn rows_take_the_median_of_matching_lines_only() {
        let lines = vec![
            json!({"workload": "churn", "impl": "client-go", "adds_per_s": 100.0}),
            json!({"workload": "churn", "impl": "client-go", "adds_per_s": 300.0}),
            json!({"workload": "churn", "impl": "client-go", "adds_per_s": 200.0}),
            json!({"workload": "churn", "impl": "kcm-workqueue", "adds_per_s": 500.0}),
            json!({"workload": "churn", "impl": "kcm-workqueue", "adds_per_s": 400.0}),
            // A third implementation is kept in the output but never in the table.
            json!({"workload": "churn", "impl": "peer-naive", "adds_per_s": 1.0}),
            json!({"workload": "delay", "impl": "client-go", "lateness_p99_us": 40.0}),
        ];
        let rows = rows(&lines, FIGURES);
        assert_eq!(rows[0].peer, Some(200.0));
        assert_eq!(rows[0].ours, Some(450.0));
        assert_eq!(rows[0].ratio, Some(2.25));
        assert_eq!(rows[0].samples, (3, 2));
        assert_eq!(rows[0].label, "churn adds/s ↑");
        assert_eq!(rows[1].peer, Some(40.0));
        assert_eq!(rows[1].ours, None);
        assert_eq!(rows[1].ratio, None);
        assert_eq!(rows[2].label, "churn gets");
    }

    #[test]
    fn markdown_has_one_line_per_row_and_dashes_for_missing_figures() {
        let lines = vec![
            json!({"workload": "churn", "impl": "client-go", "adds_per_s": 2_000_000.0}),
            json!({"workload": "churn", "impl": "kcm-workqueue", "adds_per_s": 3_000_000.0}),
        ];
        let table = markdown(&rows(&lines, FIGURES));
        let body: Vec<&str> = table.lines().collect();
        assert_eq!(body.len(), 5);
        assert_eq!(
            body[0],
            "| figure | client-go (median) | kcm-rs (median) | kcm / client-go |"
        );
        assert_eq!(body[2], "| churn adds/s ↑ | 2,000,000 | 3,000,000 | 1.50 |");
        assert_eq!(body[3], "| delay p99 µs ↓ | – | – | – |");
    }
}
