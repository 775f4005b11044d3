//! Comparing the current runs with the base branch's history: plain data in (runs reduced by
//! [`run_level`]), plain data out ([`nsys_gate_core::artifact::comparison::Comparison`]). Nothing here
//! reads a file or the network, and nothing here changes a gate or an exit status.
//!
//! - [`matching`]: which base runs go with which current runs (the same key: profile, target,
//!   leg); current runs of one key are repeats, combined;
//! - [`conditions`]: what differs between two runs besides the code (the first nine make the
//!   comparison "not like for like" and leave a base run out of the history);
//! - [`points`]: one point per CI run (its repeats combined), for the history and the head;
//! - [`history`]: what the history predicts for a run of unchanged code: its runners, its
//!   outliers left out ([`outliers`]), its shape (level shifts: [`change_point`]; drift:
//!   [`trend`]), fitted by least squares ([`fit`]);
//! - [`noise`]: the verdict: the head against the prediction interval the history gives for a
//!   run of unchanged code, and the smallest change the history could have seen;
//! - [`measures`]: host inclusive and GPU-projected time per iteration, each with the change
//!   within the pair of runs ([`interval`]: Hodges-Lehmann, Mann-Whitney);
//! - [`items`]: the tables judged item by item: range groups (as the report groups names),
//!   kernels by base name, memory copies by kind, each device's exposed communication, each
//!   run's number of an item per counted iteration;
//! - [`ranges`]: any such table item by item, each run's own offset taken out, with the
//!   false-discovery rate controlled over every item of a run;
//! - [`gpu_work`]: the capture's kernels and memory copies, when both runs record them;
//! - [`bounds`]: the lists a base file can grow, bounded, with counts of what is left out.

pub mod bounds;
pub mod change_point;
pub mod conditions;
pub mod fit;
pub mod gpu_work;
pub mod history;
pub mod interval;
pub mod items;
pub mod matching;
pub mod measures;
pub mod noise;
pub mod outliers;
pub mod points;
pub mod ranges;
pub mod run_level;
pub mod trend;
pub mod work_totals;

use std::borrow::Cow;

use nsys_gate_core::artifact::comparison::{
    BaselineSource, Comparison, Measure, MeasureName, Method, RangeChanges, RangeOnly, RankChange,
    RankChanges, RankOnly, RunComparison, WorkChanges, COMPARISON_SCHEMA_VERSION,
};
use nsys_gate_core::artifact::TOOL_VERSION;

use items::{Clock, Kind};
pub use run_level::RunLevel;

/// The noise floor by default: 1 %. Smaller changes are never `slower` or `faster`.
pub const DEFAULT_NOISE_FLOOR_PCT: f64 = 1.0;

/// What the comparison is asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Criteria {
    /// The smallest change called `slower` or `faster`, in %.
    pub noise_floor_pct: f64,
    /// Top-level manifest keys nsys-gate does not know that are judged as conditions
    /// (`--condition KEY`; see [`conditions`]).
    pub judged_keys: Vec<String>,
    /// Ranges by exact name (`--exact-names`), not by group as the report shows them.
    pub exact_names: bool,
}

impl Default for Criteria {
    fn default() -> Self {
        Criteria {
            noise_floor_pct: DEFAULT_NOISE_FLOOR_PCT,
            judged_keys: Vec::new(),
            exact_names: false,
        }
    }
}

impl Criteria {
    fn floor(&self) -> f64 {
        self.noise_floor_pct / 100.0
    }

    /// The method as comparison.json records it.
    pub fn method(&self) -> Method {
        Method {
            name: "prediction_interval".to_owned(),
            confidence: noise::VERDICT_CONFIDENCE,
            noise_floor_pct: self.noise_floor_pct,
            min_base_runs: noise::MIN_BASE_RUNS as u64,
            ranges_false_discovery_rate: ranges::FALSE_DISCOVERY_RATE,
            change_point_alpha: change_point::CHANGE_ALPHA,
            change_point_min_runs: change_point::MIN_SEGMENT as u64,
            // 0.025, not 0.025000000000000022 (1 - 0.95 in binary).
            measure_alpha: Some(((1.0 - noise::VERDICT_CONFIDENCE) / 2.0 * 1e12).round() / 1e12),
            spread_floor_pct: Some(history::change_pct_of(
                (noise::SPREAD_FLOOR * (1.0 + self.floor()).ln()).exp(),
            )),
            outlier_alpha: Some(outliers::ESD_ALPHA),
            gross_outlier_sds: Some(outliers::GROSS_SDS),
            drift_alpha: Some(trend::ALPHA),
            drift_min_runs: Some(trend::MIN_RUNS as u64),
            ranges_grouped: Some(!self.exact_names),
            runner_min_points: Some(history::MIN_RUNNER_POINTS as u64),
            runner_spread_alpha: Some(history::SPREAD_TEST_ALPHA),
            barely_known_runner_spread_floors: Some(history::BARELY_KNOWN_RUNNER_SPREAD),
            pool_runners: Some(history::POOL_RUNNERS as u64),
            outlier_tie: Some(outliers::TIE),
            table_own_offsets_min_items: Some(ranges::RUN_EFFECT_MIN_RANGES as u64),
        }
    }
}

