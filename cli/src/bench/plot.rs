//! The makespan chart of `hipshim bench policies --plot`: plain SVG, one horizontal bar per
//! policy, with the two references that frame the experiment (everything serialized, and
//! every stream in parallel) as dashed lines.

use super::measure::{Metrics, RunOutput};
use std::fmt::Write as _;

const LABEL_W: f64 = 110.0;
const CHART_W: f64 = 520.0;
const RIGHT_W: f64 = 150.0;
const BAR_H: f64 = 22.0;
const GAP: f64 = 8.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 40.0;

pub fn makespan_svg(config: &RunOutput, rows: &[(String, Metrics)]) -> String {
    let work_ms = config.work_us as f64 * 1e-3;
    let serial_ms = (config.streams * config.kernels) as f64 * work_ms;
    let parallel_ms = config.kernels as f64 * work_ms;
    let max_ms = rows
        .iter()
        .map(|(_, m)| m.makespan_s * 1e3)
        .fold(serial_ms, f64::max)
        * 1.05;
    let x = |ms: f64| LABEL_W + CHART_W * ms / max_ms;
    let width = LABEL_W + CHART_W + RIGHT_W;
    let height = TOP + rows.len() as f64 * (BAR_H + GAP) + BOTTOM;
    let bottom = TOP + rows.len() as f64 * (BAR_H + GAP);

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{LABEL_W}" y="20" font-size="14">Makespan per queue policy: {} streams x {} kernels x {} us</text>"#,
        config.streams, config.kernels, config.work_us
    );
    for (i, (policy, m)) in rows.iter().enumerate() {
        let y = TOP + i as f64 * (BAR_H + GAP);
        let ms = m.makespan_s * 1e3;
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LABEL_W - 8.0,
            y + BAR_H * 0.7,
            escape(policy)
        );
        let _ = writeln!(
            svg,
            r##"<rect x="{LABEL_W}" y="{y:.1}" width="{:.1}" height="{BAR_H}" fill="#4477aa"><title>{}: {ms:.1} ms, overlap {:.2}</title></rect>"##,
            (x(ms) - LABEL_W).max(0.5),
            escape(policy),
            m.overlap
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}">{ms:.1} ms, overlap {:.2}</text>"#,
            x(ms) + 6.0,
            y + BAR_H * 0.7,
            m.overlap
        );
    }
    for (ms, label) in [(serial_ms, "serial"), (parallel_ms, "all streams parallel")] {
        let _ = writeln!(
            svg,
            r##"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#cc3311" stroke-dasharray="4 3"/>"##,
            x(ms),
            TOP - 12.0,
            bottom
        );
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" fill="#cc3311" text-anchor="middle">{label} {ms:.0} ms</text>"##,
            x(ms),
            TOP - 16.0
        );
    }
    let _ = writeln!(
        svg,
        r##"<line x1="{LABEL_W}" y1="{bottom:.1}" x2="{:.1}" y2="{bottom:.1}" stroke="black"/>"##,
        LABEL_W + CHART_W
    );
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">makespan (ms, device time)</text>"#,
        LABEL_W + CHART_W / 2.0,
        bottom + 25.0
    );
    svg.push_str("</svg>\n");
    svg
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bar_per_policy_and_both_references() {
        let config = RunOutput {
            streams: 2,
            kernels: 2,
            work_us: 1000,
            clock_hz: 1e8,
            ..RunOutput::default()
        };
        let m = |ms: f64| Metrics {
            kernels: 4,
            makespan_s: ms * 1e-3,
            throughput: 0.0,
            overlap: 1.0,
            peak: 1,
            vs_serial: 1.0,
            host_s: 0.0,
            queues: None,
        };
        let svg = makespan_svg(
            &config,
            &[("single".into(), m(4.0)), ("dedicated".into(), m(2.0))],
        );
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<rect x=").count(), 2);
        assert!(svg.contains(">single<") && svg.contains(">dedicated<"));
        assert!(svg.contains("serial 4 ms") && svg.contains("all streams parallel 2 ms"));
    }
}
