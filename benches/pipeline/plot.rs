//! The plots, with `plotters`: seconds per time step of every configuration against the link
//! floor (`<stem>-time`), and each GPU configuration's busy time per stage (`<stem>-stages`),
//! each as SVG and PNG. Horizontal bars on a log axis, grouped by program and size.
//!
//! Text is drawn with the DejaVu Sans font compiled in (the `dejavu` crate, through plotters'
//! `ab_glyph` feature), so the plots look the same on a machine without fonts or fontconfig.

use crate::configs::color_of;
use crate::results::{gb, Output};
use plotters::coord::ranged1d::SegmentValue;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

const FLOOR: RGBColor = RGBColor(0xd6, 0x27, 0x28);
const MEASURED: RGBColor = RGBColor(0x22, 0x22, 0x22);
/// The stages of the breakdown, in the order their bars are drawn.
const STAGES: [(&str, RGBColor); 5] = [
    ("htod", RGBColor(0x1f, 0x77, 0xb4)),
    ("dtoh", RGBColor(0xff, 0x7f, 0x0e)),
    ("dtod", RGBColor(0x94, 0x67, 0xbd)),
    ("kernel", RGBColor(0x2c, 0xa0, 0x2c)),
    ("host copy", RGBColor(0x8c, 0x56, 0x4b)),
];

struct Bar {
    label: String,
    value: f64,
    color: RGBColor,
    /// Text after the bar (default: the value).
    text: Option<String>,
}

struct Group {
    title: String,
    bars: Vec<Bar>,
}

/// One figure: groups of bars stacked vertically over one shared log axis.
struct Figure {
    title: String,
    xlabel: &'static str,
    groups: Vec<Group>,
    /// Colour key drawn in the corner (empty: none).
    legend: Vec<(&'static str, RGBColor)>,
}

/// Writes `<stem>-time.{svg,png}` and `<stem>-stages.{svg,png}`; the files written.
pub fn write_plots(out: &Output, stem: &str) -> Result<Vec<String>, String> {
    register_fonts()?;
    let mut written = Vec::new();
    for (suffix, fig) in [("time", time_figure(out)), ("stages", stage_figure(out))] {
        if fig.groups.is_empty() {
            continue;
        }
        let size = (910, fig.height());
        let svg = format!("{stem}-{suffix}.svg");
        draw(SVGBackend::new(&svg, size).into_drawing_area(), &fig)?;
        let png = format!("{stem}-{suffix}.png");
        draw(BitMapBackend::new(&png, size).into_drawing_area(), &fig)?;
        written.extend([svg, png]);
    }
    Ok(written)
}

fn register_fonts() -> Result<(), String> {
    static DONE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        for (style, bytes) in [
            (FontStyle::Normal, dejavu::sans::regular()),
            (FontStyle::Bold, dejavu::sans::bold()),
        ] {
            plotters::style::register_font("sans-serif", style, bytes)
                .map_err(|_| "the bundled DejaVu font does not load".to_string())?;
        }
        Ok(())
    })
    .clone()
}

/// Seconds per step of every configuration, with the floor of region sharing.
fn time_figure(out: &Output) -> Figure {
    let mut groups = Vec::new();
    for r in out.runs.iter().filter(|r| !r.configs.is_empty()) {
        let mut bars: Vec<Bar> = r
            .configs
            .iter()
            .map(|m| Bar {
                label: format!("{} (d={}, k={})", m.config, m.chunks, m.block_steps),
                value: m.per_step,
                color: rgb(color_of(&m.config)),
                text: Some(format!(
                    "{} s{}",
                    fmt_num(m.per_step),
                    if m.floor_seconds > 0.0 {
                        format!(", eff {:.2}", m.efficiency)
                    } else {
                        String::new()
                    }
                )),
            })
            .collect();
        let rs = r.configs.iter().find(|m| m.config == "region-sharing");
        if let Some(rs) = rs.filter(|rs| rs.floor_seconds > 0.0) {
            bars.push(Bar {
                label: "floor of region-sharing".into(),
                value: rs.floor_seconds / rs.steps.max(1) as f64,
                color: FLOOR,
                text: None,
            });
        }
        let title = format!(
            "{} {} {}x{}x{} ({:.0} GB, {} steps)",
            r.program,
            r.size,
            r.shape[0],
            r.shape[1],
            r.shape[2],
            gb(r.array_bytes),
            r.steps
        );
        groups.push(Group { title, bars });
    }
    Figure {
        title: format!("Seconds per time step: {} ({})", out.device, out.date),
        xlabel: "seconds per time step (log scale)",
        groups,
        legend: Vec::new(),
    }
}

