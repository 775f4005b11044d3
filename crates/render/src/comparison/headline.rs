//! The comparison's title and each key's headline: the verdict in a few words, the measures
//! beyond the noise, where the base runs come from, and the conditions that differ.

use super::items::where_short;
use super::words::{self, commit, differ, pct, signed_pct};
use crate::escape::{self, inline_shortened as esc};
use crate::format::{first_and_more, plural};
use crate::limit::Caps;
use crate::CiWords;
use nsys_gate_core::artifact::comparison::{
    BaselineKind, ChangeVerdict, Comparison, Drift, Measure, NewestMoved, RangeChanges,
    RunComparison, RunRef,
};

/// The comparison in a few words for the title: how many keys are slower or faster than the
/// base branch's noise, else that all are within it, else that the noise is unknown.
pub(super) fn title(c: &Comparison) -> String {
    let host = |v: ChangeVerdict| {
        c.runs
            .iter()
            .filter(|r| r.measures[0].verdict == Some(v))
            .count()
    };
    let (slower, faster) = (host(ChangeVerdict::Slower), host(ChangeVerdict::Faster));
    let mut parts = Vec::new();
    if slower > 0 {
        parts.push(format!("🔺 {slower} slower"));
    }
    if faster > 0 {
        parts.push(format!("🔻 {faster} faster"));
    }
    if parts.is_empty() {
        parts.push(
            if c.runs.is_empty() {
                "no baseline"
            } else if host(ChangeVerdict::WithinNoise) > 0 {
                "within noise"
            } else {
                "noise unknown"
            }
            .to_owned(),
        );
        // "within noise" while a table below says `slower` read as a contradiction: the
        // tables' verdicts follow (`within noise · 1 range group slower`).
        let mut title = format!(" · {}", parts.join(", "));
        for item in items_beyond_noise(c) {
            title.push_str(" · ");
            title.push_str(&item);
        }
        return title;
    }
    format!(" · {}", parts.join(", "))
}

/// The range groups (host or GPU-projected, each group once), kernels and memory copies whose
/// verdict is `slower` or `faster`, counted for the title: `1 range group slower`,
/// `2 kernels faster`.
pub(super) fn items_beyond_noise(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    for verdict in [ChangeVerdict::Slower, ChangeVerdict::Faster] {
        let word = if verdict == ChangeVerdict::Slower {
            "slower"
        } else {
            "faster"
        };
        let count = |table: &dyn Fn(&RunComparison) -> Vec<&RangeChanges>| -> usize {
            c.runs
                .iter()
                .map(|r| {
                    table(r)
                        .iter()
                        .flat_map(|t| t.changed.iter())
                        .filter(|x| x.verdict == verdict)
                        .map(|x| x.name.as_str())
                        .collect::<std::collections::BTreeSet<_>>()
                        .len()
                })
                .sum()
        };
        let groups = count(&|r| {
            std::iter::once(&r.host_ranges)
                .chain(r.gpu_ranges.as_ref())
                .collect()
        });
        let kernels = count(&|r| r.kernels.as_ref().map(|k| &k.items).into_iter().collect());
        let copies = count(&|r| {
            r.memory_copies
                .as_ref()
                .map(|k| &k.items)
                .into_iter()
                .collect()
        });
        // With `--exact-names` the tables hold ranges, not groups.
        let (group, groups_word) = if c.method.ranges_grouped == Some(false) {
            ("range", "ranges")
        } else {
            ("range group", "range groups")
        };
        for (n, one, many) in [
            (groups, group, groups_word),
            (kernels, "kernel", "kernels"),
            (copies, "memory copy", "memory copies"),
        ] {
            if n > 0 {
                out.push(format!("{} {word}", plural(n, one, many)));
            }
        }
    }
    out
}

pub(super) fn run_name(r: &RunRef, caps: &Caps) -> String {
    let mut name = format!("**{}**", esc(&r.profile_name, caps.name_chars));
    if let Some(t) = r.target.as_deref().filter(|t| *t != r.profile_name) {
        name.push_str(&format!(" (target {})", esc(t, caps.name_chars)));
    }
    name
}

pub(super) fn source(c: &Comparison, caps: &Caps, words: &CiWords) -> String {
    let b = &c.baseline;
    match b.kind {
        BaselineKind::Path => format!(
            "the analyses in {}",
            first_and_more(b.paths.iter().map(|p| esc(p, caps.name_chars.max(300))), 5)
        ),
        BaselineKind::Auto => {
            let runs = b.ci_runs.len();
            // The workflow on GitHub, the job on GitLab: whichever the history was read from.
            match (&b.branch, b.workflow.as_ref().or(b.job.as_ref())) {
                (Some(branch), Some(place)) => format!(
                    "the base branch {}: its {} newest successful push {}{}",
                    escape::code(branch),
                    runs,
                    if runs == 1 { words.run } else { words.runs },
                    words
                        .runs_place
                        .replace("{place}", &escape::code(place))
                        .replace(
                            "{artifact}",
                            &escape::code(b.artifact.as_deref().unwrap_or("?"))
                        )
                ),
                _ => "the base branch's artifacts (not found)".to_owned(),
            }
        }
    }
}

/// `the last 10 base runs` (or `the one base run`), for sentences.
pub(super) fn history_name(r: &RunComparison) -> String {
    match r.history.used.len() {
        0 => "the newest base run (other conditions)".to_owned(),
        1 => "the one base run".to_owned(),
        n => format!("the last {n} base runs"),
    }
}

