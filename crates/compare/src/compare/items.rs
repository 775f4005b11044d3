//! What a run's number of an item is, for each table judged item by item
//! ([`super::ranges`]): the head's tables and the used points', built from the runs.
//!
//! - **Range groups**: each range's time per counted iteration (host exclusive, or GPU
//!   projected), summed over the ranges of a group, as the report groups them
//!   ([`nsys_gate_core::artifact::group_name`]: names that differ only in decimal numbers together);
//!   by exact name with `--exact-names`. Grouped here, from the ranges' names, so that an
//!   analysis.json written before it recorded its groups compares the same way.
//! - **Kernels** by base name, and **memory copies** by kind: their time launched inside the
//!   counted iterations over their count (`per_iteration_ns`), when the head and every used
//!   base run record it for every item; else, for every run alike, the capture's total over
//!   the counted iterations ([`WorkBasis::Capture`]: warm-up and uncounted passes included,
//!   which the judged conditions `warmup`, `iterations` and `capture_range` keep the same),
//!   said in a note. Copies are on that basis on every tested nsys: their launching calls are
//!   known only from `cuda_api_trace`, which nsys-gate asks only of an nsys without
//!   `cuda_kern_exec_trace`.
//! - **Exposed communication** by device (`NAME (ID)`): each device's communication per
//!   counted iteration during which no compute kernel ran (`gpu_work.devices[]`), of the
//!   devices that have some.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::points::Point;
use super::ranges::{self, Table, Times};
use super::run_level::{RunLevel, Steady, WorkTotals};
use nsys_gate_core::artifact::comparison::{
    IterationBasis, Member, RangeChanges, WorkBasis, LARGEST_MEMBERS,
};
use nsys_gate_core::artifact::group_name;

/// The head's tables (one per head run) and each used point's (one per analysis that has
/// the table), oldest first.
pub struct Input<'a> {
    pub head: Vec<Cow<'a, Times>>,
    pub used: Vec<Vec<Cow<'a, Times>>>,
    /// Which iterations the numbers are over, and why not the steady state when some runs
    /// have one (said in the table's changes).
    pub iterations: Option<IterationBasis>,
    pub iterations_note: Option<String>,
}

impl Input<'_> {
    /// The items judged (not yet decided: [`ranges::decide`]), following the history's
    /// `shape` as [`ranges::table`] takes it.
    pub fn table(&self, floor: f64, shape: &ranges::Shape) -> Table {
        let head: Vec<&Times> = self.head.iter().map(|t| t.as_ref()).collect();
        let used: Vec<Vec<&Times>> = self
            .used
            .iter()
            .map(|p| p.iter().map(|t| t.as_ref()).collect())
            .collect();
        let mut table = ranges::table(&head, &used, floor, shape);
        table.changes.iterations = self.iterations;
        table.changes.iterations_note = self.iterations_note.clone();
        table
    }

    /// The head's value of each of its items.
    fn head_values(&self) -> BTreeMap<&str, f64> {
        let head: Vec<&Times> = self.head.iter().map(|t| t.as_ref()).collect();
        head.iter()
            .flat_map(|t| t.keys())
            .filter_map(|n| Some((n.as_str(), ranges::value(&head, n)?)))
            .collect()
    }
}

/// Which of a run's range tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Host exclusive time (exclusive times add up, inclusive ones do not).
    HostExclusive,
    /// GPU-projected time.
    GpuProjected,
}

impl Clock {
    fn of(self, r: &RunLevel) -> &Times {
        match self {
            Clock::HostExclusive => &r.host_ranges,
            Clock::GpuProjected => &r.gpu_ranges,
        }
    }

    fn instances(self, r: &RunLevel) -> &BTreeMap<String, u64> {
        match self {
            Clock::HostExclusive => &r.host_instances,
            Clock::GpuProjected => &r.gpu_instances,
        }
    }
}

