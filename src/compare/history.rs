//! The history a head is judged against, learned so that no single run can steer it.
//!
//! 1. **Points.** The base runs of the head's key are grouped into points, one per CI run
//!    ([`super::points`]). A point whose judged conditions differ from the head's is left out
//!    (`conditions`), and so is one whose numbers cannot be true (`invalid`).
//! 2. **Runners.** When the head's runner ran some of the points and others ran on other
//!    runners, every runner gets an offset of its own in the model below, and the head is
//!    judged against its own runner's level: two runners 4 % apart are not 2 % of noise. A
//!    runner named once in the history tells nothing of its speed (hosted and ephemeral
//!    runners have a new name every run): such points share one offset.
//! 3. **Gross outliers** (a hiccup run 20 % off) are left out first ([`super::outliers`]), so
//!    that they cannot pass for a shape.
//! 4. **Shape.** The history is one level, or levels with shifts between them
//!    ([`super::change_point`]), or a steady drift from some run on ([`super::trend`]); when
//!    both a shift and a drift are found, the one that fits the points better is taken.
//! 5. **Outliers** of that shape are left out (Rosner's generalized ESD test on the fit's
//!    residuals, [`super::outliers::esd`]).
//! 6. **Prediction.** The shape and the runners' offsets are fitted by least squares to the
//!    points left; the head is predicted at the newest point's place (after a shift: the
//!    newest level; with a drift: the trend's value at the newest point, so that the pull
//!    request is not blamed for the branch's own drift), on its runner, and the residuals
//!    give the run-to-run noise. After a shift, the older levels still teach the noise: each
//!    level has its own mean and all share one spread.
//!
//! Each measure is learned on its own; `history.used` and the comment's words follow the
//! host inclusive time (the GPU projection where the host's is missing).

use super::change_point;
use super::conditions;
use super::fit::Fit;
use super::noise::{Prediction, MIN_BASE_RUNS, SPREAD_FLOOR};
use super::outliers;
use super::points::{self, Point};
use super::run_level::RunLevel;
use super::trend::{self, Trend};
use crate::artifact::comparison::{
    BaseRun, ChangePoint, ConditionName, Drift, History, LeftOut, LeftOutReason, MeasureName,
    RunMark,
};

/// A head's history, sorted out.
pub struct Chosen<'a> {
    /// The points with the head's conditions and true numbers, oldest first (the others are
    /// in `history.left_out`).
    pub alike: Vec<Point<'a>>,
    /// Each measure as learned from `alike`: host inclusive, then GPU projected.
    pub learned: [Learned; 2],
    /// What comparison.json says of it.
    pub history: History,
}

impl<'a> Chosen<'a> {
    /// The points the host inclusive time (else the GPU projection) uses, oldest first.
    pub fn used(&self) -> Vec<&Point<'a>> {
        let lead = self.lead();
        self.alike
            .iter()
            .enumerate()
            .filter(|(i, _)| self.learned[lead].kept[*i])
            .map(|(_, p)| p)
            .collect()
    }

    /// Which measure leads: the host inclusive time, unless no point has it.
    fn lead(&self) -> usize {
        usize::from(self.learned[0].values == 0 && self.learned[1].values > 0)
    }
}

/// One measure learned from a history.
#[derive(Debug, Clone, Default)]
pub struct Learned {
    /// Points with a value of the measure.
    pub values: usize,
    /// Per alike point: used for this measure (has a value, and is not an outlier).
    pub kept: Vec<bool>,
    /// Per alike point: the level it is in (0 the oldest).
    pub segment: Vec<u64>,
    /// Alike points left out as outliers, each with its distance from the prediction
    /// without it (as a ratio).
    pub outliers: Vec<(usize, f64)>,
    /// The alike points where a new level starts, oldest first.
    pub shifts: Vec<usize>,
    /// The trend, with the alike point it starts at.
    pub drift: Option<Trend>,
    /// What a run of unchanged code does; `None` with too few points (the noise unknown).
    pub prediction: Option<Prediction>,
    /// Whether the runners' offsets were modelled.
    pub runners: bool,
}

