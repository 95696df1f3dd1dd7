//! Line charts written as PNG and SVG, with an embedded font (no system font libraries).
//!
//! Usage: build a [`LineChart`], add [`Series`] with [`LineChart::series`] (or the `dashed`
//! variant), then [`LineChart::write`] it to `dir/stem.png` and `dir/stem.svg`. Axes may be linear
//! or logarithmic ([`Scale`]). Text is drawn with DejaVu Sans from the `dejavu` crate, registered
//! with plotters' `ab_glyph` backend, so PNGs render labels on a machine without fontconfig.

use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{anyhow, Context, Result};
use plotters::chart::{ChartContext, MeshStyle};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;

/// The font family name charts use (DejaVu Sans, registered on first use).
const FONT: &str = "sans-serif";

/// A colour palette that stays distinguishable for up to ten series.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

static FONT_INIT: Once = Once::new();

/// A chart that can draw itself onto any plotters backend; [`write_png_svg`] renders it twice.
trait Figure {
    /// Picture size in pixels (width, height).
    fn size(&self) -> (u32, u32);

    /// Draws the whole picture onto `root`.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static;
}

/// Writes `dir/stem.png` and `dir/stem.svg` (creating `dir`) and returns both paths.
fn write_png_svg(fig: &impl Figure, dir: &Path, stem: &str) -> Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    ensure_font();
    {
        let root = BitMapBackend::new(&png, fig.size()).into_drawing_area();
        fig.draw(&root)?;
        root.present()
            .map_err(|e| anyhow!("writing {}: {e}", png.display()))?;
    }
    {
        let root = SVGBackend::new(&svg, fig.size()).into_drawing_area();
        fig.draw(&root)?;
        root.present()
            .map_err(|e| anyhow!("writing {}: {e}", svg.display()))?;
    }
    Ok((png, svg))
}

/// The caption, margins and label areas every chart uses.
fn frame<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
) -> ChartBuilder<'a, 'static, DB> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, (FONT, 26).into_font().style(FontStyle::Bold))
        .margin(16)
        .margin_right(36)
        .x_label_area_size(52)
        .y_label_area_size(72);
    builder
}

/// Axis descriptions, fonts, y tick format and grid colours every chart uses.
fn style_mesh<X, Y, DB>(mesh: &mut MeshStyle<'_, '_, X, Y, DB>, x_label: &str, y_label: &str)
where
    X: Ranged,
    Y: Ranged<ValueType = f64>,
    DB: DrawingBackend,
{
    mesh.x_desc(x_label)
        .y_desc(y_label)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .y_label_formatter(&|v| fmt_tick(*v))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(205, 205, 205));
}

/// Draws the legend box at `position`.
fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .label_font((FONT, 16))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .position(position)
        .draw()
}

/// Registers the embedded font with plotters (idempotent).
fn ensure_font() {
    FONT_INIT.call_once(|| {
        // The font bytes are a valid TTF shipped by the `dejavu` crate, so this cannot fail.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Axis scale.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Scale {
    /// Linear axis.
    #[default]
    Linear,
    /// Logarithmic axis with the given base (e.g. 2.0 or 10.0); all values must be positive.
    Log(f64),
}

/// One named line.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Draw dashed (e.g. for thresholds or reference lines).
    pub dashed: bool,
    /// Palette index; `None` takes the next unused palette colour.
    pub colour: Option<usize>,
}

/// A line chart description.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    /// Title above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// The lines, drawn in order with palette colours.
    pub series: Vec<Series>,
    /// X axis scale.
    pub x_scale: Scale,
    /// Y axis scale.
    pub y_scale: Scale,
    /// Fixed x range; `None` fits the data.
    pub x_range: Option<(f64, f64)>,
    /// Fixed y range; `None` fits the data (from 0 for linear axes with non-negative data).
    pub y_range: Option<(f64, f64)>,
    /// Picture size in pixels (width, height).
    pub size: (u32, u32),
    /// Legend in the lower right corner instead of the upper left (CDFs, which rise there).
    pub legend_lower_right: bool,
}

