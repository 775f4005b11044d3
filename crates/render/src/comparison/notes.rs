//! The lines under a key's headline: the base branch's history in one line, the base runs left
//! out and why, driver and clock changes between the runs, and the change within one pair of
//! runs.

use super::words::{self, commit, range_pct, signed_pct, spread};
use crate::chart;
use crate::escape::{self, inline_shortened as esc};
use crate::format::{duration, first_and_more, plural};
use nsys_gate_core::artifact::comparison::{ConditionName, LeftOut, LeftOutReason, RunComparison};

/// `Base branch, 10 runs (oldest to newest) ▃▄▃▅▄▃▄▄▃▄, head ▇: 9.80 ms to 10.02 ms,
/// run-to-run sd 0.8 %; head 10.4 ms.`
pub(super) fn history_line(r: &RunComparison, spread_floor_pct: Option<f64>) -> String {
    let host = &r.measures[0];
    let values: Vec<f64> = r
        .history
        .used
        .iter()
        .filter_map(|b| b.host_inclusive_ns)
        .collect();
    let head = host.head.as_ref().map(|h| h.value_ns);
    let spread = spread(host, spread_floor_pct).filter(|_| !values.is_empty());
    let Some(spread) = spread else {
        return "No base run has the head's conditions: there is no history to compare with."
            .to_owned();
    };
    let mut all = values.clone();
    all.extend(head);
    let low = all.iter().copied().fold(f64::INFINITY, f64::min);
    let top = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let line = chart::sparkline(&values, low, top);
    let head_bar = head
        .map(|h| chart::sparkline(&[h], low, top))
        .unwrap_or_default();
    format!(
        "Host inclusive, base branch, {} (oldest to newest) `{line}`, head `{head_bar}`: {spread}; head {}.",
        plural(values.len(), "run", "runs"),
        head.map_or("none".to_owned(), duration)
    )
}

