//! The comparison's tables: the measures, the conditions, the ranges, the GPU work and the
//! base runs of the history. Every cell computed, formatted and escaped here.

use serde::Serialize;

use super::words::{commit, date, differ, range_pct, signed_pct};
use crate::artifact::comparison::{
    BaseRun, ChangeVerdict, Condition, ConditionName, GpuWorkChanges, History, LeftOutReason,
    Measure, RangeChanges, RangeOnly, WorkChange,
};
use crate::artifact::kernel_base_name;
use crate::render::escape::{self, inline_shortened as esc};
use crate::render::format::{column, duration, plural, ColumnUnit, NBSP};

/// [`NBSP`] as a pattern's replacement.
const NBSP_STR: &str = "\u{a0}";
use crate::render::limit::Caps;

#[derive(Debug, Serialize)]
pub struct MeasureRow {
    pub name: &'static str,
    /// The history's level and how many runs.
    pub base: String,
    pub head: String,
    pub change: String,
    /// Where a run of unchanged code lands (95 %), as changes.
    pub expected: String,
    pub verdict: String,
}

#[derive(Debug, Serialize)]
pub struct ConditionRow {
    pub name: String,
    pub base: String,
    pub head: String,
    /// `differs`, `same`, or `shown, not judged`.
    pub status: &'static str,
}

#[derive(Debug, Serialize)]
pub struct RangeTable {
    pub rows: Vec<RangeRow>,
    /// Rows left out, when the table was cut.
    pub note: Option<String>,
    /// `name (time per iteration)` of ranges only head has, and only base has.
    pub new: Option<String>,
    pub gone: Option<String>,
    /// How many ranges are `slower` or `faster`, in words.
    pub flagged: String,
}

#[derive(Debug, Serialize)]
pub struct RangeRow {
    pub name: String,
    pub base: String,
    pub head: String,
    pub change: String,
    pub change_pct: String,
    pub verdict: &'static str,
}

#[derive(Debug, Serialize)]
pub struct WorkRow {
    pub kind: &'static str,
    pub name: String,
    pub base: String,
    pub head: String,
}

/// One base run of the history, in its collapsed table.
#[derive(Debug, Serialize)]
pub struct BaseRunRow {
    pub commit: String,
    pub date: String,
    pub host: String,
    pub gpu: String,
    /// `left out: …` for the runs not used.
    pub note: String,
}

/// The measures' rows: the history's level and the head in one unit (the largest value's).
pub fn measure_rows(measures: &[Measure]) -> Vec<MeasureRow> {
    let values: Vec<f64> = measures
        .iter()
        .flat_map(|m| {
            [
                m.base.as_ref().map_or(f64::NAN, |b| b.level_ns),
                m.head.as_ref().map_or(f64::NAN, |h| h.value_ns),
            ]
        })
        .collect();
    let shown = column(&values);
    measures
        .iter()
        .zip(shown.chunks(2))
        .map(|(m, pair)| MeasureRow {
            name: m.name.label(),
            base: m.base.as_ref().map_or("none".to_owned(), |b| {
                let runs = plural(b.runs as usize, "run", "runs").replace(' ', NBSP_STR);
                format!("{}{NBSP}({runs})", pair[0])
            }),
            head: m.head.as_ref().map_or("none".to_owned(), |h| {
                if h.runs > 1 {
                    format!("{}{NBSP}({}{NBSP}runs)", pair[1], h.runs)
                } else {
                    pair[1].clone()
                }
            }),
            change: m.change_pct.map_or("n/a".to_owned(), signed_pct),
            expected: match m.interval_pct {
                Some(i) => range_pct(i),
                None if m.change_pct.is_some() => "unknown".to_owned(),
                None => "n/a".to_owned(),
            },
            verdict: m
                .verdict
                .map_or("not\u{a0}compared", verdict_cell)
                .to_owned(),
        })
        .collect()
}

/// A verdict in a table cell: `slower` and `faster`, the verdicts beyond the noise, in bold;
/// the others' words held together by a no-break space (a cell never wraps).
fn verdict_cell(v: ChangeVerdict) -> &'static str {
    match v {
        ChangeVerdict::Slower => "**slower**",
        ChangeVerdict::Faster => "**faster**",
        ChangeVerdict::WithinNoise => "within\u{a0}noise",
        ChangeVerdict::NoiseUnknown => "noise\u{a0}unknown",
    }
}

/// A recorded value for a table cell: a string as it is, anything else as compact JSON.
fn shown_value(v: &serde_json::Value, caps: &Caps) -> String {
    match v {
        serde_json::Value::Null => "not recorded".to_owned(),
        serde_json::Value::String(s) => esc(s, caps.name_chars),
        other => esc(&other.to_string(), caps.message_chars.min(400)),
    }
}