impl LineChart {
    /// A chart with a title and axis labels, linear axes, 960x600 pixels, no series yet.
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Self {
        Self {
            title: title.to_string(),
            x_label: x_label.to_string(),
            y_label: y_label.to_string(),
            series: Vec::new(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            x_range: None,
            y_range: None,
            size: (960, 600),
            legend_lower_right: false,
        }
    }

    /// Puts the legend in the lower right corner (for CDFs, whose lines rise in the upper left).
    pub fn legend_lower_right(mut self) -> Self {
        self.legend_lower_right = true;
        self
    }

    /// Adds a solid line.
    pub fn series(mut self, name: &str, points: Vec<(f64, f64)>) -> Self {
        self.series.push(Series {
            name: name.to_string(),
            points,
            dashed: false,
            colour: None,
        });
        self
    }

    /// Adds a dashed line.
    pub fn dashed(mut self, name: &str, points: Vec<(f64, f64)>) -> Self {
        self.series.push(Series {
            name: name.to_string(),
            points,
            dashed: true,
            colour: None,
        });
        self
    }

    /// Gives the last added series the same colour as the one before it (e.g. a percentile band
    /// drawn dashed in its median's colour). An empty name keeps a series out of the legend.
    pub fn same_colour(mut self) -> Self {
        let n = self.series.len();
        if n >= 2 {
            let prev = self.colours()[n - 2];
            self.series[n - 1].colour = Some(prev);
        }
        self
    }

    /// Palette index of every series.
    fn colours(&self) -> Vec<usize> {
        let mut next = 0;
        self.series
            .iter()
            .map(|s| {
                s.colour.unwrap_or_else(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect()
    }

    /// Sets the x axis scale.
    pub fn x_scale(mut self, scale: Scale) -> Self {
        self.x_scale = scale;
        self
    }

    /// Sets the y axis scale.
    pub fn y_scale(mut self, scale: Scale) -> Self {
        self.y_scale = scale;
        self
    }

    /// Fixes the y range.
    pub fn y_range(mut self, lo: f64, hi: f64) -> Self {
        self.y_range = Some((lo, hi));
        self
    }

    /// Writes `dir/stem.png` and `dir/stem.svg` (creating `dir`) and returns both paths.
    pub fn write(&self, dir: &Path, stem: &str) -> Result<(PathBuf, PathBuf)> {
        write_png_svg(self, dir, stem)
    }

    /// Data bounds of one axis, padded, honouring the scale.
    fn bounds(&self, pick: impl Fn(&(f64, f64)) -> f64, scale: Scale, is_y: bool) -> (f64, f64) {
        let vals = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(&pick))
            .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0));
        let (mut lo, mut hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        if !lo.is_finite() {
            return if scale == Scale::Linear {
                (0.0, 1.0)
            } else {
                (1.0, 10.0)
            };
        }
        match scale {
            Scale::Linear => {
                if is_y && lo >= 0.0 {
                    lo = 0.0;
                }
                if hi <= lo {
                    hi = lo + 1.0;
                }
                if is_y {
                    hi += (hi - lo) * 0.05;
                }
                (lo, hi)
            }
            Scale::Log(_) => {
                if hi <= lo {
                    hi = lo * 10.0;
                }
                if is_y {
                    (lo / 1.5, hi * 1.5)
                } else {
                    (lo, hi)
                }
            }
        }
    }
}

impl Figure for LineChart {
    fn size(&self) -> (u32, u32) {
        self.size
    }

    /// Dispatches on the axis scales to [`LineChart::draw_with`].
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (x0, x1) = self
            .x_range
            .unwrap_or_else(|| self.bounds(|p| p.0, self.x_scale, false));
        let (y0, y1) = self
            .y_range
            .unwrap_or_else(|| self.bounds(|p| p.1, self.y_scale, true));
        let lin = |a: f64, b: f64| -> RangedCoordf64 { (a..b).into() };
        match (self.x_scale, self.y_scale) {
            (Scale::Linear, Scale::Linear) => self.draw_with(root, lin(x0, x1), lin(y0, y1)),
            (Scale::Log(bx), Scale::Linear) => {
                self.draw_with(root, (x0..x1).log_scale().base(bx), lin(y0, y1))
            }
            (Scale::Linear, Scale::Log(by)) => {
                self.draw_with(root, lin(x0, x1), (y0..y1).log_scale().base(by))
            }
            (Scale::Log(bx), Scale::Log(by)) => self.draw_with(
                root,
                (x0..x1).log_scale().base(bx),
                (y0..y1).log_scale().base(by),
            ),
        }
    }
}

impl LineChart {
    /// Draws with concrete coordinate specs.
    fn draw_with<DB, X, Y>(&self, root: &DrawingArea<DB, Shift>, x: X, y: Y) -> Result<()>
    where
        DB: DrawingBackend,
        DB::ErrorType: 'static,
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("plotting: {e:?}");
        root.fill(&WHITE).map_err(err)?;
        let mut chart = frame(root, &self.title)
            .build_cartesian_2d(x, y)
            .map_err(err)?;
        let mut mesh = chart.configure_mesh();
        style_mesh(&mut mesh, &self.x_label, &self.y_label);
        mesh.x_label_formatter(&|v| fmt_tick(*v))
            .draw()
            .map_err(err)?;
        let colours = self.colours();
        for (s, &ci) in self.series.iter().zip(&colours) {
            let colour = PALETTE[ci % PALETTE.len()];
            let style = ShapeStyle::from(colour).stroke_width(2);
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|&(a, b)| {
                    a.is_finite()
                        && b.is_finite()
                        && (self.x_scale == Scale::Linear || a > 0.0)
                        && (self.y_scale == Scale::Linear || b > 0.0)
                })
                .collect();
            let anno = if s.dashed {
                chart
                    .draw_series(DashedLineSeries::new(pts, 8, 6, style))
                    .map_err(err)?
            } else {
                chart
                    .draw_series(LineSeries::new(pts, style))
                    .map_err(err)?
            };
            if !s.name.is_empty() {
                anno.label(s.name.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3))
                });
            }
        }
        if self.series.iter().any(|s| !s.name.is_empty()) {
            let at = if self.legend_lower_right {
                SeriesLabelPosition::LowerRight
            } else {
                SeriesLabelPosition::UpperLeft
            };
            draw_legend(&mut chart, at).map_err(err)?;
        }
        Ok(())
    }
}

