//! The items judged one by one, as the comment shows them: range groups (or ranges), kernels
//! and memory copies. A table with nothing beyond its noise is one sentence; otherwise its
//! rows are the items that changed (every `slower` or `faster` one first, then, for ranges,
//! the largest other changes), largest absolute change first, and a line of where: each
//! flagged item with its change in % and in time per iteration.

use serde::Serialize;

use super::tables::verdict_cell;
use super::words::{pct, signed_pct};
use crate::escape::{self, inline_shortened as esc};
use crate::format::{capitalized, duration, plural, under_a_tenth, ColumnUnit, NBSP};
use crate::limit::Caps;
use nsys_gate_core::artifact::comparison::{
    ChangeVerdict, IterationBasis, RangeChange, RangeChanges, RangeOnly, RunComparison, WorkBasis,
    WorkChanges,
};

/// What a table's items are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Items {
    /// Range groups (`true`) or ranges by exact name.
    Ranges {
        grouped: bool,
    },
    Kernels,
    Copies,
    /// Each device's exposed communication.
    ExposedCommunication,
}

impl Items {
    /// The noun of one item and of several.
    fn noun(self) -> (&'static str, &'static str) {
        match self {
            Items::Ranges { grouped: true } => ("range group", "range groups"),
            Items::Ranges { grouped: false } => ("range", "ranges"),
            Items::Kernels => ("kernel", "kernels"),
            Items::Copies => ("memory copy kind", "memory copy kinds"),
            Items::ExposedCommunication => ("device", "devices"),
        }
    }

    /// The heading of the share column (of the head's kernel time, or copy time); empty for
    /// none.
    fn share_heading(self) -> &'static str {
        match self {
            Items::Ranges { .. } => "",
            Items::Kernels => "of kernel time",
            Items::Copies => "of copy time",
            Items::ExposedCommunication => "of exposed communication",
        }
    }

    /// The heading of the name column.
    fn heading(self) -> &'static str {
        match self {
            Items::Ranges { grouped: true } => "range group",
            Items::Ranges { grouped: false } => "range",
            Items::Kernels => "kernel",
            Items::Copies => "copy kind",
            Items::ExposedCommunication => "device",
        }
    }
}