/// Sorts `candidates` (the base runs of the head's key, oldest first) against the head
/// (`head`: its runs, one point), with changes under `floor` (relative) never a shape.
pub fn choose<'a>(
    candidates: &[&'a RunLevel],
    head: &Point<'_>,
    floor: f64,
    judge: conditions::Judge<'_>,
) -> Chosen<'a> {
    let mut left_out = Vec::new();
    let mut alike = Vec::new();
    let mut positions = Vec::new();
    for (position, point) in points::group(candidates).into_iter().enumerate() {
        let mut differs: Vec<_> = point
            .runs
            .iter()
            .flat_map(|r| {
                conditions::judged_differences(&r.conditions, &head.first().conditions, judge)
            })
            .collect();
        differs.sort();
        differs.dedup();
        if !differs.is_empty() {
            left_out.push(left(&point, position, LeftOutReason::Conditions, |l| {
                l.differs = differs
            }));
        } else if let Some(why) = point.invalid() {
            left_out.push(left(&point, position, LeftOutReason::Invalid, |l| {
                l.why = Some(why.to_owned())
            }));
        } else {
            alike.push(point);
            positions.push(position);
        }
    }
    let learned = [MeasureName::HostInclusive, MeasureName::GpuProjected]
        .map(|m| learn(&alike, m, head.runner(), floor));
    let chosen = Chosen {
        alike,
        learned,
        history: History {
            used: Vec::new(),
            left_out: Vec::new(),
            change_point: None,
            drift: None,
        },
    };
    let lead = chosen.lead();
    let mut history = History {
        used: Vec::new(),
        left_out,
        change_point: None,
        drift: None,
    };
    for (i, point) in chosen.alike.iter().enumerate() {
        let l = &chosen.learned[lead];
        if l.kept[i] {
            let mut run = base_run(point, positions[i]);
            run.segment = l.segment[i];
            history.used.push(run);
        }
    }
    for (m, l) in chosen.learned.iter().enumerate() {
        let measure = [MeasureName::HostInclusive, MeasureName::GpuProjected][m];
        for &(i, ratio) in &l.outliers {
            history.left_out.push(left(
                &chosen.alike[i],
                positions[i],
                LeftOutReason::Outlier,
                |o| {
                    o.measure = Some(measure);
                    o.change_pct = Some(change_pct_of(ratio));
                },
            ));
        }
    }
    history.left_out.sort_by_key(|l| l.run.position);
    // The shape the comment names: the host's, else the GPU projection's.
    for (m, l) in chosen.learned.iter().enumerate() {
        let measure = [MeasureName::HostInclusive, MeasureName::GpuProjected][m];
        if history.change_point.is_none() && history.drift.is_none() {
            history.change_point = change_point_of(&chosen.alike, l, measure);
            history.drift = drift_of(&chosen.alike, l, measure);
        }
    }
    Chosen { history, ..chosen }
}

/// A point as comparison.json lists it, at `position` among the key's points.
fn base_run(point: &Point<'_>, position: usize) -> BaseRun {
    let first = point.first();
    BaseRun {
        position: position as u64,
        run_id: first.run.run_id.clone(),
        git_commit: first.run.git_commit.clone(),
        analysis_path: first.run.analysis_path.clone(),
        workflow_run_id: first.ci_run_id,
        ci_run_id: first.ci_run_id,
        created_at: first.created_at.clone(),
        iterations: point.iterations(),
        host_inclusive_ns: point.value(MeasureName::HostInclusive),
        gpu_projected_ns: point.value(MeasureName::GpuProjected),
        analyses: point
            .runs
            .iter()
            .map(|r| r.run.analysis_path.clone())
            .collect(),
        repeats: point.runs.len() as u64,
        ci_run: first.ci_run.clone(),
        runner: point.runner().map(str::to_owned),
        segment: 0,
        driver_version: first
            .conditions
            .get(&ConditionName::Driver)
            .and_then(|v| v.as_str())
            .map(str::to_owned),
    }
}