/// A range table of the head and the used points: by group unless `exact`. Groups are over
/// the steady state (the counted iterations but the slow ones, as the report's tables show
/// them) when some run leaves slow ones out and every run says what its steady state is; by
/// exact name, or when a run with slow iterations records no steady state (written before
/// it), over every counted iteration, for every run alike.
pub fn ranges<'a>(head: &Point<'a>, used: &[&Point<'a>], clock: Clock, exact: bool) -> Input<'a> {
    let runs = || {
        head.runs
            .iter()
            .chain(used.iter().flat_map(|p| p.runs.iter()))
    };
    let slow = runs().any(|r| !matches!(r.steady, Steady::Every));
    let unknown = runs().filter(|r| r.steady == Steady::Unknown).count();
    let steady = !exact && slow && unknown == 0;
    let iterations_note = (!exact && unknown > 0).then(|| {
        let total = runs().count();
        format!(
            "Range groups are compared over every counted iteration, slow ones included, in every run alike: {unknown} of the {total} runs {} slow iterations but no steady state (an analysis.json written before `steady_state`, or a distributed run).",
            if unknown == 1 { "records" } else { "record" }
        )
    });
    let of = |r: &'a RunLevel| -> Cow<'a, Times> {
        match (&r.steady, steady, exact) {
            (Steady::Own { host, gpu, .. }, true, _) => Cow::Borrowed(match clock {
                Clock::HostExclusive => host,
                Clock::GpuProjected => gpu,
            }),
            (_, _, true) => Cow::Borrowed(clock.of(r)),
            _ => Cow::Owned(grouped(clock.of(r))),
        }
    };
    Input {
        head: head.runs.iter().map(|&r| of(r)).collect(),
        used: used
            .iter()
            .map(|p| p.runs.iter().map(|&r| of(r)).collect())
            .collect(),
        iterations: Some(if steady {
            IterationBasis::SteadyState
        } else {
            IterationBasis::Counted
        }),
        iterations_note,
    }
}

/// Ranges summed by group.
fn grouped(times: &Times) -> Times {
    let mut groups = Times::new();
    for (name, v) in times {
        *groups.entry(group_name(name)).or_default() += v;
    }
    groups
}

/// Each changed group's number of ranges in the head and, when it has more than one, its
/// largest ranges in the head with their history's time, per iteration and per instance.
pub fn members(changes: &mut RangeChanges, head: &Point<'_>, used: &[&Point<'_>], clock: Clock) {
    let head_tables: Vec<&Times> = head.runs.iter().map(|r| clock.of(r)).collect();
    let mut by_group: BTreeMap<String, Vec<(&str, f64)>> = BTreeMap::new();
    let names: std::collections::BTreeSet<&String> =
        head_tables.iter().flat_map(|t| t.keys()).collect();
    for name in names {
        if let Some(v) = ranges::value(&head_tables, name) {
            by_group
                .entry(group_name(name))
                .or_default()
                .push((name.as_str(), v));
        }
    }
    let history = |name: &str| {
        let logs: Vec<f64> = used
            .iter()
            .filter_map(|p| {
                let tables: Vec<&Times> = p.runs.iter().map(|r| clock.of(r)).collect();
                ranges::value(&tables, name).map(f64::ln)
            })
            .collect();
        (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
    };
    // A point's mean time of one instance: its runs' (geometric mean).
    let instance = |p: &Point<'_>, name: &str| {
        crate::compare::points::geometric(p.runs.iter().filter_map(|r| {
            let per_iteration = clock.of(r).get(name)?;
            let instances = *clock.instances(r).get(name)?;
            (instances > 0).then(|| per_iteration * r.iterations as f64 / instances as f64)
        }))
    };
    let history_instance = |name: &str| {
        let logs: Vec<f64> = used
            .iter()
            .filter_map(|p| instance(p, name).map(f64::ln))
            .collect();
        (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
    };
    for change in &mut changes.changed {
        let Some(list) = by_group.get_mut(&change.name) else {
            continue;
        };
        change.members = Some(list.len() as u64);
        if list.len() < 2 {
            continue;
        }
        list.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(y.0)));
        change.largest_members = list
            .iter()
            .take(LARGEST_MEMBERS)
            .map(|&(name, v)| Member {
                name: name.to_owned(),
                base_per_iteration_ns: history(name),
                head_per_iteration_ns: v,
                base_per_instance_ns: history_instance(name),
                head_per_instance_ns: instance(head, name),
            })
            .collect();
    }
}

/// A table of GPU work (kernels or copies) and how its numbers were made.
pub struct Work<'a> {
    pub input: Input<'a>,
    pub basis: WorkBasis,
    pub note: Option<String>,
}

/// Which GPU work a table is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Kernels,
    MemoryCopies,
    /// Each device's exposed communication per counted iteration (always per iteration).
    ExposedCommunication,
}

