//! The newest one or two points beyond the rest of a history, the way the head went: whether
//! they moved, and the provisional level of two that agree.

use super::runners::Runners;
use super::Fitted;
use crate::compare::fit::Fit;
use crate::compare::noise::{students_t, MIN_BASE_RUNS, VERDICT_CONFIDENCE};
use statrs::distribution::ContinuousCDF;

/// The newest one or two points beyond the rest of the history, the way the head went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Newest {
    /// The alike point of the first of them.
    pub since: usize,
    /// 1 or 2.
    pub runs: usize,
    /// Their mean distance from what the rest predicts at their place (a logarithm).
    pub change: f64,
    /// Two that agree: the head was judged against them.
    pub provisional: bool,
}

/// What the newest two points, when they agree, predict for the head.
pub(super) struct Provisional {
    pub(super) level: f64,
    pub(super) leverage: f64,
    pub(super) spread: f64,
    pub(super) df: f64,
}

/// The newest one or two values against the fit of the others (`toward`: the head's distance
/// from the prediction, whose sign is the way that counts): beyond its 95 % prediction
/// interval that way (and by the noise floor). Two that are, and agree with each other
/// within the noise, give a provisional level.
pub(super) fn newest_moved(
    fitted: &Fitted,
    groups: &Runners,
    toward: f64,
    least: f64,
    floor: f64,
) -> Option<(Newest, Option<Provisional>)> {
    let n = fitted.keep.len();
    if n < MIN_BASE_RUNS + 2 || toward == 0.0 {
        return None;
    }
    let (last, before) = (n - 1, n - 2);
    let mut keep = fitted.keep.clone();
    keep[last] = false;
    keep[before] = false;
    if fitted.with_runners && !groups.has_head_point(&keep) {
        return None;
    }
    let used: Vec<usize> = (0..n).filter(|&k| keep[k]).collect();
    if used.len() < MIN_BASE_RUNS {
        return None;
    }
    let fit = Fit::new(
        &used
            .iter()
            .map(|&k| fitted.scaled[k].clone())
            .collect::<Vec<_>>(),
        &used.iter().map(|&k| fitted.scaled_y[k]).collect::<Vec<_>>(),
    )?;
    let df = used.len() as f64 - fit.rank as f64;
    if df < 2.0 {
        return None;
    }
    let spread = (fit.rss() / df).sqrt();
    let s = spread.max(least);
    let critical = students_t(df).inverse_cdf(1.0 - (1.0 - VERDICT_CONFIDENCE) / 2.0);
    let y = |k: usize| fitted.scaled_y[k] / fitted.weights[k];
    let deviation = |k: usize| {
        let d = y(k) - fit.predict(&fitted.rows[k]);
        let sd = s / fitted.weights[k] * (1.0 + fit.leverage(&fitted.scaled[k])).sqrt();
        (d, sd)
    };
    let beyond = |(d, sd): (f64, f64)| {
        d.signum() == toward.signum() && d.abs() > critical * sd && d.abs() >= (1.0 + floor).ln()
    };
    let (d1, sd1) = deviation(last);
    if !beyond((d1, sd1)) {
        return None;
    }
    let (d0, sd0) = deviation(before);
    if beyond((d0, sd0)) && (d1 - d0).abs() <= critical * (sd0 * sd0 + sd1 * sd1).sqrt() {
        let change = 0.5 * (d0 + d1);
        let w = |k: usize| fitted.weights[k].powi(-2);
        // The level is the two's mean moved along the rest's shape from their place to the
        // head's: its variance is a mean of two plus what the rest's fit adds for that move
        // (nothing for one level). The two's own spread about their mean (1 degree of freedom)
        // joins the rest's.
        let moved: Vec<f64> = (0..fitted.head.len())
            .map(|c| fitted.head[c] - 0.5 * (fitted.rows[last][c] + fitted.rows[before][c]))
            .collect();
        let own: f64 = [(last, d1), (before, d0)]
            .iter()
            .map(|&(k, d)| ((d - change) * fitted.weights[k]).powi(2))
            .sum();
        return Some((
            Newest {
                since: before,
                runs: 2,
                change,
                provisional: true,
            },
            Some(Provisional {
                level: fit.predict(&fitted.head) + change,
                leverage: fit.leverage(&moved) + 0.25 * (w(last) + w(before)),
                spread: ((fit.rss() + own) / (df + 1.0)).sqrt(),
                df: df + 1.0,
            }),
        ));
    }
    Some((
        Newest {
            since: last,
            runs: 1,
            change: d1,
            provisional: false,
        },
        None,
    ))
}