pub(super) fn left_out(r: &RunComparison) -> Option<String> {
    let mut parts = Vec::new();
    let by_conditions: Vec<String> = r
        .history
        .left_out
        .iter()
        .filter(|l| l.reason == LeftOutReason::Conditions)
        .map(|l| {
            l.differs
                .iter()
                .map(words::condition)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    if !by_conditions.is_empty() {
        let mut kinds = by_conditions.clone();
        kinds.sort();
        kinds.dedup();
        parts.push(format!(
            "{} left out of the history: {} {} from the head's.",
            is_are(by_conditions.len()),
            kinds.join("; "),
            if kinds.len() == 1 && !kinds[0].contains(',') {
                "differs"
            } else {
                "differ"
            }
        ));
    }
    parts.extend(driver_change(r));
    parts.extend(clock_change(r));
    let outliers: Vec<&LeftOut> = r
        .history
        .left_out
        .iter()
        .filter(|l| l.reason == LeftOutReason::Outlier)
        .collect();
    if !outliers.is_empty() {
        let each: Vec<String> = outliers
            .iter()
            .map(|l| {
                format!(
                    "{} ({} {})",
                    commit(l.run.git_commit.as_deref(), None),
                    l.measure.map_or("time", |m| m.label()),
                    l.change_pct.map(signed_pct).unwrap_or_default()
                )
            })
            .collect();
        parts.push(format!(
            "{} left out as far from the rest of the history (a hiccup, not a level): {}.",
            is_are(outliers.len()),
            first_and_more(each.into_iter(), 5)
        ));
    }
    let invalid: Vec<&LeftOut> = r
        .history
        .left_out
        .iter()
        .filter(|l| l.reason == LeftOutReason::Invalid)
        .collect();
    if !invalid.is_empty() {
        let each: Vec<String> = invalid
            .iter()
            .map(|l| {
                format!(
                    "{} ({})",
                    commit(l.run.git_commit.as_deref(), None),
                    escape::inline(l.why.as_deref().unwrap_or("impossible numbers"))
                )
            })
            .collect();
        parts.push(format!(
            "{} left out because {} numbers cannot be true: {}.",
            is_are(invalid.len()),
            if invalid.len() == 1 { "its" } else { "their" },
            first_and_more(each.into_iter(), 5)
        ));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// When base runs were left out because their driver differs from the head's: `The runner's
/// driver changed (550.54 -> 570.172) 4 runs ago; 4 base runs have this driver.`, the runs
/// counted from the newest base run with another driver.
pub(super) fn driver_change(r: &RunComparison) -> Option<String> {
    let head = r
        .conditions
        .iter()
        .find(|c| c.name == ConditionName::Driver)?
        .head
        .as_str()?;
    let before = r
        .history
        .left_out
        .iter()
        .filter(|l| {
            l.reason == LeftOutReason::Conditions && l.differs.contains(&ConditionName::Driver)
        })
        .max_by_key(|l| l.run.position)?;
    let old = before.run.driver_version.as_deref()?;
    let all = r
        .history
        .used
        .iter()
        .chain(r.history.left_out.iter().map(|l| &l.run));
    let newer = all
        .clone()
        .filter(|b| b.position > before.run.position)
        .count();
    let same = all
        .filter(|b| b.driver_version.as_deref() == Some(head))
        .count();
    let when = match newer {
        0 => "with this run".to_owned(),
        1 => "1 run ago".to_owned(),
        n => format!("{n} runs ago"),
    };
    Some(format!(
        "The runner's driver changed ({} -> {}) {when}; {} this driver.",
        esc(old, 40),
        esc(head, 40),
        match same {
            0 => "no base run has".to_owned(),
            1 => "1 base run has".to_owned(),
            n => format!("{n} base runs have"),
        }
    ))
}

/// When base runs were left out because their SM clock differs from the head's: `2 base runs
/// ran at 1,410 MHz, this one at 1,980 MHz.` (their lowest and highest clocks when they
/// differ: `1,120-1,140 MHz`).
pub(super) fn clock_change(r: &RunComparison) -> Option<String> {
    let head = r
        .conditions
        .iter()
        .find(|c| c.name == ConditionName::Clock)?
        .head
        .as_u64()?;
    let clocks: Vec<u64> = r
        .history
        .left_out
        .iter()
        .filter(|l| {
            l.reason == LeftOutReason::Conditions && l.differs.contains(&ConditionName::Clock)
        })
        .filter_map(|l| l.run.clock_mhz)
        .collect();
    let (low, high) = (clocks.iter().min()?, clocks.iter().max()?);
    let mhz = |v: u64| nsys_gate_core::units::thousands(v as usize);
    let ran = if low == high {
        mhz(*low)
    } else {
        format!("{}-{}", mhz(*low), mhz(*high))
    };
    Some(format!(
        "{} at {ran} MHz, this one at {} MHz.",
        match clocks.len() {
            1 => "1 base run ran".to_owned(),
            n => format!("{n} base runs ran"),
        },
        mhz(head)
    ))
}

/// `1 base run is`, `3 base runs are`.
pub(super) fn is_are(n: usize) -> String {
    if n == 1 {
        "1 base run is".to_owned()
    } else {
        format!("{n} base runs are")
    }
}

/// The levels of a history: its used points' highest segment, plus one.
pub(super) fn segments(r: &RunComparison) -> u64 {
    r.history
        .used
        .iter()
        .map(|u| u.segment)
        .max()
        .map_or(1, |s| s + 1)
}

/// The change within the pair of the head run and the newest base run, named for what it is.
pub(super) fn within_pair(r: &RunComparison) -> Option<String> {
    let parts: Vec<String> = r
        .measures
        .iter()
        .filter_map(|m| {
            let p = m.within_pair.as_ref()?;
            Some(match p.interval_pct {
                Some(i) => format!(
                    "{} {} (95 % within this pair: {})",
                    m.name.label(),
                    signed_pct(p.change_pct),
                    range_pct(i)
                ),
                None => format!("{} {}", m.name.label(), signed_pct(p.change_pct)),
            })
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "Within this pair of runs (the head and the newest base run, iteration by iteration): {}. That interval holds the noise inside the two runs only, not the noise between runs: it is not a verdict.",
            parts.join("; ")
        )
    })
}