impl Kind {
    /// The run's capture totals of this kind (kernels by base name).
    fn capture(self, w: &WorkTotals) -> &Times {
        match self {
            Kind::Kernels => &w.kernel_bases,
            Kind::MemoryCopies => &w.memory_copies,
            Kind::ExposedCommunication => &w.exposed_communication,
        }
    }

    fn per_iteration(self, w: &WorkTotals) -> Option<&Times> {
        match self {
            Kind::Kernels => w.kernels_per_iteration.as_ref(),
            Kind::MemoryCopies => w.copies_per_iteration.as_ref(),
            Kind::ExposedCommunication => Some(&w.exposed_communication),
        }
    }
}

/// The head's kernels or copies against the used points'; `None` unless the head and some
/// used point record some.
pub fn work<'a>(head: &Point<'a>, used: &[&Point<'a>], kind: Kind) -> Option<Work<'a>> {
    fn recorded(r: &RunLevel, kind: Kind) -> Option<&WorkTotals> {
        r.gpu_work.as_ref().filter(|w| !kind.capture(w).is_empty())
    }
    let any = |p: &Point<'a>| p.runs.iter().any(|r| recorded(r, kind).is_some());
    if !any(head) || !used.iter().any(|p| any(p)) {
        return None;
    }
    let lacks = |p: &Point<'a>| {
        p.runs
            .iter()
            .filter_map(|r| recorded(r, kind))
            .any(|w| kind.per_iteration(w).is_none())
    };
    let head_lacks = lacks(head);
    let bases_lacking = used.iter().filter(|p| lacks(p)).count();
    let basis = if head_lacks || bases_lacking > 0 {
        WorkBasis::Capture
    } else {
        WorkBasis::PerIteration
    };
    let of = |r: &'a RunLevel| -> Option<Cow<'a, Times>> {
        let w = recorded(r, kind)?;
        match basis {
            WorkBasis::PerIteration => kind.per_iteration(w).map(Cow::Borrowed),
            WorkBasis::Capture if r.iterations > 0 => Some(Cow::Owned(
                kind.capture(w)
                    .iter()
                    .map(|(n, t)| (n.clone(), t / r.iterations as f64))
                    .collect(),
            )),
            WorkBasis::Capture => None,
        }
    };
    let tables = |p: &Point<'a>| p.runs.iter().filter_map(|&r| of(r)).collect::<Vec<_>>();
    let note = (basis == WorkBasis::Capture).then(|| {
        let what = match kind {
            Kind::Kernels => "Kernels",
            Kind::MemoryCopies | Kind::ExposedCommunication => "Memory copies",
        };
        let why = match (kind, head_lacks) {
            (Kind::MemoryCopies | Kind::ExposedCommunication, _) => "their time inside the iterations is known only when nsys gives their launching calls (`cuda_api_trace`)".to_owned(),
            (Kind::Kernels, true) => "the head records no kernel time per iteration (its kernels were not attributed to its iterations, or its analysis.json was written before `kernels_by_base_name`)".to_owned(),
            (Kind::Kernels, false) => format!(
                "{bases_lacking} of the {} base runs record no kernel time per iteration (written before `kernels_by_base_name`, or not attributed)",
                used.len()
            ),
        };
        format!("{what} are compared by their capture totals over the counted iterations (warm-up and uncounted passes included, alike in runs of the same conditions): {why}.")
    });
    Some(Work {
        input: Input {
            head: tables(head),
            used: used.iter().map(|p| tables(p)).collect(),
            iterations: (basis == WorkBasis::PerIteration).then_some(IterationBasis::Counted),
            iterations_note: None,
        },
        basis,
        note,
    })
}