/// A condition's recorded value in words: the device with its GPU names, the data source
/// with its record count and the start of the record ids' digest, a commit short, anything
/// else as it is.
fn condition_text(
    name: &ConditionName,
    v: &serde_json::Value,
    caps: &Caps,
    repo_url: Option<&str>,
) -> String {
    match name {
        ConditionName::Device => {
            let mut text = shown_value(&v["device"], caps);
            if let Some(gpus) = v["gpus"].as_array().filter(|g| !g.is_empty()) {
                let names: Vec<String> = gpus.iter().map(|g| shown_value(g, caps)).collect();
                text.push_str(&format!(" ({})", names.join(", ")));
            }
            text
        }
        ConditionName::DataSource => {
            let mut text = shown_value(&v["data_source"], caps);
            if let Some(n) = v["record_count"].as_u64() {
                text.push_str(&format!("; {n} records"));
            }
            if let Some(sha) = v["record_ids_sha256"].as_str() {
                let short: String = sha.chars().take(12).collect();
                text.push_str(&format!("; ids SHA-256 {}…", esc(&short, 12)));
            }
            text
        }
        ConditionName::GitCommit => commit(v.as_str(), repo_url),
        _ => shown_value(v, caps),
    }
}

/// The conditions table: every judged condition that differs, then the ones shown but never
/// judged.
pub fn condition_rows(
    conditions: &[Condition],
    caps: &Caps,
    repo_url: Option<&str>,
) -> Vec<ConditionRow> {
    let row = |c: &Condition| ConditionRow {
        name: super::words::condition(&c.name),
        base: condition_text(&c.name, &c.base, caps, repo_url),
        head: condition_text(&c.name, &c.head, caps, repo_url),
        status: if !c.judged {
            "shown, not judged"
        } else if c.differs {
            "differs"
        } else {
            "same"
        },
    };
    conditions
        .iter()
        .filter(|c| c.judged && c.differs)
        .chain(conditions.iter().filter(|c| !c.judged))
        .map(row)
        .collect()
}