/// A grouped bar chart: one group per category, one bar per series inside each group.
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    /// Title above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Category names (x axis).
    pub categories: Vec<String>,
    /// (legend label, one value per category).
    pub series: Vec<(String, Vec<f64>)>,
    /// Dashed horizontal reference lines (label, y).
    pub references: Vec<(String, f64)>,
    /// Picture size in pixels.
    pub size: (u32, u32),
}

impl BarChart {
    /// An empty chart, 960x600 pixels.
    pub fn new(title: &str, x_label: &str, y_label: &str, categories: Vec<String>) -> Self {
        Self {
            title: title.to_string(),
            x_label: x_label.to_string(),
            y_label: y_label.to_string(),
            categories,
            series: Vec::new(),
            references: Vec::new(),
            size: (960, 600),
        }
    }

    /// Adds a series (one value per category).
    pub fn series(mut self, name: &str, values: Vec<f64>) -> Self {
        self.series.push((name.to_string(), values));
        self
    }

    /// Adds a dashed horizontal reference line.
    pub fn reference(mut self, name: &str, y: f64) -> Self {
        self.references.push((name.to_string(), y));
        self
    }

    /// Writes `dir/stem.png` and `dir/stem.svg` (creating `dir`) and returns both paths.
    pub fn write(&self, dir: &Path, stem: &str) -> Result<(PathBuf, PathBuf)> {
        write_png_svg(self, dir, stem)
    }
}

impl Figure for BarChart {
    fn size(&self) -> (u32, u32) {
        self.size
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("plotting: {e:?}");
        root.fill(&WHITE).map_err(err)?;
        let n = self.categories.len().max(1);
        let top = self
            .series
            .iter()
            .flat_map(|s| s.1.iter().copied())
            .chain(self.references.iter().map(|r| r.1))
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let top = if top > 0.0 { top * 1.15 } else { 1.0 };
        let cats = self.categories.clone();
        let mut chart = frame(root, &self.title)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..top)
            .map_err(err)?;
        let mut mesh = chart.configure_mesh();
        style_mesh(&mut mesh, &self.x_label, &self.y_label);
        mesh.disable_x_mesh()
            .x_labels(n.min(40))
            .x_label_formatter(&|v| {
                let i = v.round();
                if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < cats.len() {
                    cats[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .draw()
            .map_err(err)?;
        let k = self.series.len().max(1) as f64;
        let width = 0.8 / k;
        for (si, (name, values)) in self.series.iter().enumerate() {
            let colour = PALETTE[si % PALETTE.len()];
            let x_off = -0.4 + width * si as f64;
            let bars = values
                .iter()
                .enumerate()
                .filter(|(_, v)| v.is_finite())
                .map(|(i, &v)| {
                    let x0 = i as f64 + x_off;
                    Rectangle::new([(x0, 0.0), (x0 + width * 0.92, v)], colour.filled())
                });
            chart
                .draw_series(bars)
                .map_err(err)?
                .label(name.clone())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 18, y + 6)], colour.filled())
                });
        }
        for (name, y) in &self.references {
            let style = ShapeStyle::from(BLACK.mix(0.7)).stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(-0.5, *y), (n as f64 - 0.5, *y)],
                    8,
                    6,
                    style,
                ))
                .map_err(err)?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight).map_err(err)?;
        Ok(())
    }
}