/// Compares every current run with the base runs of its key. `bases` are oldest first.
pub fn compare(
    heads: &[RunLevel],
    bases: &[RunLevel],
    source: BaselineSource,
    notes: Vec<String>,
    criteria: Criteria,
) -> Comparison {
    let matched = matching::pair(heads, bases);
    // The legs of one profile (its keys compared: GPUs, labels) share one error budget.
    let legs = |profile: &str| {
        matched
            .groups
            .iter()
            .filter(|(h, _)| heads[h[0]].key.profile_name == profile)
            .count()
            .max(1)
    };
    let mut comparison = Comparison {
        schema_version: COMPARISON_SCHEMA_VERSION,
        tool_version: TOOL_VERSION.to_owned(),
        baseline: source,
        method: criteria.method(),
        notes,
        runs: matched
            .groups
            .iter()
            .map(|(h, b)| {
                let legs = legs(&heads[h[0]].key.profile_name);
                let heads: Vec<&RunLevel> = h.iter().map(|&i| &heads[i]).collect();
                let candidates: Vec<&RunLevel> = b.iter().map(|&i| &bases[i]).collect();
                compare_key(&heads, &candidates, &criteria, legs)
            })
            .collect(),
        unmatched_head: matched
            .heads
            .iter()
            .map(|&i| heads[i].run.clone())
            .collect(),
        unmatched_base: matched
            .bases
            .iter()
            .map(|&i| bases[i].run.clone())
            .collect(),
        unmatched_head_omitted: 0,
        unmatched_base_omitted: 0,
    };
    let combined = comparison
        .runs
        .iter()
        .flat_map(|r| {
            let left = r.history.left_out.iter().map(|l| &l.run);
            r.history.used.iter().chain(left)
        })
        .filter(|u| u.repeats > 1)
        .count();
    if combined > 0 {
        comparison.notes.push(format!(
            "{combined} {} of the history combine{} several analyses of one key (repeats of one CI run): each counts once",
            if combined == 1 { "point" } else { "points" },
            if combined == 1 { "s" } else { "" }
        ));
    }
    bounds::bounded(comparison)
}

/// The level each measure of a leg is judged at: the profile's 5 % shared by its `legs` and
/// by the measures judged (Bonferroni).
fn measure_alpha(learned: &[history::Learned; 2], gpu_both: bool, legs: usize) -> f64 {
    let judged = learned
        .iter()
        .enumerate()
        .filter(|(m, l)| l.prediction.is_some() && (*m == 0 || gpu_both))
        .count()
        .max(1);
    (1.0 - noise::VERDICT_CONFIDENCE) / (judged * legs) as f64
}

/// Whether a run-wide change (in %) lies beyond where the measure puts a run of unchanged
/// code (its interval): a whole run that moved no more than runs do is not news. Never with
/// the noise unknown.
fn beyond_interval(measure: &Measure, change_pct: f64) -> bool {
    measure
        .interval_pct
        .is_some_and(|[low, high]| change_pct < low || change_pct > high)
}

