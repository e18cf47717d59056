//! Hand-written SVG bar charts (no plotting dependency).

use std::fmt::Write;

pub struct Bar {
    pub label: String,
    pub value: f64,
    pub color: &'static str,
    /// Text printed after the bar (defaults to the value).
    pub text: Option<String>,
}

pub struct Group {
    pub title: String,
    pub bars: Vec<Bar>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Horizontal bars, groups stacked vertically, one shared x axis (log10 if `log`).
pub fn hbars(
    title: &str,
    xlabel: &str,
    groups: &[Group],
    log: bool,
    legend: &[(&str, &str)],
) -> String {
    let label_w = 230.0;
    let plot_w = 560.0;
    let right = 120.0;
    let bar_h = 16.0;
    let gap = 4.0;
    let group_gap = 34.0;
    let top = 58.0 + if legend.is_empty() { 0.0 } else { 22.0 };
    let vals: Vec<f64> = groups
        .iter()
        .flat_map(|g| g.bars.iter().map(|b| b.value))
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let vmax = vals.iter().cloned().fold(0.0f64, f64::max).max(1e-12);
    let vmin = vals.iter().cloned().fold(f64::INFINITY, f64::min).min(vmax);
    let (lo, hi) = if log {
        (
            (vmin.log10()).floor(),
            (vmax.log10()).ceil().max(vmin.log10().floor() + 1.0),
        )
    } else {
        (0.0, nice_max(vmax))
    };
    let xpos = |v: f64| -> f64 {
        let f = if log {
            if v <= 0.0 {
                0.0
            } else {
                (v.log10() - lo) / (hi - lo)
            }
        } else {
            v / hi
        };
        label_w + plot_w * f.clamp(0.0, 1.0)
    };
    let mut h = top;
    for g in groups {
        h += 22.0 + g.bars.len() as f64 * (bar_h + gap) + group_gap;
    }
    h += 30.0;
    let w = label_w + plot_w + right;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" font-size="16" font-weight="bold" text-anchor="middle">{}</text>"#,
        w / 2.0,
        esc(title)
    );
    let _ = writeln!(
        s,
        r##"<text x="{}" y="44" text-anchor="middle" fill="#444">{}</text>"##,
        label_w + plot_w / 2.0,
        esc(xlabel)
    );
    if !legend.is_empty() {
        let mut x = label_w;
        for (name, color) in legend {
            let _ = writeln!(
                s,
                r#"<rect x="{x}" y="56" width="12" height="12" fill="{color}"/><text x="{}" y="66">{}</text>"#,
                x + 16.0,
                esc(name)
            );
            x += 24.0 + 7.0 * name.len() as f64;
        }
    }
    // Grid lines.
    let ticks: Vec<f64> = if log {
        (lo as i32..=hi as i32).map(|e| 10f64.powi(e)).collect()
    } else {
        (0..=5).map(|i| hi * i as f64 / 5.0).collect()
    };
    for t in &ticks {
        let x = xpos(*t);
        let _ = writeln!(
            s,
            r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#ddd"/><text x="{x}" y="{}" text-anchor="middle" fill="#666" font-size="10">{}</text>"##,
            top - 4.0,
            h - 26.0,
            h - 12.0,
            fmt_num(*t)
        );
    }
    let mut y = top;
    for g in groups {
        let _ = writeln!(
            s,
            r#"<text x="8" y="{}" font-weight="bold">{}</text>"#,
            y + 14.0,
            esc(&g.title)
        );
        y += 22.0;
        for b in &g.bars {
            let x1 = xpos(b.value);
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
                label_w - 6.0,
                y + bar_h - 4.0,
                esc(&b.label)
            );
            if b.value.is_finite() && b.value > 0.0 {
                let _ = writeln!(
                    s,
                    r#"<rect x="{label_w}" y="{y}" width="{:.2}" height="{bar_h}" fill="{}"/>"#,
                    (x1 - label_w).max(0.5),
                    b.color
                );
            }
            let text = b.text.clone().unwrap_or_else(|| fmt_num(b.value));
            let _ = writeln!(
                s,
                r##"<text x="{}" y="{}" fill="#222">{}</text>"##,
                x1 + 4.0,
                y + bar_h - 4.0,
                esc(&text)
            );
            y += bar_h + gap;
        }
        y += group_gap;
    }
    s.push_str("</svg>\n");
    s
}

fn nice_max(v: f64) -> f64 {
    let e = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * e >= v {
            return m * e;
        }
    }
    10.0 * e
}

pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else {
        format!("{v:.1e}")
    }
}