/// Line charts side by side in one picture (a paper figure's sub-plots, e.g. one per load),
/// filled row by row under a common title.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartGrid {
    /// Title above the grid.
    pub title: String,
    /// The charts, row by row; each keeps its own title, axes and legend.
    pub charts: Vec<LineChart>,
    /// Charts per row.
    pub columns: usize,
    /// Size of one chart in pixels (width, height).
    pub cell: (u32, u32),
}

impl ChartGrid {
    /// An empty grid of `columns` charts per row, 640x440 pixels each.
    pub fn new(title: &str, columns: usize) -> Self {
        Self {
            title: title.to_string(),
            charts: Vec::new(),
            columns: columns.max(1),
            cell: (640, 440),
        }
    }

    /// Adds a chart in the next cell.
    pub fn chart(mut self, chart: LineChart) -> Self {
        self.charts.push(chart);
        self
    }

    /// Rows the charts fill.
    fn rows(&self) -> usize {
        self.charts.len().div_ceil(self.columns).max(1)
    }

    /// Writes `dir/stem.png` and `dir/stem.svg` (creating `dir`) and returns both paths.
    pub fn write(&self, dir: &Path, stem: &str) -> Result<(PathBuf, PathBuf)> {
        write_png_svg(self, dir, stem)
    }
}

/// Height of a grid's common title (pixels).
const GRID_TITLE: u32 = 44;

impl Figure for ChartGrid {
    fn size(&self) -> (u32, u32) {
        let cols = self.columns.min(self.charts.len().max(1)) as u32;
        (
            self.cell.0 * cols,
            self.cell.1 * self.rows() as u32 + GRID_TITLE,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("plotting: {e:?}");
        root.fill(&WHITE).map_err(err)?;
        let (head, body) = root.split_vertically(GRID_TITLE);
        head.titled(&self.title, (FONT, 26).into_font().style(FontStyle::Bold))
            .map_err(err)?;
        let cols = self.columns.min(self.charts.len().max(1));
        let cells = body.split_evenly((self.rows(), cols));
        for (chart, area) in self.charts.iter().zip(cells.iter()) {
            chart.draw(area)?;
        }
        Ok(())
    }
}

/// Formats a tick value compactly (integers without decimals, powers of two as-is).
fn fmt_tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".to_string()
    } else if (v - v.round()).abs() < 1e-9 && a < 1e7 {
        format!("{}", v.round() as i64)
    } else if (0.01..1e7).contains(&a) {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks() {
        assert_eq!(fmt_tick(1024.0), "1024");
        assert_eq!(fmt_tick(0.25), "0.25");
        assert_eq!(fmt_tick(0.001), "1.0e-3");
    }

    #[test]
    fn grid_lays_charts_out_row_by_row() {
        let dir = std::env::temp_dir().join(format!("theory-grid-{}", std::process::id()));
        let line = |t: &str| LineChart::new(t, "x", "y").series("s", vec![(0.0, 0.0), (1.0, 1.0)]);
        let g = ChartGrid::new("grid", 2)
            .chart(line("a"))
            .chart(line("b"))
            .chart(line("c"));
        assert_eq!(g.size(), (2 * 640, 2 * 440 + GRID_TITLE));
        let (png, svg) = g.write(&dir, "grid").unwrap();
        assert!(std::fs::metadata(png).unwrap().len() > 1000);
        let svg = std::fs::read_to_string(svg).unwrap();
        let texts: Vec<&str> = svg
            .split('>')
            .map(|t| t.split('<').next().unwrap_or("").trim())
            .collect();
        for t in ["grid", "a", "b", "c"] {
            assert!(texts.contains(&t), "{t} missing: {svg}");
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn bar_chart_writes_png_and_svg() {
        let dir = std::env::temp_dir().join(format!("theory-bars-{}", std::process::id()));
        let c = BarChart::new("t", "x", "y", vec!["a".into(), "b".into()])
            .series("s1", vec![1.0, 2.0])
            .series("s2", vec![0.5, 3.0])
            .reference("ideal", 1.5);
        let (png, svg) = c.write(&dir, "bars").unwrap();
        assert!(std::fs::metadata(png).unwrap().len() > 1000);
        assert!(std::fs::read_to_string(svg).unwrap().contains("<svg"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