/// The head runs of one key against its base runs (oldest first, at least one). `legs` is how
/// many keys of its profile are compared (its legs): they share the profile's error budget,
/// each judged at `1 / legs` of the measures' level and of the false-discovery rate, so that
/// a matrix of legs alarms no more often than one leg (Bonferroni over the legs).
pub fn compare_key(
    heads: &[&RunLevel],
    candidates: &[&RunLevel],
    criteria: &Criteria,
    legs: usize,
) -> RunComparison {
    let legs = legs.max(1);
    let head = points::Point {
        runs: heads.to_vec(),
    };
    let floor = criteria.floor();
    let chosen = history::choose(candidates, &head, floor, &criteria.judged_keys);
    let used = chosen.used();
    // The base run the conditions and the within-pair intervals are about: the newest used
    // one, else the newest of all.
    let reference = used
        .last()
        .map(|p| p.first())
        .or(candidates.last().copied())
        .expect("a key has base runs");
    let conditions = conditions::list(
        &reference.conditions,
        &head.first().conditions,
        &criteria.judged_keys,
    );
    let like_for_like = !conditions.iter().any(|c| c.judged && c.differs);
    // With no usable base point, the numbers are still shown against the newest base run
    // (labelled "not like for like"), with no verdict.
    let fallback;
    let (alike, learned, points): (&[points::Point], [history::Learned; 2], Vec<&points::Point>) =
        if used.is_empty() {
            fallback = [points::Point {
                runs: vec![reference],
            }];
            let none = history::Learned {
                values: 1,
                kept: vec![true],
                segment: vec![0],
                ..history::Learned::default()
            };
            (&fallback, [none.clone(), none], fallback.iter().collect())
        } else {
            (&chosen.alike, chosen.learned.clone(), used.clone())
        };
    let gpu_both = head.first().gpu_available
        && points
            .iter()
            .any(|p| p.runs.iter().any(|r| r.gpu_available));
    let alpha = measure_alpha(&learned, gpu_both, legs);
    let measures: Vec<_> = [MeasureName::HostInclusive, MeasureName::GpuProjected]
        .into_iter()
        .zip(&learned)
        .map(|(m, l)| {
            let mut measure = measures::measure(m, &head, alike, l, reference, floor, alpha);
            if used.is_empty() && measure.verdict.is_some() {
                measure.note = Some(
                    "no base run has the head's conditions (compared with the newest base run, whose conditions differ)".to_owned(),
                );
            }
            measure
        })
        .collect();
    // Where: range groups, kernels, copies; every item of the run under one false-discovery
    // control. An item's base times follow where its measure's history puts an unchanged run
    // (GPU work the projection's, the host's when the projection has no prediction of its own).
    let [host_shape, gpu_shape] = shapes(&learned, &head, &points);
    let exact = criteria.exact_names;
    let mut host =
        items::ranges(&head, &points, Clock::HostExclusive, exact).table(floor, &host_shape);
    let mut gpu = gpu_both.then(|| {
        items::ranges(&head, &points, Clock::GpuProjected, exact).table(floor, &gpu_shape)
    });
    let kernels = items::work(&head, &points, Kind::Kernels);
    let copies = items::work(&head, &points, Kind::MemoryCopies);
    let exposed = items::work(&head, &points, Kind::ExposedCommunication);
    let mut kernel_table = kernels.as_ref().map(|w| w.input.table(floor, &gpu_shape));
    let mut copy_table = copies.as_ref().map(|w| w.input.table(floor, &gpu_shape));
    // A distributed run's ranks: each rank's median, an item like a range group's. Never
    // beyond the host measure's offset: the step time is the slowest rank's, so a slower rank
    // would move it as much as itself.
    let rank_shape = ranges::Shape {
        expected: host_shape.expected,
        measure: None,
    };
    let mut rank_table = rank_table(&head, &points, floor, &rank_shape);
    let mut exposed_table = exposed.as_ref().map(|w| w.input.table(floor, &gpu_shape));
    let mut tables: Vec<&mut ranges::Table> = vec![&mut host];
    tables.extend(gpu.as_mut());
    tables.extend(kernel_table.as_mut());
    tables.extend(copy_table.as_mut());
    tables.extend(rank_table.as_mut());
    tables.extend(exposed_table.as_mut());
    ranges::decide(
        &mut tables,
        floor,
        ranges::FALSE_DISCOVERY_RATE / legs as f64,
    );
    if !exact {
        items::members(&mut host.changes, &head, &points, Clock::HostExclusive);
        if let Some(g) = gpu.as_mut() {
            items::members(&mut g.changes, &head, &points, Clock::GpuProjected);
        }
    }
    let judged_work = |work: Option<items::Work>, table: Option<ranges::Table>, kind| {
        let (work, mut table) = (work?, table?);
        items::describe(&mut table.changes, &work.input, &head, kind);
        Some(WorkChanges {
            basis: work.basis,
            items: table.changes,
            note: work.note,
        })
    };
    let kernels = judged_work(kernels, kernel_table, Kind::Kernels);
    let memory_copies = judged_work(copies, copy_table, Kind::MemoryCopies);
    let exposed_communication = judged_work(exposed, exposed_table, Kind::ExposedCommunication);
    RunComparison {
        key: head.first().key.clone(),
        heads: heads.iter().map(|r| r.run.clone()).collect(),
        base: reference.run.clone(),
        history: chosen.history,
        like_for_like,
        conditions,
        // The whole run's move is said only when it is beyond the host measure's noise.
        run_wide: host
            .run_wide
            .filter(|w| beyond_interval(&measures[0], w.change_pct)),
        measures,
        host_ranges: host.changes,
        gpu_ranges: gpu.map(|g| g.changes),
        gpu_work: gpu_work::changes(reference.gpu_work.as_ref(), head.first().gpu_work.as_ref()),
        kernels,
        memory_copies,
        exposed_communication,
        ranks: rank_table.map(|t| rank_changes(t.changes)),
        budget_legs: legs as u64,
    }
}

