//! What the hand-written SVG drawings (the rollout timeline, the benchmark plot) share: the
//! document's opening, a polyline, the colours and text escaping.

use std::fmt::Write as _;

/// The colours of the lines, in order.
pub(crate) const PALETTE: &[&str] = &[
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
];

/// The opening of a `w` × `h` drawing on white, 12-point sans-serif text.
pub(crate) fn open(w: f64, h: f64) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    )
}

/// A 2-pixel line through `points` (`x,y` each), dashed or solid.
pub(crate) fn polyline(svg: &mut String, color: &str, dashed: bool, points: &[String]) {
    let dash = if dashed {
        " stroke-dasharray=\"6 3\""
    } else {
        ""
    };
    let _ = writeln!(
        svg,
        "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} points=\"{}\"/>",
        points.join(" ")
    );
}

/// `s` safe inside SVG text.
pub(crate) fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_well_formed() {
        assert!(
            open(10.0, 20.0).starts_with(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"20\""
            )
        );
        let mut s = String::new();
        polyline(&mut s, "black", true, &["1.0,2.0".into(), "3.0,4.0".into()]);
        assert_eq!(
            s,
            "<polyline fill=\"none\" stroke=\"black\" stroke-width=\"2\" stroke-dasharray=\"6 3\" points=\"1.0,2.0 3.0,4.0\"/>\n"
        );
        assert_eq!(xml_escape("a<b & c>"), "a&lt;b &amp; c&gt;");
    }
}