/// One table of items.
#[derive(Debug, Serialize)]
pub struct ItemTable {
    /// The name column's heading.
    pub heading: &'static str,
    /// The table in one sentence: how many are `slower` or `faster` of how many; empty when
    /// neither side has an item (nothing to say).
    pub sentence: String,
    /// The items that changed; empty when the sentence says it all.
    pub rows: Vec<ItemRow>,
    /// The share column's heading (kernels and copies), empty for none.
    pub shares: &'static str,
    /// The items in both that the rows leave out, in words.
    pub note: Option<String>,
    /// How the numbers were made, when not per iteration (escaped).
    pub basis: Option<String>,
    /// Which iterations the numbers are over, when not simply every counted one: `over the
    /// steady state (…)`.
    pub over: Option<&'static str>,
    /// Range groups: the largest ranges of each group shown (collapsed below the table).
    pub members: Vec<String>,
    /// What the members' times are: `per instance` (their mean time of one instance), or
    /// `per iteration` (a comparison.json written before instances were counted).
    pub members_per: &'static str,
    /// `name (time per iteration)` of the items only the head has, and only the history's
    /// newest run has.
    pub new: Option<String>,
    pub gone: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ItemRow {
    pub name: String,
    /// The history's time per iteration and the head's, in one unit: `0.641 → 0.692 ms`.
    pub sides: String,
    pub change: String,
    pub change_pct: String,
    /// The item's share of the head's time of its kind (kernels: of all kernel time).
    pub share: String,
    pub verdict: &'static str,
}

fn flagged(v: ChangeVerdict) -> bool {
    matches!(v, ChangeVerdict::Slower | ChangeVerdict::Faster)
}

/// The rows a table shows, largest absolute change first: the flagged items (at most
/// `top`), then, unless `flagged_only`, the largest other changes up to `top`. With the noise
/// unknown nothing is flagged, and the largest changes are what there is to show.
fn shown(c: &RangeChanges, top: usize, flagged_only: bool) -> Vec<&RangeChange> {
    let unknown = c
        .changed
        .iter()
        .any(|r| r.verdict == ChangeVerdict::NoiseUnknown);
    let mut rows: Vec<&RangeChange> = c
        .changed
        .iter()
        .filter(|r| flagged(r.verdict))
        .take(top)
        .collect();
    if !rows.is_empty() && !flagged_only || unknown {
        let room = top.saturating_sub(rows.len());
        rows.extend(c.changed.iter().filter(|r| !flagged(r.verdict)).take(room));
    }
    // `changed` is in order of absolute change (then name): keep that order.
    let position = |r: &RangeChange| {
        c.changed
            .iter()
            .position(|x| std::ptr::eq(x, r))
            .unwrap_or(usize::MAX)
    };
    rows.sort_by_key(|r| position(r));
    rows
}

/// A table's sentence with what its items, each with its own noise, see (`detectable`), when
/// that is more than the host measure sees (`seen`).
fn what_it_sees(
    sentence: String,
    detectable: Option<f64>,
    seen: Option<f64>,
    in_both: usize,
    many: &str,
) -> String {
    let (noise, see) = match in_both {
        1 => ("its own noise", "it sees".to_owned()),
        _ => ("their own noise", format!("{many} see")),
    };
    match detectable {
        Some(d) if !sentence.is_empty() && d > seen.unwrap_or(0.0) => format!(
            "{}; with {noise}, {see} changes of about {} or more.",
            sentence.trim_end_matches('.'),
            pct(d)
        ),
        _ => sentence,
    }
}

/// An item table: its sentence, its rows, what they leave out. `seen` is what the host
/// measure could see (its `detectable_pct`): when one item of the table alone needs more,
/// the sentence says how much.
pub fn table(
    c: &RangeChanges,
    items: Items,
    basis: Option<&WorkChanges>,
    seen: Option<f64>,
    caps: &Caps,
) -> ItemTable {
    let (one, many) = items.noun();
    let work = !matches!(items, Items::Ranges { .. });
    let rows = shown(c, caps.top, work);
    // Base and head in one unit, the change in its own: one unit per column.
    let sides_unit = ColumnUnit::of(
        rows.iter()
            .flat_map(|r| [r.base_per_iteration_ns, r.head_per_iteration_ns]),
    );
    let change_unit = ColumnUnit::of(rows.iter().map(|r| r.change_ns));
    let item_rows: Vec<ItemRow> = rows
        .iter()
        .map(|r| ItemRow {
            name: item_name(r, items, caps),
            sides: sides_unit.show_pair(r.base_per_iteration_ns, r.head_per_iteration_ns),
            change: change_unit.show_change(r.change_ns),
            change_pct: r.change_pct.map_or("n/a".to_owned(), signed_pct),
            share: r.share.map_or("n/a".to_owned(), |s| share_cell(s * 100.0)),
            verdict: verdict_cell(r.verdict),
        })
        .collect();
    let in_both = c.changed.len() + c.changed_omitted as usize;
    let count = |v: ChangeVerdict| c.changed.iter().filter(|r| r.verdict == v).count();
    let (slower, faster) = (count(ChangeVerdict::Slower), count(ChangeVerdict::Faster));
    let sentence = match (slower, faster, in_both) {
        (_, _, 0) if c.new.is_empty() && c.gone.is_empty() => String::new(),
        (_, _, 0) => format!("no {one} in both the head and the history."),
        // Those comparison.json leaves out have the verdicts of those it lists.
        (0, 0, _) if count(ChangeVerdict::NoiseUnknown) == c.changed.len() => {
            format!("no {one} has a verdict: the run-to-run noise is unknown.")
        }
        (0, 0, 1) => format!("the one {one} did not change beyond its run-to-run noise."),
        (0, 0, n) => format!("none of the {n} {many} changed beyond its run-to-run noise."),
        (s, f, n) => format!(
            "{} of {n} {} beyond their run-to-run noise.",
            [(s, "slower"), (f, "faster")]
                .iter()
                .filter(|(k, _)| *k > 0)
                .map(|(k, w)| format!("{k} {w}"))
                .collect::<Vec<_>>()
                .join(" and "),
            if n == 1 { one } else { many }
        ),
    };
    let sentence = what_it_sees(sentence, c.detectable_pct, seen, in_both, many);
    let left = in_both.saturating_sub(item_rows.len());
    let hidden_flagged = slower + faster - rows.iter().filter(|r| flagged(r.verdict)).count();
    let note = (!item_rows.is_empty() && left > 0).then(|| {
        let which = if work && hidden_flagged == 0 {
            format!(
                "{} within their noise",
                plural(left, &format!("other {one}"), &format!("other {many}"))
            )
        } else if hidden_flagged > 0 {
            format!(
                "The {left} other {many} ({hidden_flagged} of them slower or faster) changed less"
            )
        } else {
            format!("The {left} other {many} changed less")
        };
        let which = capitalized(&which);
        match c.changed_omitted {
            0 => format!("{which}; all are in comparison.json."),
            _ => format!(
                "{which}; comparison.json lists the largest {} of them.",
                c.changed.len().saturating_sub(item_rows.len())
            ),
        }
    });
    // The flagged groups' ranges (every shown group's when none is flagged: the noise
    // unknown).
    let any_flagged = rows.iter().any(|r| flagged(r.verdict));
    let members = match items {
        Items::Ranges { grouped: true } => rows
            .iter()
            .filter(|r| flagged(r.verdict) || !any_flagged)
            .filter_map(|r| members(r, caps, members_per_instance(c)))
            .collect(),
        _ => Vec::new(),
    };
    let list = |items: &[RangeOnly], omitted: u64| {
        (!items.is_empty()).then(|| {
            let mut shown: Vec<String> = items
                .iter()
                .take(caps.top.max(1))
                .map(|r| {
                    format!(
                        "{} ({})",
                        esc(&r.name, caps.name_chars),
                        duration(r.per_iteration_ns)
                    )
                })
                .collect();
            let more = items.len() - shown.len() + omitted as usize;
            if more > 0 {
                shown.push(format!("and {more} more"));
            }
            shown.join(", ")
        })
    };
    ItemTable {
        heading: items.heading(),
        sentence,
        shares: items.share_heading(),
        rows: item_rows,
        note,
        basis: basis
            .and_then(|w| w.note.as_deref())
            .or(c.iterations_note.as_deref())
            .map(|n| escape::message(n, 400)),
        over: (c.iterations == Some(IterationBasis::SteadyState)).then_some(STEADY_OVER),
        members_per: if members_per_instance(c) {
            "per instance"
        } else {
            "per iteration"
        },
        members,
        new: list(&c.new, c.new_omitted),
        gone: list(&c.gone, c.gone_omitted),
    }
}

/// `12 %`, `0.4 %`: a share given in percent, whole percent from 10 % on.
fn share_cell(pct_of_whole: f64) -> String {
    under_a_tenth(pct_of_whole).unwrap_or_else(|| pct(pct_of_whole))
}

/// An item's name in its cell; a kernel with the range groups that launched it below.
fn item_name(r: &RangeChange, items: Items, caps: &Caps) -> String {
    let name = esc(&r.name, caps.name_chars);
    if items != Items::Kernels || r.launched_by.is_empty() {
        return name;
    }
    let groups: Vec<String> = r
        .launched_by
        .iter()
        .map(|g| esc(g, caps.name_chars))
        .collect();
    format!("{name}<br><sub>in {}</sub>", groups.join(", "))
}

/// Whether a table's members carry their time per instance (written since they do).
fn members_per_instance(c: &RangeChanges) -> bool {
    c.changed
        .iter()
        .flat_map(|r| &r.largest_members)
        .all(|m| m.head_per_instance_ns.is_some())
}

/// A group's largest ranges, for the collapsed list below its table: `**GROUP** (128
/// ranges): NAME 74.2 µs → 80.1 µs, …` (each one instance's mean time; per iteration in a
/// comparison.json written before instances were counted); `None` for a group of one name.
fn members(r: &RangeChange, caps: &Caps, per_instance: bool) -> Option<String> {
    if r.largest_members.is_empty() {
        return None;
    }
    let each: Vec<String> = r
        .largest_members
        .iter()
        .map(|m| {
            let (base, head) = match (per_instance, m.head_per_instance_ns) {
                (true, Some(head)) => (m.base_per_instance_ns, head),
                _ => (m.base_per_iteration_ns, m.head_per_iteration_ns),
            };
            format!(
                "{} {}{NBSP}→{NBSP}{}",
                esc(&m.name, caps.name_chars),
                base.map_or("none".to_owned(), duration),
                duration(head)
            )
        })
        .collect();
    let all = r.members.unwrap_or(each.len() as u64) as usize;
    let more = all.saturating_sub(each.len());
    Some(format!(
        "**{}** ({}): {}{}",
        esc(&r.name, caps.name_chars),
        plural(all, "range", "ranges"),
        each.join(", "),
        if more > 0 {
            format!(", and {more} more")
        } else {
            String::new()
        }
    ))
}

/// How a table over the steady state says so, after its heading.
pub const STEADY_OVER: &str =
    "over the steady state (slow iterations left out, as the report's range tables leave them out)";

/// Flagged items listed per table in the line of where, at most.
const WHERE_ITEMS: usize = 3;

/// What an exposed-communication table's numbers are.
pub const EXPOSED_WHAT: &str = "Exposed communication per iteration, device by device (NCCL's kernels while no compute kernel ran on the device)";

/// Each table's flagged items (what they are, and the items, largest change first).
fn flagged_items(r: &RunComparison) -> Vec<(String, Vec<&RangeChange>)> {
    let grouped = r.host_ranges.changed.iter().any(|c| c.members.is_some());
    let (range_one, _) = Items::Ranges { grouped }.noun();
    let tables: [(Option<&RangeChanges>, String); 5] = [
        (Some(&r.host_ranges), format!("host {range_one}")),
        (r.gpu_ranges.as_ref(), format!("GPU-projected {range_one}")),
        (r.kernels.as_ref().map(|w| &w.items), "kernel".to_owned()),
        (
            r.memory_copies.as_ref().map(|w| &w.items),
            "memory copy".to_owned(),
        ),
        (
            r.exposed_communication.as_ref().map(|w| &w.items),
            "exposed communication of".to_owned(),
        ),
    ];
    tables
        .into_iter()
        .filter_map(|(table, what)| {
            let hits: Vec<&RangeChange> = table?
                .changed
                .iter()
                .filter(|c| flagged(c.verdict))
                .collect();
            (!hits.is_empty()).then_some((what, hits))
        })
        .collect()
}

/// Where the change is, in one line: each table's flagged items, largest change first, with
/// their change in % and in time per iteration; `None` when nothing is flagged.
pub fn where_line(r: &RunComparison, caps: &Caps) -> Option<String> {
    let mut parts = Vec::new();
    for (what, hits) in flagged_items(r) {
        for c in hits.iter().take(WHERE_ITEMS) {
            parts.push(format!(
                "{what} {} **{}** {} ({} per iteration)",
                esc(&c.name, caps.name_chars),
                c.verdict.as_str(),
                c.change_pct.map_or("n/a".to_owned(), signed_pct),
                ColumnUnit::of([c.change_ns]).show_change(c.change_ns)
            ));
        }
        if hits.len() > WHERE_ITEMS {
            parts.push(format!(
                "{} more {what}{}",
                hits.len() - WHERE_ITEMS,
                if hits.len() - WHERE_ITEMS == 1 {
                    ""
                } else {
                    "s"
                }
            ));
        }
    }
    (!parts.is_empty()).then(|| format!("**Where:** {}.", parts.join("; ")))
}

/// The headline's where: the largest flagged item of the first two tables that have one
/// (`range group X +7.9 % slower, kernel Y +14.9 % slower`); `None` when nothing is flagged.
pub fn where_short(r: &RunComparison, caps: &Caps) -> Option<String> {
    let parts: Vec<String> = flagged_items(r)
        .into_iter()
        .take(2)
        .map(|(what, hits)| {
            let c = hits[0];
            format!(
                "{what} {} {} **{}**",
                esc(&c.name, caps.name_chars),
                c.change_pct.map_or("n/a".to_owned(), signed_pct),
                c.verdict.as_str()
            )
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// What a kernels' or copies' table is, for its heading (a table by the capture's totals
/// says so in its note).
pub fn work_what(w: &WorkChanges, kernels: bool) -> &'static str {
    match (w.basis, kernels) {
        (WorkBasis::PerIteration, true) => {
            "GPU work per iteration, kernel by kernel (launched inside the counted iterations)"
        }
        (WorkBasis::Capture, true) => "GPU work, kernel by kernel",
        (WorkBasis::PerIteration, false) => "Memory copies per iteration, by kind",
        (WorkBasis::Capture, false) => "Memory copies, by kind",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nsys_gate_core::artifact::comparison::Member;

    fn change(name: &str, base: f64, head: f64, verdict: ChangeVerdict) -> RangeChange {
        RangeChange {
            name: name.to_owned(),
            base_per_iteration_ns: base,
            head_per_iteration_ns: head,
            change_ns: head - base,
            change_pct: Some((head / base - 1.0) * 100.0),
            base_runs: 5,
            p_value: Some(0.5),
            verdict,
            members: None,
            largest_members: Vec::new(),
            share: None,
            launched_by: Vec::new(),
        }
    }

    fn changes(changed: Vec<RangeChange>) -> RangeChanges {
        RangeChanges {
            changed,
            new: Vec::new(),
            gone: Vec::new(),
            changed_omitted: 0,
            new_omitted: 0,
            gone_omitted: 0,
            detectable_pct: None,
            iterations: None,
            iterations_note: None,
        }
    }

    #[test]
    fn a_table_with_nothing_beyond_its_noise_is_one_sentence() {
        let c = changes(vec![
            change("a", 1000.0, 1010.0, ChangeVerdict::WithinNoise),
            change("b", 500.0, 499.0, ChangeVerdict::WithinNoise),
        ]);
        let t = table(
            &c,
            Items::Ranges { grouped: true },
            None,
            None,
            &Caps::full(10),
        );
        assert!(t.rows.is_empty());
        assert_eq!(
            t.sentence,
            "none of the 2 range groups changed beyond its run-to-run noise."
        );
        assert_eq!(t.note, None);
    }

    #[test]
    fn a_table_that_sees_less_than_the_measure_says_how_much() {
        let mut c = changes(vec![
            change("gemm", 1000.0, 1040.0, ChangeVerdict::WithinNoise),
            change("relu", 500.0, 499.0, ChangeVerdict::WithinNoise),
        ]);
        c.detectable_pct = Some(9.52);
        // The host measure sees 3.4 %: one kernel alone needs more, and the sentence says so.
        let t = table(&c, Items::Kernels, None, Some(3.4), &Caps::full(10));
        assert_eq!(
            t.sentence,
            format!("none of the 2 kernels changed beyond its run-to-run noise; with their own noise, kernels see changes of about 9.5{NBSP}% or more.")
        );
        // A table that sees as well as the measure adds nothing; nor one without the figure.
        let t = table(&c, Items::Kernels, None, Some(12.0), &Caps::full(10));
        assert_eq!(
            t.sentence,
            "none of the 2 kernels changed beyond its run-to-run noise."
        );
        c.detectable_pct = None;
        let t = table(&c, Items::Kernels, None, Some(3.4), &Caps::full(10));
        assert!(!t.sentence.contains("see changes"), "{}", t.sentence);
    }

    #[test]
    fn rows_are_the_flagged_and_the_largest_largest_change_first_with_members_below() {
        let mut slow = change("layer_#.ensure", 1000.0, 1080.0, ChangeVerdict::Slower);
        slow.members = Some(128);
        slow.largest_members = vec![Member {
            name: "layer_7.ensure".into(),
            base_per_iteration_ns: Some(20.0),
            head_per_iteration_ns: 21.6,
            base_per_instance_ns: Some(320.0),
            head_per_instance_ns: Some(345.6),
        }];
        let mut changed: Vec<RangeChange> = (0..12)
            .map(|k| {
                change(
                    &format!("r{k:02}"),
                    10_000.0,
                    10_000.0 + 200.0 - 10.0 * k as f64,
                    ChangeVerdict::WithinNoise,
                )
            })
            .collect();
        // The flagged group's change (80 ns) is smaller than most: it is still shown, in its
        // place by absolute change.
        changed.push(slow);
        changed.sort_by(|x, y| y.change_ns.abs().total_cmp(&x.change_ns.abs()));
        let c = changes(changed);
        let t = table(
            &c,
            Items::Ranges { grouped: true },
            None,
            None,
            &Caps::full(10),
        );
        assert_eq!(t.rows.len(), 10);
        let names: Vec<&str> = t.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names[..3], ["r00", "r01", "r02"]);
        assert!(names[9].contains("ensure"), "{names:?}");
        assert_eq!(
            t.sentence,
            "1 slower of 13 range groups beyond their run-to-run noise."
        );
        assert_eq!(
            t.note.as_deref(),
            Some("The 3 other range groups changed less; all are in comparison.json.")
        );
        assert_eq!(t.members.len(), 1);
        assert!(t.members[0].contains("(128 ranges)"), "{}", t.members[0]);
        assert!(t.members[0].contains("and 127 more"), "{}", t.members[0]);
        // Each range's mean time of one instance (it runs once in 16 iterations), not its
        // time spread over the iterations.
        assert!(
            t.members[0]
                .replace('\u{a0}', " ")
                .contains("320 ns → 346 ns"),
            "{}",
            t.members[0]
        );
        assert_eq!(t.members_per, "per instance");
        // Kernels show the flagged ones only.
        let t = table(&c, Items::Kernels, None, None, &Caps::full(10));
        assert_eq!(t.rows.len(), 1);
        assert_eq!(
            t.note.as_deref(),
            Some("12 other kernels within their noise; all are in comparison.json.")
        );
    }
}