/// The ranks' table of the head and the used points (each rank's median, as `rank N`), when
/// the head has ranks.
fn rank_table(
    head: &points::Point<'_>,
    points: &[&points::Point<'_>],
    floor: f64,
    shape: &ranges::Shape,
) -> Option<ranges::Table> {
    (!head.first().ranks.is_empty()).then(|| {
        items::Input {
            head: head.runs.iter().map(|r| Cow::Borrowed(&r.ranks)).collect(),
            used: points
                .iter()
                .map(|p| {
                    p.runs
                        .iter()
                        .filter(|r| !r.ranks.is_empty())
                        .map(|r| Cow::Borrowed(&r.ranks))
                        .collect()
                })
                .collect(),
            iterations: None,
            iterations_note: None,
        }
        .table(floor, shape)
    })
}

/// A rank table's changes, each item named by its rank.
fn rank_changes(changes: RangeChanges) -> RankChanges {
    let rank = |name: &str| -> u64 {
        name.strip_prefix(run_level::RANK_ITEM)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    let only = |o: &RangeOnly| RankOnly {
        rank: rank(&o.name),
        median_ns: o.per_iteration_ns,
    };
    RankChanges {
        changed: changes
            .changed
            .iter()
            .map(|c| RankChange {
                rank: rank(&c.name),
                base_median_ns: c.base_per_iteration_ns,
                head_median_ns: c.head_per_iteration_ns,
                change_pct: c.change_pct,
                base_runs: c.base_runs,
                p_value: c.p_value,
                verdict: c.verdict,
            })
            .collect(),
        new: changes.new.iter().map(only).collect(),
        gone: changes.gone.iter().map(only).collect(),
        detectable_pct: changes.detectable_pct,
    }
}

/// The shape the host items and the GPU items follow: where each measure's history puts an
/// unchanged run (GPU work the projection's, the host's when the projection has no prediction
/// of its own), and each run's offset for a table of few items: its measure's (the host's for
/// host items; the projection's for GPU items when every run has one, else the host's).
fn shapes(
    learned: &[history::Learned; 2],
    head: &points::Point<'_>,
    points: &[&points::Point<'_>],
) -> [ranges::Shape; 2] {
    let shift_of = |m: usize| match learned[m].prediction {
        Some(_) => expected(&learned[m], points, m),
        None if m == 1 => expected(&learned[0], points, 0),
        None => 0.0,
    };
    let host_logs = measure_logs(head, points, MeasureName::HostInclusive);
    let gpu_logs = measure_logs(head, points, MeasureName::GpuProjected).or(host_logs.clone());
    [
        ranges::Shape {
            expected: shift_of(0),
            measure: host_logs,
        },
        ranges::Shape {
            expected: shift_of(1),
            measure: gpu_logs,
        },
    ]
}

/// A measure's logarithm at each used point and at the head; `None` unless every one has it.
fn measure_logs(
    head: &points::Point<'_>,
    points: &[&points::Point<'_>],
    name: MeasureName,
) -> Option<ranges::MeasureLogs> {
    Some(ranges::MeasureLogs {
        points: points
            .iter()
            .map(|p| p.log(name))
            .collect::<Option<Vec<f64>>>()?,
        head: head.log(name)?,
    })
}

/// Where a measure's history puts a run of unchanged code against its used points' mean (a
/// logarithm; 0 without a prediction).
fn expected(learned: &history::Learned, points: &[&points::Point], measure: usize) -> f64 {
    let name = [MeasureName::HostInclusive, MeasureName::GpuProjected][measure];
    let logs: Vec<f64> = points.iter().filter_map(|p| p.log(name)).collect();
    match learned.prediction {
        Some(p) if !logs.is_empty() => p.level - logs.iter().sum::<f64>() / logs.len() as f64,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nsys_gate_core::artifact::comparison::{ChangeVerdict, LeftOutReason};
    use nsys_gate_core::artifact::fake;
    use proptest::prelude::*;

    /// A run of 20 iterations about `level` ns, moved by `offset` (relative), with a fixed
    /// pattern of ±0.5 % per-iteration noise.
    fn run(level: f64, offset: f64, id: usize) -> RunLevel {
        const PATTERN: [f64; 5] = [0.003, -0.005, 0.001, 0.004, -0.002];
        let host: Vec<i64> = (0..20)
            .map(|i| (level * (1.0 + offset) * (1.0 + PATTERN[i % 5])) as i64)
            .collect();
        let mut a = fake::analysis(&host, &[("inference", level as i64 * 10)], false);
        a.run.run_id = format!("run-{id}");
        RunLevel::of(&a, &format!("{id}/analysis.json"))
    }

    /// `n` base runs about 10 ms, run-to-run offsets of about ±`spread`.
    fn history(n: usize, spread: f64) -> Vec<RunLevel> {
        const OFFSETS: [f64; 7] = [0.3, -0.9, 0.6, -0.1, 1.0, -0.5, -0.4];
        (0..n)
            .map(|k| run(10e6, spread * OFFSETS[k % 7], k))
            .collect()
    }

    fn source() -> BaselineSource {
        BaselineSource {
            kind: nsys_gate_core::artifact::comparison::BaselineKind::Path,
            paths: Vec::new(),
            workflow: None,
            job: None,
            branch: None,
            artifact: None,
            workflow_runs: Vec::new(),
            ci_runs: Vec::new(),
            analyses: Vec::new(),
        }
    }

    fn host_verdict(bases: &[RunLevel], head: &RunLevel) -> Option<ChangeVerdict> {
        let c = compare(
            std::slice::from_ref(head),
            bases,
            source(),
            Vec::new(),
            Criteria::default(),
        );
        c.runs[0].measures[0].verdict
    }

    #[test]
    fn too_few_base_runs_never_give_a_verdict() {
        let slow = run(12e6, 0.0, 99);
        for n in [1, 2] {
            assert_eq!(
                host_verdict(&history(n, 0.01), &slow),
                Some(ChangeVerdict::NoiseUnknown),
                "{n} base runs"
            );
        }
        assert_eq!(
            host_verdict(&history(3, 0.01), &slow),
            Some(ChangeVerdict::Slower)
        );
    }

    #[test]
    fn histories_of_10_and_100_runs_tell_noise_from_change() {
        for n in [10, 100] {
            let bases = history(n, 0.01);
            assert_eq!(
                host_verdict(&bases, &run(10e6, 0.004, 99)),
                Some(ChangeVerdict::WithinNoise),
                "{n} base runs, no change"
            );
            assert_eq!(
                host_verdict(&bases, &run(10e6, 0.05, 99)),
                Some(ChangeVerdict::Slower),
                "{n} base runs, 5 % slower"
            );
            assert_eq!(
                host_verdict(&bases, &run(10e6, -0.05, 99)),
                Some(ChangeVerdict::Faster),
                "{n} base runs, 5 % faster"
            );
        }
    }

    #[test]
    fn identical_runs_leave_only_the_spread_floor() {
        let bases: Vec<RunLevel> = (0..5).map(|k| run(10e6, 0.0, k)).collect();
        let same = run(10e6, 0.0, 99);
        assert_eq!(
            host_verdict(&bases, &same),
            Some(ChangeVerdict::WithinNoise)
        );
        // A history with no spread gives no certainty: its spread is taken as 0.8 % (the
        // default noise floor's 80 %), a spread known without error (the normal quantile:
        // 1.96 · 0.8 % · √1.2 = 1.72 %), so 1.5 % from five identical runs is within noise
        // and 2 % is not.
        assert_eq!(
            host_verdict(&bases, &run(10e6, 0.015, 99)),
            Some(ChangeVerdict::WithinNoise)
        );
        assert_eq!(
            host_verdict(&bases, &run(10e6, 0.02, 99)),
            Some(ChangeVerdict::Slower)
        );
    }

    #[test]
    fn a_slow_first_iteration_does_not_move_a_run() {
        let bases = history(10, 0.01);
        let mut a = fake::analysis(&[10_000_000; 20], &[("inference", 100_000_000)], false);
        a.iterations[0].host.inclusive_ns = 150_000_000;
        let head = RunLevel::of(&a, "head/analysis.json");
        assert_eq!(
            host_verdict(&bases, &head),
            Some(ChangeVerdict::WithinNoise)
        );
    }

    #[test]
    fn a_base_run_of_another_device_is_left_out_and_named() {
        let mut bases = history(6, 0.01);
        let mut other = fake::analysis(&[10_000_000; 20], &[], false);
        other.run.device = Some("cuda:1".into());
        bases.insert(2, RunLevel::of(&other, "other/analysis.json"));
        let c = compare(
            &[run(10e6, 0.0, 99)],
            &bases,
            source(),
            Vec::new(),
            Criteria::default(),
        );
        let h = &c.runs[0].history;
        assert_eq!(h.used.len(), 6);
        assert_eq!(h.left_out.len(), 1);
        assert_eq!(h.left_out[0].reason, LeftOutReason::Conditions);
        assert_eq!(h.left_out[0].run.position, 2);
        assert!(c.runs[0].like_for_like, "the newest base run is alike");
    }

    #[test]
    fn a_history_with_a_step_is_judged_on_the_runs_since_it() {
        let mut bases = history(7, 0.004);
        bases.extend((0..4).map(|k| run(10.5e6, 0.002 * k as f64, 10 + k)));
        let c = compare(
            &[run(10.5e6, 0.001, 99)],
            &bases,
            source(),
            Vec::new(),
            Criteria::default(),
        );
        let r = &c.runs[0];
        let point = r.history.change_point.as_ref().expect("a level shift");
        assert_eq!(point.run_id, "run-10");
        assert!(
            (4.0..6.0).contains(&point.change_pct),
            "{}",
            point.change_pct
        );
        assert_eq!(point.runs, 4);
        // Every run teaches the noise; the newest level (segment 1) is the level.
        assert_eq!(r.history.used.len(), 11);
        let segments: Vec<u64> = r.history.used.iter().map(|u| u.segment).collect();
        assert_eq!(segments, [vec![0; 7], vec![1; 4]].concat());
        assert!(r.history.left_out.is_empty());
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::WithinNoise));
        let level = r.measures[0].base.as_ref().unwrap().level_ns;
        assert!((level / 10.5e6 - 1.0).abs() < 0.005, "{level}");
    }

    fn compared(bases: &[RunLevel], head: &RunLevel) -> RunComparison {
        let mut c = compare(
            std::slice::from_ref(head),
            bases,
            source(),
            Vec::new(),
            Criteria::default(),
        );
        c.runs.remove(0)
    }

    /// The runs of one CI run.
    fn in_ci_run(mut r: RunLevel, id: u64, runner: Option<&str>) -> RunLevel {
        r.ci_run = Some(nsys_gate_core::artifact::CiRun {
            id,
            attempt: Some(1),
        });
        r.runner = runner.map(str::to_owned);
        r
    }

    #[test]
    fn one_artifact_of_copies_is_one_point_and_cannot_outvote_the_history() {
        // Ten CI runs about 10 ms, then one "artifact" holding three analyses of the head's
        // profile at 12 ms (one CI run): one point, far from the rest.
        let mut bases: Vec<RunLevel> = history(10, 0.01)
            .into_iter()
            .enumerate()
            .map(|(k, r)| in_ci_run(r, k as u64, None))
            .collect();
        for copy in 0..3 {
            bases.push(in_ci_run(run(12e6, 0.0, 100 + copy), 99, None));
        }
        let head = run(12e6, 0.0, 200);
        let r = compared(&bases, &head);
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::Slower));
        assert_eq!(r.history.used.len(), 10);
        let out = &r.history.left_out[0];
        assert_eq!((out.reason, out.run.repeats), (LeftOutReason::Outlier, 3));
        assert_eq!(out.run.analyses.len(), 3);
        assert!(out.change_pct.unwrap() > 15.0, "{:?}", out.change_pct);
        let c = compare(
            std::slice::from_ref(&head),
            &bases,
            source(),
            Vec::new(),
            Criteria::default(),
        );
        assert!(c
            .notes
            .iter()
            .any(|n| n.contains("1 point of the history combines")));
    }

    #[test]
    fn a_hiccup_run_is_left_out_and_a_real_slowdown_still_found() {
        let mut bases = history(10, 0.005);
        bases[4] = run(12e6, 0.0, 4);
        let r = compared(&bases, &run(10e6, 0.05, 99));
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::Slower));
        let change = r.measures[0].change_pct.unwrap();
        assert!((4.0..6.0).contains(&change), "{change}");
        assert_eq!(r.history.left_out.len(), 1);
        assert_eq!(r.history.left_out[0].run.position, 4);
        assert_eq!(
            r.history.left_out[0].measure,
            Some(MeasureName::HostInclusive)
        );
        // Unchanged code is within noise, not "faster" against a level the hiccup raised.
        let r = compared(&bases, &run(10e6, 0.0, 99));
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::WithinNoise));
    }

    #[test]
    fn a_base_run_that_cannot_be_true_is_invalid_and_never_a_verdict() {
        let mut zero = fake::analysis(&[0; 20], &[("inference", 0)], false);
        zero.run.run_id = "zero".into();
        let zero = RunLevel::of(&zero, "zero/analysis.json");
        let mut bases = history(3, 0.01);
        bases.insert(1, zero.clone());
        let r = compared(&bases, &run(10e6, 0.1, 99));
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::Slower));
        let out = &r.history.left_out[0];
        assert_eq!((out.reason, out.run.position), (LeftOutReason::Invalid, 1));
        assert!(out.why.as_deref().unwrap().contains("zero or less"));
        // With it, two runs are left: the noise is unknown.
        let r = compared(
            &[bases[0].clone(), zero, bases[2].clone()],
            &run(10e6, 0.1, 99),
        );
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::NoiseUnknown));
    }

    #[test]
    fn runners_of_different_speed_are_not_taken_for_noise() {
        // Ten runs, alternately on runner a (10 ms) and runner b (4 % slower), 0.3 % noise.
        let bases: Vec<RunLevel> = (0..10)
            .map(|k| {
                let (runner, level) = if k % 2 == 0 {
                    ("a", 10e6)
                } else {
                    ("b", 10.4e6)
                };
                in_ci_run(
                    run(level, 0.003 * [1.0, -1.0, 0.5][k % 3], k),
                    k as u64,
                    Some(runner),
                )
            })
            .collect();
        // Unchanged code on the slower runner is its runner's level, not 2 % slower.
        let head = in_ci_run(run(10.4e6, 0.0, 99), 99, Some("b"));
        let r = compared(&bases, &head);
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::WithinNoise));
        assert!(r.measures[0].change_pct.unwrap().abs() < 0.5);
        // 3 % slower on the fast runner: found (the two runners' 4 % is not noise).
        let head = in_ci_run(run(10.3e6, 0.0, 99), 99, Some("a"));
        let r = compared(&bases, &head);
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::Slower));
        // A runner the history has never seen: judged against the whole history's spread.
        let head = in_ci_run(run(10.3e6, 0.0, 99), 99, Some("c"));
        let r = compared(&bases, &head);
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::WithinNoise));
    }

    #[test]
    fn a_drifting_branch_is_named_and_the_head_judged_against_its_trend() {
        // 8 runs at 10 ms, then 12 each 0.8 % slower than the one before, 0.3 % noise.
        let bases: Vec<RunLevel> = (0..20)
            .map(|k| {
                let merges = (k as i32 - 7).max(0);
                let pattern = 0.003 * [0.3, -1.1, 0.8, -0.2, 1.2, -0.7, -0.3][k % 7];
                run(10e6 * 1.008f64.powi(merges), pattern, k)
            })
            .collect();
        // The head at the newest run's level: no change of its own.
        let newest = 10e6 * 1.008f64.powi(12);
        let r = compared(&bases, &run(newest, 0.0, 99));
        let drift = r.history.drift.as_ref().expect("a drift");
        assert!(
            (8.0..12.0).contains(&drift.change_pct),
            "{}",
            drift.change_pct
        );
        assert!((11..=14).contains(&drift.runs), "{}", drift.runs);
        assert_eq!(drift.measure, MeasureName::HostInclusive);
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::WithinNoise));
        assert!(r.measures[0].change_pct.unwrap().abs() < 1.0);
        // Against the history's mean it would have been about 5 % slower: the level is the
        // trend's, close to the newest run.
        let level = r.measures[0].base.as_ref().unwrap().level_ns;
        assert!((level / newest - 1.0).abs() < 0.01, "{level}");
    }

    #[test]
    fn what_the_history_can_see_is_said_and_a_thin_head_widens_it() {
        let bases = history(10, 0.01);
        let r = compared(&bases, &run(10e6, 0.0, 99));
        let seen = r.measures[0].detectable_pct.expect("noise known");
        assert!((2.0..5.0).contains(&seen), "{seen}");
        // A head of 5 counted iterations with 2 % per-iteration noise knows its value less
        // well than the history's runs of 20 at 0.5 %.
        let host: Vec<i64> = [0.02, -0.02, 0.01, -0.01, 0.0]
            .iter()
            .cycle()
            .take(20)
            .map(|e| (10e6 * (1.0 + e)) as i64)
            .collect();
        let mut a = fake::analysis(&host, &[("inference", 100_000_000)], false);
        for i in &mut a.iterations[5..] {
            i.complete = false;
        }
        a.iteration_summary.host_inclusive.as_mut().unwrap().count = 5;
        let thin = RunLevel::of(&a, "thin/analysis.json");
        assert_eq!(thin.host_samples.len(), 5);
        let r_thin = compared(&bases, &thin);
        let [lo, hi] = r_thin.measures[0].interval_pct.unwrap();
        let [lo0, hi0] = r.measures[0].interval_pct.unwrap();
        assert!(hi - lo > hi0 - lo0, "{lo} {hi} against {lo0} {hi0}");
        assert!(r_thin.measures[0].detectable_pct.unwrap() > seen);
        // With too few runs the noise is unknown and so is what it could see.
        let r = compared(&history(2, 0.01), &run(10e6, 0.0, 99));
        assert_eq!(r.measures[0].detectable_pct, None);
    }

    #[test]
    fn a_run_that_moved_as_a_whole_is_said_once() {
        let ranges = |offset: f64, k: usize| -> RunLevel {
            // Names without digits: the comparison groups names that differ only in numbers.
            let names: Vec<String> = (b'a'..b'm')
                .map(|c| format!("stage_{}", c as char))
                .collect();
            let totals: Vec<(&str, i64)> = names
                .iter()
                .enumerate()
                .map(|(g, n)| {
                    let own = 1.0 + 0.002 * (((g + k) % 5) as f64 - 2.0);
                    (n.as_str(), (20.0 * 100_000.0 * (1.0 + offset) * own) as i64)
                })
                .collect();
            let host: Vec<i64> = (0..20).map(|_| (10e6 * (1.0 + offset)) as i64).collect();
            let mut a = fake::analysis(&host, &totals, false);
            a.run.run_id = format!("run-{k}");
            RunLevel::of(&a, &format!("{k}/analysis.json"))
        };
        let bases: Vec<RunLevel> = (0..10)
            .map(|k| ranges(0.01 * [0.3, -0.9, 0.6, -0.1, 1.0][k % 5], k))
            .collect();
        let r = compared(&bases, &ranges(0.06, 99));
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::Slower));
        let wide = r.run_wide.as_ref().expect("a run-wide shift");
        assert_eq!((wide.groups_moved, wide.groups), (12, 12));
        assert!(r
            .host_ranges
            .changed
            .iter()
            .all(|c| c.verdict == ChangeVerdict::WithinNoise));
        // A history whose runs differ by about 2.2 %: a head 2.5 % up everywhere moved all its
        // ranges beyond the floor, but no more than a run of unchanged code does. Not said.
        let noisy: Vec<RunLevel> = (0..10)
            .map(|k| ranges(0.03 * [0.3, -0.9, 0.6, -0.1, 1.0][k % 5], k))
            .collect();
        let r = compared(&noisy, &ranges(0.025, 99));
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::WithinNoise));
        let [_, high] = r.measures[0].interval_pct.unwrap();
        assert!(high > 2.5, "{high}");
        assert_eq!(r.run_wide, None);
    }

    #[test]
    fn the_legs_of_one_profile_share_its_error_budget_and_other_profiles_keep_their_own() {
        let on = |mut r: RunLevel, profile: &str, leg: &str| {
            r.key.profile_name = profile.to_owned();
            r.key.leg = Some(leg.to_owned());
            r
        };
        let matrix = ["gpu0", "gpu1", "gpu2", "gpu3"];
        let mut bases = Vec::new();
        let mut heads = Vec::new();
        for leg in matrix {
            bases.extend(history(10, 0.01).into_iter().map(|r| on(r, "matrix", leg)));
            heads.push(on(run(10e6, 0.0, 99), "matrix", leg));
        }
        bases.extend(
            history(10, 0.01)
                .into_iter()
                .map(|r| on(r, "alone", "gpu0")),
        );
        heads.push(on(run(10e6, 0.0, 99), "alone", "gpu0"));
        let c = compare(&heads, &bases, source(), Vec::new(), Criteria::default());
        assert_eq!(c.runs.len(), 5);
        let legs: Vec<u64> = c.runs.iter().map(|r| r.budget_legs).collect();
        assert_eq!(legs, [4, 4, 4, 4, 1]);
        // The same history and head: a leg of the matrix is judged at a quarter of the level,
        // so its interval is wider and it sees less.
        let width = |r: &RunComparison| {
            let [low, high] = r.measures[0].interval_pct.unwrap();
            high - low
        };
        let (leg, alone) = (&c.runs[0], &c.runs[4]);
        assert_eq!(
            alone.measures[0].interval_pct,
            compared(&history(10, 0.01), &run(10e6, 0.0, 99)).measures[0].interval_pct
        );
        assert!(
            width(leg) > 1.2 * width(alone),
            "{} against {}",
            width(leg),
            width(alone)
        );
        assert!(leg.measures[0].detectable_pct > alone.measures[0].detectable_pct);
        // Its items too: a quarter of the false-discovery rate.
        assert!(leg.host_ranges.detectable_pct > alone.host_ranges.detectable_pct);
        // A head between the two intervals' tops on every leg: slower alone, within the
        // noise on a leg of the matrix.
        let top = |r: &RunComparison| r.measures[0].interval_pct.unwrap()[1];
        let between = 1.0 + (top(leg) + top(alone)) / 200.0;
        assert!(top(alone).max(1.0) < (between - 1.0) * 100.0);
        let level = alone.measures[0].base.as_ref().unwrap().level_ns;
        let slow: Vec<RunLevel> = heads
            .iter()
            .map(|h| {
                let leg = h.key.leg.as_deref().unwrap();
                on(run(level * between, 0.0, 99), &h.key.profile_name, leg)
            })
            .collect();
        let c = compare(&slow, &bases, source(), Vec::new(), Criteria::default());
        let verdicts: Vec<Option<ChangeVerdict>> =
            c.runs.iter().map(|r| r.measures[0].verdict).collect();
        assert_eq!(
            verdicts,
            [
                [Some(ChangeVerdict::WithinNoise); 4].as_slice(),
                &[Some(ChangeVerdict::Slower)]
            ]
            .concat()
        );
        // A profile of one leg writes no share.
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["runs"][0]["budget_legs"], 4);
        assert!(json["runs"][4].get("budget_legs").is_none());
    }

    #[test]
    fn a_lone_point_on_the_heads_runner_is_not_its_level() {
        // Ten runs on runner a, one planted on b at +10 %; the head on b at +10 %: the lone
        // point is an outlier of the rest, not b's level, and the head is slower.
        let mut bases: Vec<RunLevel> = history(10, 0.005)
            .into_iter()
            .enumerate()
            .map(|(k, r)| in_ci_run(r, k as u64, Some("a")))
            .collect();
        bases.insert(5, in_ci_run(run(11e6, 0.0, 50), 50, Some("b")));
        let head = in_ci_run(run(11e6, 0.0, 99), 99, Some("b"));
        let r = compared(&bases, &head);
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::Slower));
        let runner = r
            .history
            .head_runner
            .as_ref()
            .expect("the head names its runner");
        assert!(runner.barely_known && !runner.own_level, "{runner:?}");
    }

    /// Runners `a` (quiet, about 0.3 %) and `b` (noisy, about 3 %) at one speed, alternating.
    fn quiet_and_noisy() -> Vec<RunLevel> {
        const OFFSETS: [f64; 5] = [0.9, -1.0, 0.2, -0.6, 0.5];
        (0..10)
            .map(|k| {
                let (runner, sd) = if k % 2 == 0 {
                    ("a", 0.003)
                } else {
                    ("b", 0.03)
                };
                in_ci_run(run(10e6, sd * OFFSETS[k / 2], k), k as u64, Some(runner))
            })
            .collect()
    }

    #[test]
    fn each_runner_is_judged_with_its_own_spread() {
        // A head on noisy b, 4 % under b's level: within b's noise (3 %), far beyond what
        // one spread of both runners (about 2 %) allows.
        let bases = quiet_and_noisy();
        let r = compared(&bases, &in_ci_run(run(9.6e6, 0.0, 99), 99, Some("b")));
        let runner = r.history.head_runner.as_ref().unwrap();
        assert!(runner.own_spread && runner.own_level, "{runner:?}");
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::WithinNoise));
        let wide = r.measures[0].detectable_pct.unwrap();
        // A head on quiet a, +3 %: slower, seen against a's own spread.
        let r = compared(&bases, &in_ci_run(run(10.3e6, 0.0, 99), 99, Some("a")));
        let runner = r.history.head_runner.as_ref().unwrap();
        assert!(runner.own_spread, "{runner:?}");
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::Slower));
        assert!(
            r.measures[0].detectable_pct.unwrap() < 3.0 && wide > 8.0,
            "{wide}"
        );
    }

    #[test]
    fn the_newest_runs_moved_are_said_and_two_that_agree_are_a_level() {
        // Eight runs about 10 ms, the newest two 5 % slower; the head like them.
        let mut bases = history(8, 0.005);
        bases.push(run(10.5e6, 0.002, 8));
        bases.push(run(10.5e6, -0.002, 9));
        let r = compared(&bases, &run(10.5e6, 0.0, 99));
        let moved = r
            .history
            .newest_moved
            .as_ref()
            .expect("the newest runs moved");
        assert_eq!((moved.runs, moved.provisional_level), (2, true));
        assert!(
            (4.0..6.0).contains(&moved.change_pct),
            "{}",
            moved.change_pct
        );
        assert_eq!(moved.since.run_id, "run-8");
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::WithinNoise));
        // One alone decides nothing: the head like it is still slower, and it is said.
        let mut bases = history(9, 0.005);
        bases.push(run(10.5e6, 0.0, 9));
        let r = compared(&bases, &run(10.5e6, 0.0, 99));
        let moved = r
            .history
            .newest_moved
            .as_ref()
            .expect("the newest run moved");
        assert_eq!((moved.runs, moved.provisional_level), (1, false));
        assert_eq!(r.measures[0].verdict, Some(ChangeVerdict::Slower));
        // Nothing moved: nothing said.
        let r = compared(&history(10, 0.005), &run(10.5e6, 0.0, 99));
        assert!(r.history.newest_moved.is_none());
    }

    proptest! {
        #[test]
        fn a_verdict_is_never_under_the_floor_and_p_values_are_probabilities(
            offsets in prop::collection::vec(-0.03f64..0.03, 3..30),
            head in -0.2f64..0.2,
            floor in 0.0f64..5.0,
        ) {
            let bases: Vec<RunLevel> = offsets
                .iter()
                .enumerate()
                .map(|(k, o)| run(10e6, *o, k))
                .collect();
            let c = compare(
                &[run(10e6, head, 99)],
                &bases,
                source(),
                Vec::new(),
                Criteria { noise_floor_pct: floor, ..Criteria::default() },
            );
            let m = &c.runs[0].measures[0];
            let change = m.change_pct.expect("both sides have values");
            if let Some(p) = m.p_value {
                prop_assert!((0.0..=1.0).contains(&p), "{p}");
            }
            match m.verdict {
                Some(ChangeVerdict::Slower) => prop_assert!(change >= floor - 0.01, "{change} {floor}"),
                Some(ChangeVerdict::Faster) => prop_assert!(-change >= floor - 0.01, "{change} {floor}"),
                _ => {}
            }
            prop_assert!(change != 0.0 || !change.is_sign_negative());
        }
    }
}