/// Each changed item's share of the head's time in its table, and for kernels the range
/// groups that launched it in the head.
pub fn describe(changes: &mut RangeChanges, input: &Input<'_>, head: &Point<'_>, kind: Kind) {
    let values = input.head_values();
    let total: f64 = values.values().sum();
    for change in &mut changes.changed {
        if total > 0.0 {
            change.share = values.get(change.name.as_str()).map(|v| v / total);
        }
        if kind == Kind::Kernels {
            change.launched_by = head
                .runs
                .iter()
                .filter_map(|r| r.gpu_work.as_ref()?.launched_by.get(&change.name))
                .next()
                .cloned()
                .unwrap_or_default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nsys_gate_core::artifact::fake::analysis;

    fn level(ranges: &[(&str, i64)]) -> RunLevel {
        RunLevel::of(&analysis(&[3_000_000; 4], ranges, false), "a.json")
    }

    #[test]
    fn ranges_are_summed_by_group_unless_exact_names_are_asked_for() {
        let run = level(&[
            ("layer_0_token_1.ensure_layer_0_weights", 400_000),
            ("layer_1_token_1.ensure_layer_1_weights", 800_000),
            ("sample", 40_000),
        ]);
        let point = Point { runs: vec![&run] };
        let input = ranges(&point, &[&point], Clock::HostExclusive, false);
        let head = &input.head[0];
        // 1.2 ms over 4 iterations.
        assert_eq!(
            head.get("layer_#_token_#.ensure_layer_#_weights"),
            Some(&300_000.0)
        );
        assert_eq!(head.get("sample"), Some(&10_000.0));
        let exact = ranges(&point, &[&point], Clock::HostExclusive, true);
        assert_eq!(exact.head[0].len(), 3);
        let mut t = input.table(0.01, &ranges::Shape::default());
        members(&mut t.changes, &point, &[&point], Clock::HostExclusive);
        let group = &t.changes.changed[0];
        assert_eq!(group.members, Some(2));
        let largest: Vec<&str> = group
            .largest_members
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(
            largest,
            [
                "layer_1_token_1.ensure_layer_1_weights",
                "layer_0_token_1.ensure_layer_0_weights"
            ]
        );
        let base = group.largest_members[0].base_per_iteration_ns.unwrap();
        assert!((base - 200_000.0).abs() < 1e-6, "{base}");
        let sample = t
            .changes
            .changed
            .iter()
            .find(|c| c.name == "sample")
            .unwrap();
        assert_eq!((sample.members, sample.largest_members.len()), (Some(1), 0));
    }

    fn with_work(kernels: &[(&str, f64)], per_iteration: bool) -> RunLevel {
        let mut r = level(&[("a", 1_000_000)]);
        let map: Times = kernels.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect();
        r.gpu_work = Some(WorkTotals {
            kernel_bases: map.iter().map(|(n, v)| (n.clone(), v * 8.0)).collect(),
            kernels_per_iteration: per_iteration.then(|| map.clone()),
            launched_by: [("gemv".to_owned(), vec!["layer_#.forward".to_owned()])].into(),
            ..WorkTotals::default()
        });
        r
    }

    #[test]
    fn kernels_go_per_iteration_when_every_run_has_it_else_by_the_capture_for_all() {
        let head = with_work(&[("gemv", 900.0), ("norm", 100.0)], true);
        let base = with_work(&[("gemv", 800.0), ("norm", 100.0)], true);
        let old = with_work(&[("gemv", 800.0), ("norm", 100.0)], false);
        let (h, b, o) = (
            Point { runs: vec![&head] },
            Point { runs: vec![&base] },
            Point { runs: vec![&old] },
        );
        let w = work(&h, &[&b], Kind::Kernels).unwrap();
        assert_eq!((w.basis, w.note.is_none()), (WorkBasis::PerIteration, true));
        assert_eq!(w.input.head[0].get("gemv"), Some(&900.0));
        let mut t = w.input.table(0.01, &ranges::Shape::default());
        describe(&mut t.changes, &w.input, &h, Kind::Kernels);
        let gemv = &t.changes.changed[0];
        assert_eq!(gemv.name, "gemv");
        assert_eq!(gemv.share, Some(0.9));
        assert_eq!(gemv.launched_by, ["layer_#.forward"]);
        // One base run without the time per iteration: every run by its capture totals
        // (8 times the time per iteration here) over its 4 counted iterations.
        let w = work(&h, &[&b, &o], Kind::Kernels).unwrap();
        assert_eq!(w.basis, WorkBasis::Capture);
        assert_eq!(w.input.head[0].get("gemv"), Some(&1800.0));
        assert!(w.note.unwrap().contains("1 of the 2 base runs"));
        // No base run with GPU work: no table.
        let plain = level(&[("a", 1_000_000)]);
        assert!(work(&h, &[&Point { runs: vec![&plain] }], Kind::Kernels).is_none());
    }
}
