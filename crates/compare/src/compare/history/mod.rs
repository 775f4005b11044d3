//! The history a head is judged against, learned so that no single run can steer it.
//!
//! 1. **Points.** The base runs of the head's key are grouped into points, one per CI run
//!    ([`super::points`]). A point whose judged conditions differ from the head's is left out
//!    (`conditions`), and so is one whose numbers cannot be true (`invalid`).
//! 2. **Runners.** When the head's runner ran some of the points and others ran on other
//!    runners, every runner gets an offset of its own in the model below, and the head is
//!    judged against its own runner's level: two runners 4 % apart are not 2 % of noise. A
//!    runner named once in the history tells nothing of its speed (hosted and ephemeral
//!    runners have a new name every run): such points share one offset. When an F test says
//!    the head's runner's spread differs from the others', the others are weighted by the
//!    ratio and the head is judged with its runner's own spread
//!    ([`runners::SPREAD_TEST_ALPHA`]); the runner model is in [`runners`].
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

mod newest;
mod runners;

use self::newest::newest_moved;
pub use self::newest::Newest;
use self::runners::{runner_info, runner_weights, OwnSpread, Runners};
pub use self::runners::{
    RunnerInfo, BARELY_KNOWN_RUNNER_SPREAD, MIN_RUNNER_POINTS, POOL_RUNNERS, SPREAD_TEST_ALPHA,
};
use crate::compare::change_point;
use crate::compare::conditions;
use crate::compare::fit::Fit;
use crate::compare::noise::{Prediction, MIN_BASE_RUNS, SPREAD_FLOOR};
use crate::compare::outliers;
use crate::compare::points::{self, Point};
use crate::compare::run_level::RunLevel;
use crate::compare::trend::{self, Trend};
use nsys_gate_core::artifact::comparison::{
    BaseRun, ChangePoint, ConditionName, Drift, HeadRunner, History, LeftOut, LeftOutReason,
    MeasureName, NewestMoved, RunMark,
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
    /// The newest one or two points beyond the rest, the way the head went.
    pub newest: Option<Newest>,
    /// The head's runner as the history knows it (when the head names one).
    pub head_runner: Option<RunnerInfo>,
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
        .map(|m| learn(&alike, m, head.runner(), head.log(m), floor));
    let chosen = Chosen {
        alike,
        learned,
        history: History {
            used: Vec::new(),
            left_out: Vec::new(),
            change_point: None,
            drift: None,
            newest_moved: None,
            head_runner: None,
        },
    };
    let lead = chosen.lead();
    let mut history = History {
        used: Vec::new(),
        left_out,
        change_point: None,
        drift: None,
        newest_moved: None,
        head_runner: None,
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
    // The newest runs and the head's runner, as the leading measure learned them.
    let l = &chosen.learned[lead];
    let measure = [MeasureName::HostInclusive, MeasureName::GpuProjected][lead];
    history.newest_moved = l.newest.map(|n| NewestMoved {
        measure,
        runs: n.runs as u64,
        change_pct: change_pct_of(n.change.exp()),
        provisional_level: n.provisional,
        since: mark(&chosen.alike[n.since]),
    });
    history.head_runner = head.runner().map(|name| {
        let info = l.head_runner.unwrap_or_default();
        HeadRunner {
            name: name.to_owned(),
            points: info.points as u64,
            left_out: info.left_out as u64,
            own_level: info.own_level,
            own_spread: info.own_spread,
            barely_known: info.barely_known,
        }
    });
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
        clock_mhz: first
            .conditions
            .get(&ConditionName::Clock)
            .and_then(serde_json::Value::as_u64),
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
    /// The rows and values as fitted: times each value's weight (1 for the head's runner; its
    /// spread over the others' when the runners' spreads differ).
    scaled: Vec<Vec<f64>>,
    scaled_y: Vec<f64>,
    weights: Vec<f64>,
    /// The head's row: the newest point's place, on the head's runner.
    head: Vec<f64>,
    /// Degrees of freedom of the residuals.
    df: f64,
    with_runners: bool,
}

/// Learns `measure` from the alike points (oldest first) for a head on `runner` at `head`
/// (the logarithm of its value, when it has one).
fn learn(
    alike: &[Point<'_>],
    measure: MeasureName,
    runner: Option<&str>,
    head: Option<f64>,
    floor: f64,
) -> Learned {
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
    // of freedom are; each value weighted (1 unless the runners' spreads differ).
    let newest = positions[positions.len() - 1];
    let attempt = |with_runners: bool, weights: &[f64]| -> Option<Fitted> {
        let rows: Vec<Vec<f64>> = (0..y.len())
            .map(|k| groups.row(shape.row(positions[k]), Some(k), with_runners))
            .collect();
        let scaled: Vec<Vec<f64>> = rows
            .iter()
            .zip(weights)
            .map(|(r, &w)| r.iter().map(|x| x * w).collect())
            .collect();
        let scaled_y: Vec<f64> = y.iter().zip(weights).map(|(v, w)| v * w).collect();
        let start: Vec<bool> = gross.iter().map(|g| !g).collect();
        let keep = outliers::esd(&scaled, &scaled_y, &start, least_spread);
        if with_runners && !groups.has_head_point(&keep) {
            return None;
        }
        let used: Vec<usize> = (0..y.len()).filter(|&k| keep[k]).collect();
        let fit = Fit::new(
            &used.iter().map(|&k| scaled[k].clone()).collect::<Vec<_>>(),
            &used.iter().map(|&k| scaled_y[k]).collect::<Vec<_>>(),
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
            scaled,
            scaled_y,
            weights: weights.to_vec(),
            df,
            with_runners,
        })
    };
    let unit = vec![1.0; y.len()];
    let weighted = runner_weights(&groups, &shape, &positions, &y, &gross, least_spread)
        .and_then(|(weights, differ)| attempt(true, &weights).map(|f| (f, differ)));
    let own_spread = weighted.as_ref().map(|(_, d)| *d);
    let Some(fitted) = weighted.map(|(f, _)| f).or_else(|| {
        [true, false]
            .into_iter()
            .filter(|&w| !w || groups.columns > 0)
            .find_map(|w| attempt(w, &unit))
    }) else {
        return learned;
    };
    learned.runners = fitted.with_runners;
    learned.head_runner = runner.map(|name| RunnerInfo {
        own_spread: own_spread.is_some(),
        ..runner_info(name, &fitted, &groups)
    });
    record(&mut learned, &fitted, &shape, &index, &positions, &y);
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
    let (mut prediction, newest) = predict(&fitted, &groups, own_spread, &within, head, floor);
    learned.newest = newest.map(|n| Newest {
        since: index[n.since],
        ..n
    });
    // A head on a runner the history barely knows (fewer than MIN_RUNNER_POINTS of its points,
    // while another runner has a level of its own) is judged against the others' level, with
    // the spread between runners added: its own one or two points cannot say its speed (one
    // of them may be planted), and runners of one pool differ by a few %.
    // Not when the points kept come from a pool of runners (reused slots): their spread then
    // holds the runners' differences already.
    if learned.head_runner.is_some_and(|h| h.barely_known) && !groups.pooled(&fitted.keep) {
        let between = BARELY_KNOWN_RUNNER_SPREAD * (1.0 + floor).ln();
        prediction.spread = prediction.spread.hypot(between);
    }
    learned.prediction = Some(prediction);
    learned
}

/// The prediction of a fit (the head's runner's own spread when `own_spread`; `within`: the
/// used points' own variances) and the newest runs beyond the rest of the history (their
/// `since` an index into the values), with the provisional level of two that agree.
fn predict(
    fitted: &Fitted,
    groups: &Runners,
    own_spread: Option<OwnSpread>,
    within: &[f64],
    head: Option<f64>,
    floor: f64,
) -> (Prediction, Option<Newest>) {
    let least = SPREAD_FLOOR * (1.0 + floor).ln();
    let mut newest = None;
    let (spread, df) = match own_spread {
        Some(own) => (own.head, own.df),
        None => ((fitted.fit.rss() / fitted.df).sqrt(), fitted.df),
    };
    let mut prediction = Prediction {
        level: fitted.fit.predict(&fitted.head),
        spread,
        df,
        leverage: fitted.fit.leverage(&fitted.head),
        within: within.iter().sum::<f64>() / within.len() as f64,
    };
    if let Some(h) = head {
        if let Some((moved, provisional)) =
            newest_moved(fitted, groups, h - prediction.level, least, floor)
        {
            newest = Some(moved);
            if let Some(p) = provisional {
                prediction = Prediction {
                    level: p.level,
                    leverage: p.leverage,
                    spread: p.spread,
                    df: if own_spread.is_some() {
                        df.min(p.df)
                    } else {
                        p.df
                    },
                    ..prediction
                };
            }
        }
    }
    (prediction, newest)
}

/// What `learned` says of the fit: the points kept, their levels, the outliers (with how far
/// each is from the others' fit at its place), the shifts and the trend as fitted.
fn record(
    learned: &mut Learned,
    fitted: &Fitted,
    shape: &Shape,
    index: &[usize],
    positions: &[f64],
    y: &[f64],
) {
    let newest = positions[positions.len() - 1];
    for (k, &i) in index.iter().enumerate() {
        learned.kept[i] = fitted.keep[k];
        learned.segment[i] = shape.segment(positions[k]);
        if !fitted.keep[k] {
            // How far it is from the others' fit at its place.
            let ratio = (y[k] - fitted.fit.predict(&fitted.rows[k])).exp();
            learned.outliers.push((i, ratio));
        }
    }
    match shape {
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

/// A ratio as a change in %, rounded to 0.01 % so that comparison.json stays readable (and
/// never `-0.0`).
pub fn change_pct_of(ratio: f64) -> f64 {
    ((ratio - 1.0) * 10_000.0).round() / 100.0 + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runners(names: &[&str]) -> Runners {
        Runners {
            column: vec![None; names.len()],
            columns: 0,
            rough: vec![0.0; names.len()],
            names: names.iter().map(|n| Some((*n).to_owned())).collect(),
            any_own: true,
        }
    }

    /// Reused slots are a pool whose spread holds their differences; one runner with most of
    /// the points is not (a head elsewhere gets the spread between runners added).
    #[test]
    fn a_pool_of_runners_is_several_none_with_most_points() {
        let slots = runners(&["s1", "s2", "s1", "s3", "s4", "s2", "s1", "s5", "s3", "s6"]);
        assert!(slots.pooled(&[true; 10]));
        let one = runners(&["a", "a", "a", "a", "a", "a", "a", "a", "a", "b"]);
        assert!(!one.pooled(&[true; 10]));
        // Two runners are no pool, nor is a set where one has more than half of the points kept.
        assert!(!runners(&["a", "b", "a", "b"]).pooled(&[true; 4]));
        let mostly = runners(&["a", "a", "a", "a", "b", "c", "a"]);
        assert!(!mostly.pooled(&[true; 7]));
        // The points left out do not count.
        let mut keep = [true; 7];
        keep[0] = false;
        keep[1] = false;
        assert!(runners(&["a", "a", "a", "b", "c", "b", "c"]).pooled(&keep));
        // A point without a runner's name makes it no pool.
        let mut unnamed = runners(&["s1", "s2", "s3", "s4"]);
        unnamed.names[3] = None;
        assert!(!unnamed.pooled(&[true; 4]));
    }
}