fn left(
    point: &Point<'_>,
    position: usize,
    reason: LeftOutReason,
    fill: impl FnOnce(&mut LeftOut),
) -> LeftOut {
    let mut l = LeftOut {
        run: base_run(point, position),
        reason,
        differs: Vec::new(),
        measure: None,
        change_pct: None,
        why: None,
    };
    fill(&mut l);
    l
}

fn mark(point: &Point<'_>) -> RunMark {
    let first = point.first();
    RunMark {
        run_id: first.run.run_id.clone(),
        git_commit: first.run.git_commit.clone(),
        created_at: first.created_at.clone(),
    }
}

fn change_point_of(alike: &[Point<'_>], l: &Learned, measure: MeasureName) -> Option<ChangePoint> {
    let &at = l.shifts.last()?;
    let before = l.shifts.iter().rev().nth(1).copied().unwrap_or(0);
    let mean = |range: std::ops::Range<usize>| {
        let logs: Vec<f64> = range
            .filter(|&i| l.kept[i])
            .filter_map(|i| alike[i].log(measure))
            .collect();
        (!logs.is_empty()).then(|| logs.iter().sum::<f64>() / logs.len() as f64)
    };
    let ratio = (mean(at..alike.len())? - mean(before..at)?).exp();
    let m = mark(&alike[at]);
    Some(ChangePoint {
        measure,
        run_id: m.run_id,
        git_commit: m.git_commit,
        created_at: m.created_at,
        change_pct: change_pct_of(ratio),
        runs: (at..alike.len()).filter(|&i| l.kept[i]).count() as u64,
    })
}

fn drift_of(alike: &[Point<'_>], l: &Learned, measure: MeasureName) -> Option<Drift> {
    let t = l.drift?;
    Some(Drift {
        measure,
        change_pct: change_pct_of(t.change.exp()),
        runs: (t.since..alike.len()).filter(|&i| l.kept[i]).count() as u64,
        p_value: t.p_adjusted,
        since: mark(&alike[t.since]),
    })
}

/// The history's shape.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Level,
    /// New levels start at these positions.
    Shifted(Vec<f64>),
    /// A trend from this position on, as found.
    Drift(f64, Trend),
}

impl Shape {
    /// The design row of a point at `position`.
    fn row(&self, position: f64) -> Vec<f64> {
        match self {
            Shape::Level => vec![1.0],
            Shape::Shifted(at) => {
                let segment = self.segment(position) as usize;
                (0..=at.len())
                    .map(|s| if s == segment { 1.0 } else { 0.0 })
                    .collect()
            }
            Shape::Drift(since, _) => trend::row(position, *since),
        }
    }

    /// The level a point at `position` is in (0 the oldest).
    fn segment(&self, position: f64) -> u64 {
        match self {
            Shape::Shifted(at) => at.iter().filter(|&&a| a <= position).count() as u64,
            _ => 0,
        }
    }
}

/// A fit of a history's values with some of them left out.
struct Fitted {
    fit: Fit,
    /// Per value: used.
    keep: Vec<bool>,
    /// The design's rows, per value.
    rows: Vec<Vec<f64>>,
    /// The head's row: the newest point's place, on the head's runner.
    head: Vec<f64>,
    /// Degrees of freedom of the residuals.
    df: f64,
    with_runners: bool,
}

/// Learns `measure` from the alike points (oldest first) for a head on `runner`.
fn learn(alike: &[Point<'_>], measure: MeasureName, runner: Option<&str>, floor: f64) -> Learned {
    let n = alike.len();
    let logs: Vec<Option<f64>> = alike.iter().map(|p| p.log(measure)).collect();
    let index: Vec<usize> = (0..n).filter(|&i| logs[i].is_some()).collect();
    let mut learned = Learned {
        values: index.len(),
        kept: (0..n).map(|i| logs[i].is_some()).collect(),
        segment: vec![0; n],
        ..Learned::default()
    };
    if index.len() < MIN_BASE_RUNS {
        return learned;
    }
    let y: Vec<f64> = index.iter().filter_map(|&i| logs[i]).collect();
    let positions: Vec<f64> = index.iter().map(|&i| i as f64).collect();
    let least_spread = SPREAD_FLOOR * (1.0 + floor).ln();
    let groups = Runners::of(alike, &index, &y, runner);
    // Gross outliers and the shape, on values corrected by the runners' rough offsets.
    let adjusted = groups.adjust(&y);
    let gross = outliers::gross(&adjusted, least_spread);
    let kept: Vec<usize> = (0..y.len()).filter(|&k| !gross[k]).collect();
    let shape = shape_of(
        &kept.iter().map(|&k| adjusted[k]).collect::<Vec<_>>(),
        &kept.iter().map(|&k| positions[k]).collect::<Vec<_>>(),
        floor,
    );
    // The outliers of that shape and the fit without them: with the runners' offsets when
    // they are modelled, unless the head's runner then has no point left or too few degrees
    // of freedom are.
    let newest = positions[positions.len() - 1];
    let attempt = |with_runners: bool| -> Option<Fitted> {
        let rows: Vec<Vec<f64>> = (0..y.len())
            .map(|k| groups.row(shape.row(positions[k]), Some(k), with_runners))
            .collect();
        let start: Vec<bool> = gross.iter().map(|g| !g).collect();
        let keep = outliers::esd(&rows, &y, &start, least_spread);
        if with_runners && !groups.has_head_point(&keep) {
            return None;
        }
        let used: Vec<usize> = (0..y.len()).filter(|&k| keep[k]).collect();
        let fit = Fit::new(
            &used.iter().map(|&k| rows[k].clone()).collect::<Vec<_>>(),
            &used.iter().map(|&k| y[k]).collect::<Vec<_>>(),
        )?;
        let df = used.len() as f64 - fit.rank as f64;
        if with_runners && df < 2.0 {
            return None;
        }
        Some(Fitted {
            head: groups.row(shape.row(newest), None, with_runners),
            fit,
            keep,
            rows,
            df,
            with_runners,
        })
    };
    let Some(fitted) = [true, false]
        .into_iter()
        .filter(|&w| !w || groups.columns > 0)
        .find_map(attempt)
    else {
        return learned;
    };
    learned.runners = fitted.with_runners;
    for (k, &i) in index.iter().enumerate() {
        learned.kept[i] = fitted.keep[k];
        learned.segment[i] = shape.segment(positions[k]);
        if !fitted.keep[k] {
            // How far it is from the others' fit at its place.
            let ratio = (y[k] - fitted.fit.predict(&fitted.rows[k])).exp();
            learned.outliers.push((i, ratio));
        }
    }
    match &shape {
        Shape::Shifted(at) => learned.shifts = at.iter().map(|&a| a as usize).collect(),
        Shape::Drift(since, found) => {
            // The trend as fitted without the outliers, its p-value as found.
            let slope = fitted.fit.beta[1];
            learned.drift = Some(Trend {
                since: *since as usize,
                slope,
                change: slope * (newest - since),
                ..*found
            });
        }
        Shape::Level => {}
    }
    let used = fitted.keep.iter().filter(|&&k| k).count();
    if used < MIN_BASE_RUNS || fitted.df < 2.0 {
        return learned;
    }
    let within: Vec<f64> = index
        .iter()
        .zip(&fitted.keep)
        .filter(|(_, &k)| k)
        .map(|(&i, _)| alike[i].within(measure).unwrap_or(0.0))
        .collect();
    learned.prediction = Some(Prediction {
        level: fitted.fit.predict(&fitted.head),
        spread: (fitted.fit.rss() / fitted.df).sqrt(),
        df: fitted.df,
        leverage: fitted.fit.leverage(&fitted.head),
        within: within.iter().sum::<f64>() / within.len() as f64,
    });
    learned
}

/// The shape of the kept values (at their positions): a drift or shifts when found (the one
/// that fits better when both are), else one level.
fn shape_of(values: &[f64], positions: &[f64], floor: f64) -> Shape {
    let bounds = change_point::boundaries_of_logs(values, floor);
    let drift = trend::drift(values, positions, floor);
    let drifting = |t: Trend| Shape::Drift(positions[t.since], t);
    if bounds.is_empty() {
        return drift.map_or(Shape::Level, drifting);
    }
    let shifted = Shape::Shifted(bounds.iter().map(|&b| positions[b]).collect());
    let rows: Vec<Vec<f64>> = positions.iter().map(|&p| shifted.row(p)).collect();
    let rss = Fit::new(&rows, values).map_or(f64::INFINITY, |f| f.rss());
    match drift {
        Some(t) if t.rss < rss => drifting(t),
        _ => shifted,
    }
}

/// The runners of a history's points, as the model sees them.
struct Runners {
    /// Per value: its runner's column (`None`: the head's runner, the reference).
    column: Vec<Option<usize>>,
    /// Columns (other runners, and one for runners named once).
    columns: usize,
    /// Rough offsets per value (its runner's median less the head's runner's median).
    rough: Vec<f64>,
}

impl Runners {
    /// The runners of the points `index` (into `alike`) for a head on `runner`: modelled
    /// when the head's runner ran at least one of them and another runner ran others.
    fn of(alike: &[Point<'_>], index: &[usize], values: &[f64], runner: Option<&str>) -> Runners {
        let names: Vec<Option<&str>> = index.iter().map(|&i| alike[i].runner()).collect();
        let count = |name: &str| names.iter().filter(|n| **n == Some(name)).count();
        // A label per value: the runner's name when it ran two or more of the points (or it
        // is the head's), else one shared label for runners that tell nothing.
        let labels: Vec<Option<&str>> = names
            .iter()
            .map(|n| n.filter(|&name| count(name) >= 2 || Some(name) == runner))
            .collect();
        let none = Runners {
            column: vec![None; index.len()],
            columns: 0,
            rough: vec![0.0; index.len()],
        };
        let Some(head) = runner.filter(|&h| count(h) >= 1) else {
            return none;
        };
        let mut others: Vec<Option<&str>> = labels
            .iter()
            .copied()
            .filter(|l| *l != Some(head))
            .collect();
        others.sort();
        others.dedup();
        if others.is_empty() {
            return none;
        }
        let column: Vec<Option<usize>> = labels
            .iter()
            .map(|l| others.iter().position(|o| o == l))
            .collect();
        let median_of = |c: Option<usize>| {
            let v: Vec<f64> = (0..values.len())
                .filter(|&k| column[k] == c)
                .map(|k| values[k])
                .collect();
            outliers::median(&v).unwrap_or(0.0)
        };
        let reference = median_of(None);
        let offsets: Vec<f64> = (0..others.len())
            .map(|c| median_of(Some(c)) - reference)
            .collect();
        Runners {
            rough: column
                .iter()
                .map(|c| c.map_or(0.0, |c| offsets[c]))
                .collect(),
            column,
            columns: others.len(),
        }
    }

    /// Values with the rough offsets taken out.
    fn adjust(&self, y: &[f64]) -> Vec<f64> {
        y.iter().zip(&self.rough).map(|(v, o)| v - o).collect()
    }

    /// A design row: the shape's, then the runner columns (`k`: the value; `None` for the
    /// head, on its own runner).
    fn row(&self, mut shape: Vec<f64>, k: Option<usize>, with_runners: bool) -> Vec<f64> {
        if with_runners {
            let own = k.and_then(|k| self.column[k]);
            shape.extend((0..self.columns).map(|c| if own == Some(c) { 1.0 } else { 0.0 }));
        }
        shape
    }

    /// Whether a kept value is on the head's runner.
    fn has_head_point(&self, keep: &[bool]) -> bool {
        (0..keep.len()).any(|k| keep[k] && self.column[k].is_none())
    }
}

/// A ratio as a change in %, rounded to 0.01 % so that comparison.json stays readable (and
/// never `-0.0`).
pub fn change_pct_of(ratio: f64) -> f64 {
    ((ratio - 1.0) * 10_000.0).round() / 100.0 + 0.0
}