/// The GPU work's rows: kernels, then memory copies; base and head totals in one unit.
pub fn work_rows(w: &GpuWorkChanges, caps: &Caps) -> Vec<WorkRow> {
    let shown: Vec<(&'static str, &WorkChange)> = w
        .kernels
        .iter()
        .take(caps.top)
        .map(|c| ("kernel", c))
        .chain(
            w.memory_copies
                .iter()
                .take(caps.top)
                .map(|c| ("memory copy", c)),
        )
        .collect();
    let totals: Vec<f64> = shown
        .iter()
        .flat_map(|(_, c)| [c.base_total_ns, c.head_total_ns])
        .map(|t| t.unwrap_or(f64::NAN))
        .collect();
    let totals = column(&totals);
    // Kernels by their base name, as the report names them, unless two shown share one.
    fn base(c: &WorkChange) -> &str {
        kernel_base_name(&c.name)
    }
    let shared = |name: &str| {
        w.kernels
            .iter()
            .take(caps.top)
            .filter(|c| base(c) == name)
            .count()
            > 1
    };
    let side = |t: Option<f64>, text: &String| t.map_or("none".to_owned(), |_| text.clone());
    shown
        .iter()
        .zip(totals.chunks(2))
        .map(|((kind, c), pair)| {
            let name = match *kind {
                "kernel" if !shared(base(c)) => base(c),
                _ => &c.name,
            };
            WorkRow {
                kind,
                name: esc(name, caps.name_chars),
                base: side(c.base_total_ns, &pair[0]),
                head: side(c.head_total_ns, &pair[1]),
            }
        })
        .collect()
}

/// A range table: the ranges flagged `slower` or `faster` first, then the largest changes.
pub fn range_table(c: &RangeChanges, caps: &Caps) -> RangeTable {
    let flagged = |v: ChangeVerdict| matches!(v, ChangeVerdict::Slower | ChangeVerdict::Faster);
    let mut order: Vec<usize> = (0..c.changed.len()).collect();
    // Stable: the changes keep their order (largest first) within each part.
    order.sort_by_key(|&i| !flagged(c.changed[i].verdict));
    let shown: Vec<_> = order
        .iter()
        .take(caps.top)
        .map(|&i| &c.changed[i])
        .collect();
    // Base and head in one unit, the change in its own: one unit per column.
    let sides: Vec<f64> = shown
        .iter()
        .flat_map(|r| [r.base_per_iteration_ns, r.head_per_iteration_ns])
        .collect();
    let sides = column(&sides);
    // The change in the unit of its own column, `0` under the column's resolution.
    let change_unit = ColumnUnit::of(shown.iter().map(|r| r.change_ns));
    let rows: Vec<RangeRow> = shown
        .iter()
        .zip(sides.chunks(2))
        .map(|(r, pair)| RangeRow {
            name: esc(&r.name, caps.name_chars),
            base: pair[0].clone(),
            head: pair[1].clone(),
            change: change_unit.show_change(r.change_ns),
            change_pct: r.change_pct.map_or("n/a".to_owned(), signed_pct),
            verdict: verdict_cell(r.verdict),
        })
        .collect();
    // comparison.json lists at most so many (`*_omitted` counts the rest).
    let in_both = c.changed.len() + c.changed_omitted as usize;
    let note = (rows.len() < in_both).then(|| match c.changed_omitted {
        0 => format!(
            "The {} other ranges in both changed less; all are in comparison.json.",
            in_both - rows.len()
        ),
        _ => format!(
            "The {} other ranges in both changed less; comparison.json lists the largest {} of them.",
            in_both - rows.len(),
            c.changed.len() - rows.len()
        ),
    });
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
    let count = |v: ChangeVerdict| c.changed.iter().filter(|r| r.verdict == v).count();
    let (slower, faster) = (count(ChangeVerdict::Slower), count(ChangeVerdict::Faster));
    let flagged = match (slower, faster, in_both) {
        (_, _, 0) => String::new(),
        // Those comparison.json leaves out have the verdicts of those it lists.
        (0, 0, _) if count(ChangeVerdict::NoiseUnknown) == c.changed.len() => {
            "No range has a verdict: the run-to-run noise is unknown.".to_owned()
        }
        (0, 0, n) => format!("None of the {n} ranges changed beyond its run-to-run noise."),
        (s, f, n) => format!(
            "{s} slower and {f} faster of {n} ranges, beyond their run-to-run noise (false-discovery rate 5 % over the ranges)."
        ),
    };
    RangeTable {
        rows,
        note,
        new: list(&c.new, c.new_omitted),
        gone: list(&c.gone, c.gone_omitted),
        flagged,
    }
}

/// The history's base runs, oldest first, used and left out together, each with its values.
pub fn base_run_rows(h: &History, repo_url: Option<&str>) -> Vec<BaseRunRow> {
    let mut runs: Vec<(&BaseRun, String)> = h
        .used
        .iter()
        .map(|r| (r, String::new()))
        .chain(h.left_out.iter().map(|l| {
            let why = match l.reason {
                LeftOutReason::BeforeChangePoint => "left out: before the level shift".to_owned(),
                LeftOutReason::Outlier => format!(
                    "left out: an outlier of its {} ({})",
                    l.measure.map_or("time", |m| m.label()),
                    l.change_pct.map(signed_pct).unwrap_or_default()
                ),
                LeftOutReason::Invalid => format!(
                    "left out: {}",
                    escape::inline(l.why.as_deref().unwrap_or("impossible numbers"))
                ),
                LeftOutReason::Conditions => {
                    let labels: Vec<String> =
                        l.differs.iter().map(super::words::condition).collect();
                    format!("left out: {}", differ(&labels))
                }
            };
            (&l.run, why)
        }))
        .collect();
    runs.sort_by_key(|(r, _)| r.position);
    let host = ColumnUnit::of(runs.iter().filter_map(|(r, _)| r.host_inclusive_ns));
    let gpu = ColumnUnit::of(runs.iter().filter_map(|(r, _)| r.gpu_projected_ns));
    runs.into_iter()
        .map(|(r, note)| BaseRunRow {
            commit: commit(r.git_commit.as_deref(), repo_url),
            date: date(r.created_at.as_deref()),
            host: r
                .host_inclusive_ns
                .map_or("none".to_owned(), |v| host.show(v)),
            gpu: r
                .gpu_projected_ns
                .map_or("none".to_owned(), |v| gpu.show(v)),
            note,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(name: &str, base: f64, head: f64) -> WorkChange {
        WorkChange {
            name: name.to_owned(),
            base_total_ns: Some(base),
            head_total_ns: Some(head),
        }
    }

    #[test]
    fn kernels_go_by_their_base_name_unless_two_shown_share_it() {
        let w = GpuWorkChanges {
            kernels: vec![
                change(
                    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
                    2e6,
                    3e6,
                ),
                change("void conv2d_fprop_kernel<float, 64>(Params)", 1e6, 1e6),
                change("void conv2d_fprop_kernel<half, 32>(Params)", 1e6, 1e6),
            ],
            memory_copies: vec![change("Host-to-Device (pageable)", 1e5, 1e5)],
            kernels_omitted: 0,
            memory_copies_omitted: 0,
        };
        let rows = work_rows(&w, &Caps::full(3));
        let names: Vec<(&str, &str)> = rows.iter().map(|r| (r.kind, r.name.as_str())).collect();
        assert_eq!(
            names,
            [
                ("kernel", "vectorized\\_elementwise\\_kernel"),
                (
                    "kernel",
                    "void conv2d\\_fprop\\_kernel&lt;float, 64&gt;(Params)"
                ),
                (
                    "kernel",
                    "void conv2d\\_fprop\\_kernel&lt;half, 32&gt;(Params)"
                ),
                ("memory copy", "Host-to-Device (pageable)"),
            ]
        );
    }
}