/// Busy time per stage of every GPU configuration, against its measured time and floor.
fn stage_figure(out: &Output) -> Figure {
    let mut groups = Vec::new();
    for r in &out.runs {
        for m in r.configs.iter().filter(|m| m.config != "cpu") {
            let st = m.steps.max(1) as f64;
            let s = &m.stages;
            let busy = [s.htod, s.dtoh, s.dtod, s.kernel, s.host_copy];
            let mut bars: Vec<Bar> = STAGES
                .iter()
                .zip(busy)
                .filter(|(_, v)| *v > 0.0)
                .map(|(&(name, color), v)| bar(name, v / st, color))
                .collect();
            bars.push(bar("measured", m.per_step, MEASURED));
            if m.floor_seconds > 0.0 {
                bars.push(bar("floor", m.floor_seconds / st, FLOOR));
            }
            let title = format!(
                "{} {}: {} (d={}, k={})",
                r.program, r.size, m.config, m.chunks, m.block_steps
            );
            groups.push(Group { title, bars });
        }
    }
    let mut legend: Vec<(&str, RGBColor)> = STAGES.to_vec();
    legend.extend([("measured", MEASURED), ("floor", FLOOR)]);
    Figure {
        title: format!(
            "Stage breakdown per time step (busy time summed over streams; stages overlap): {}",
            out.device
        ),
        xlabel: "seconds per time step (log scale)",
        groups,
        legend,
    }
}

fn bar(name: &str, value: f64, color: RGBColor) -> Bar {
    Bar {
        label: name.into(),
        value,
        color,
        text: None,
    }
}

fn rgb((r, g, b): (u8, u8, u8)) -> RGBColor {
    RGBColor(r, g, b)
}

/// Pixels per row (a bar or a group's title).
const ROW: u32 = 22;

impl Figure {
    /// Rows from the top: a group's title (`None`), then its bars.
    fn rows(&self) -> Vec<(&Group, Option<&Bar>)> {
        let mut rows = Vec::new();
        for g in &self.groups {
            rows.push((g, None));
            rows.extend(g.bars.iter().map(|b| (g, Some(b))));
        }
        rows
    }

    fn height(&self) -> u32 {
        let legend = if self.legend.is_empty() { 0 } else { 30 };
        self.rows().len() as u32 * ROW + 120 + legend
    }

    /// Whole decades covering every positive value, with room on the right for the bars' text.
    fn x_range(&self) -> (f64, f64) {
        let vals = self
            .groups
            .iter()
            .flat_map(|g| g.bars.iter().map(|b| b.value))
            .filter(|v| v.is_finite() && *v > 0.0);
        let (lo, hi) = vals.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let hi = hi.max(1e-12);
        let lo = lo.min(hi);
        (
            10f64.powf(lo.log10().floor()),
            10f64.powf((hi.log10() + 0.6).ceil()),
        )
    }
}

type PlotResult = Result<(), String>;

/// Draws `fig` on `root` (an SVG or a bitmap backend).
fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, fig: &Figure) -> PlotResult
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing a plot: {e}");
    root.fill(&WHITE).map_err(e)?;
    let rows = fig.rows();
    let n = rows.len().max(1);
    let (lo, hi) = fig.x_range();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            &fig.title,
            ("sans-serif", 16).into_font().style(FontStyle::Bold),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(230)
        // `0..n - 1` holds n values: one segment per row.
        .build_cartesian_2d((lo..hi).log_scale(), (0..n - 1).into_segmented())
        .map_err(e)?;
    // Row r (from the top) is segment n - 1 - r (plotters counts upwards).
    let seg = |r: usize| n - 1 - r;
    let labels: Vec<String> = rows
        .iter()
        .map(|(_, b)| b.map(|b| b.label.clone()).unwrap_or_default())
        .collect();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) if *i < n => labels[n - 1 - i].clone(),
            _ => String::new(),
        })
        .x_desc(fig.xlabel)
        .x_label_formatter(&|v| fmt_num(*v))
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(e)?;
    for (r, (g, b)) in rows.iter().enumerate() {
        let at = |x: f64| (x, SegmentValue::CenterOf(seg(r)));
        let Some(b) = b else {
            let title = Text::new(
                g.title.clone(),
                (6, -7),
                ("sans-serif", 13).into_font().style(FontStyle::Bold),
            );
            chart
                .draw_series(std::iter::once(EmptyElement::at(at(lo)) + title))
                .map_err(e)?;
            continue;
        };
        if b.value.is_finite() && b.value > 0.0 {
            let mut rect = Rectangle::new(
                [
                    (lo, SegmentValue::Exact(seg(r))),
                    (b.value, SegmentValue::Exact(seg(r) + 1)),
                ],
                b.color.filled(),
            );
            rect.set_margin(3, 3, 0, 0);
            chart.draw_series(std::iter::once(rect)).map_err(e)?;
        }
        let text = b.text.clone().unwrap_or_else(|| fmt_num(b.value));
        let x = if b.value.is_finite() && b.value > 0.0 {
            b.value
        } else {
            lo
        };
        let label = Text::new(
            text,
            (4, -7),
            ("sans-serif", 12).into_font().color(&MEASURED),
        );
        chart
            .draw_series(std::iter::once(EmptyElement::at(at(x)) + label))
            .map_err(e)?;
    }
    draw_legend(&mut chart, &fig.legend).map_err(e)?;
    root.present().map_err(e)
}

type Chart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<
        plotters::coord::combinators::LogCoord<f64>,
        plotters::coord::ranged1d::SegmentedCoord<plotters::coord::types::RangedCoordusize>,
    >,
>;

/// The colour key, in the upper right corner.
fn draw_legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    legend: &[(&'static str, RGBColor)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    if legend.is_empty() {
        return Ok(());
    }
    for &(name, color) in legend {
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, SegmentValue<usize>)>>())?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
}

/// A number with about three significant digits.
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