/// `, which see changes of about 3.4 % or more`: what a history could have seen, beside
/// `within noise`.
pub(super) fn could_see(m: &Measure) -> String {
    m.detectable_pct
        .map(|d| format!(", which see changes of about {} or more", pct(d)))
        .unwrap_or_default()
}

/// The branch's name in sentences: `` `main` `` or `the base branch`.
pub(super) fn branch_name(c: &Comparison) -> String {
    c.baseline
        .branch
        .as_deref()
        .map(escape::code)
        .unwrap_or_else(|| "the base branch".to_owned())
}

/// The history's drift in words, for the headline: `` `main` has drifted +9.8 % over its last
/// 12 runs, since `abc1234` ``.
pub(super) fn drift_words(d: &Drift, branch: &str, commit_prefix: Option<&str>) -> String {
    format!(
        "{branch} has drifted {} over its last {}, since {} ({})",
        signed_pct(d.change_pct),
        plural(d.runs as usize, "run", "runs"),
        commit(d.since.git_commit.as_deref(), commit_prefix),
        d.measure.label()
    )
}

pub(super) fn headline(r: &RunComparison, c: &Comparison, caps: &Caps) -> String {
    let min_runs = c.method.min_base_runs;
    let mut line = match r.measures[0].verdict {
        Some(ChangeVerdict::Slower) => "🔺 ",
        Some(ChangeVerdict::Faster) => "🔻 ",
        _ => "",
    }
    .to_owned();
    line.push_str(&run_name(&r.heads[0], caps));
    if let Some(leg) = &r.key.leg {
        line.push_str(&format!(" · {}", esc(leg, caps.name_chars)));
    }
    line.push_str(": ");
    if !r.like_for_like {
        line.push_str(&format!(
            "⚠️ **not like for like** ({}); ",
            differ(&differing(r))
        ));
    }
    let host = &r.measures[0];
    line.push_str(&match (host.change_pct, host.verdict) {
        (Some(change), Some(verdict)) => format!(
            "host inclusive {} {}",
            signed_pct(change),
            verdict_words(verdict, host, r, min_runs)
        ),
        _ => format!(
            "host inclusive not compared ({})",
            escape::inline(host.note.as_deref().unwrap_or("no data"))
        ),
    });
    if let Some(gpu) = r.measures.get(1).filter(|m| m.verdict.is_some()) {
        line.push_str(&format!(
            "; GPU projected {} {}",
            gpu.change_pct.map(signed_pct).unwrap_or_default(),
            verdict_words(gpu.verdict.expect("filtered"), gpu, r, min_runs)
        ));
    }
    if let Some(place) = where_short(r, caps) {
        line.push_str(&format!("; where: {place}"));
    }
    if let Some(point) = &r.history.change_point {
        line.push_str(&format!(
            "; {} is {} {} since {} ({})",
            branch_name(c),
            pct(point.change_pct),
            if point.change_pct < 0.0 {
                "faster"
            } else {
                "slower"
            },
            commit(point.git_commit.as_deref(), None),
            point.measure.label()
        ));
    }
    if let Some(drift) = &r.history.drift {
        line.push_str(&format!(
            "; {}: not this change's doing",
            drift_words(drift, &branch_name(c), None)
        ));
    }
    if let Some(moved) = &r.history.newest_moved {
        line.push_str(&format!("; {}", newest_words(moved, &branch_name(c))));
    }
    if let Some(runner) = r.history.head_runner.as_ref().filter(|h| h.barely_known) {
        line.push_str(&format!(
            "; the head's runner {} ran {} of the base runs used{}: judged against every runner's level and spread",
            escape::code(&runner.name),
            runner.points,
            match runner.left_out {
                0 => String::new(),
                1 => " (1 more was left out)".to_owned(),
                n => format!(" ({n} more were left out)"),
            }
        ));
    }
    line.push('.');
    line
}

/// `` `main`'s newest run was also 5.1 % slower: this change may already be on `main` ``.
pub(super) fn newest_words(moved: &NewestMoved, branch: &str) -> String {
    let way = if moved.change_pct < 0.0 {
        "faster"
    } else {
        "slower"
    };
    let runs = if moved.runs == 1 {
        "newest run was".to_owned()
    } else {
        format!("newest {} runs were", moved.runs)
    };
    format!(
        "{branch}'s {runs} also {} {way}: this change may already be on {branch}{}",
        pct(moved.change_pct),
        if moved.provisional_level {
            " (the head is judged against them)"
        } else {
            ""
        }
    )
}

/// `**slower** (beyond the noise of the last 10 base runs)`, `within noise`, `noise unknown (1
/// base run)`.
pub(super) fn verdict_words(
    verdict: ChangeVerdict,
    m: &Measure,
    r: &RunComparison,
    min_runs: u64,
) -> String {
    let usable = r
        .history
        .used
        .len()
        .min(m.base.as_ref().map_or(0, |b| b.runs) as usize);
    match verdict {
        ChangeVerdict::Slower | ChangeVerdict::Faster => format!(
            "**{}** (beyond the run-to-run noise of {})",
            verdict.as_str(),
            history_name(r)
        ),
        ChangeVerdict::WithinNoise => {
            format!("within noise ({}{})", history_name(r), could_see(m))
        }
        ChangeVerdict::NoiseUnknown => format!(
            "— **noise unknown** ({usable} usable base {}; {min_runs} needed)",
            if usable == 1 { "run" } else { "runs" },
        ),
    }
}

pub(super) fn differing(r: &RunComparison) -> Vec<String> {
    r.conditions
        .iter()
        .filter(|c| c.judged && c.differs)
        .map(|c| words::condition(&c.name))
        .collect()
}
