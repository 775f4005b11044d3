//! Ordinary least squares for the history's small models: a level, levels before and after
//! a shift, a trend, each with the runners' offsets. A design has a few columns (at most a
//! dozen) and a row per history point (at most a few hundred), so the normal equations are
//! solved directly; a column that the others already give (a runner with no point left, a
//! segment emptied by the outliers taken out) is dropped, as a rank-deficient fit drops it.

/// A fitted model.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// The coefficient of each column of the design; 0 for a dropped column.
    pub beta: Vec<f64>,
    /// Observed less fitted, row by row.
    pub residuals: Vec<f64>,
    /// The columns kept (independent of the ones before them).
    pub rank: usize,
    /// `(X'X)^-1` over the kept columns, indexed by kept column.
    inverse: Vec<Vec<f64>>,
    /// The kept columns' indexes into the design.
    kept: Vec<usize>,
}

/// How far a column may be explained by the columns before it and still count as its own:
/// the part of it they do not explain must hold at least this share of its length.
const INDEPENDENT: f64 = 1e-9;

impl Fit {
    /// The least-squares fit of `y` on the rows of a design (each row the same length, at
    /// least one column); `None` when there are no rows.
    pub fn new(rows: &[Vec<f64>], y: &[f64]) -> Option<Fit> {
        let columns = rows.first()?.len();
        debug_assert!(rows.iter().all(|r| r.len() == columns) && rows.len() == y.len());
        let kept = independent_columns(rows, columns);
        let p = kept.len();
        let mut xtx = vec![vec![0.0; p]; p];
        let mut xty = vec![0.0; p];
        for (row, &yi) in rows.iter().zip(y) {
            for (a, &ca) in kept.iter().enumerate() {
                xty[a] += row[ca] * yi;
                for (b, &cb) in kept.iter().enumerate() {
                    xtx[a][b] += row[ca] * row[cb];
                }
            }
        }
        let inverse = invert(xtx)?;
        let mut beta = vec![0.0; columns];
        for (a, &ca) in kept.iter().enumerate() {
            beta[ca] = (0..p).map(|b| inverse[a][b] * xty[b]).sum();
        }
        let residuals = rows
            .iter()
            .zip(y)
            .map(|(row, yi)| yi - dot(row, &beta))
            .collect();
        Some(Fit {
            beta,
            residuals,
            rank: p,
            inverse,
            kept,
        })
    }

    /// The fitted value at a row of the design.
    pub fn predict(&self, row: &[f64]) -> f64 {
        dot(row, &self.beta)
    }

    /// `x'(X'X)^-1 x`: the variance of the fitted value at `x`, in units of the noise's
    /// variance (for a row of the fit itself, its leverage).
    pub fn leverage(&self, row: &[f64]) -> f64 {
        let x: Vec<f64> = self.kept.iter().map(|&c| row[c]).collect();
        let mut total = 0.0;
        for (a, xa) in x.iter().enumerate() {
            for (b, xb) in x.iter().enumerate() {
                total += xa * self.inverse[a][b] * xb;
            }
        }
        total.max(0.0)
    }

    /// The sum of the squared residuals.
    pub fn rss(&self) -> f64 {
        self.residuals.iter().map(|r| r * r).sum()
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The columns, in order, that the columns kept before them do not already give (modified
/// Gram-Schmidt over the columns).
fn independent_columns(rows: &[Vec<f64>], columns: usize) -> Vec<usize> {
    let mut basis: Vec<Vec<f64>> = Vec::new();
    let mut kept = Vec::new();
    for c in 0..columns {
        let mut v: Vec<f64> = rows.iter().map(|r| r[c]).collect();
        let length = dot(&v, &v).sqrt();
        if length == 0.0 {
            continue;
        }
        for q in &basis {
            let along = dot(&v, q);
            for (vi, qi) in v.iter_mut().zip(q) {
                *vi -= along * qi;
            }
        }
        let left = dot(&v, &v).sqrt();
        if left > INDEPENDENT * length {
            basis.push(v.iter().map(|x| x / left).collect());
            kept.push(c);
        }
    }
    kept
}

/// The inverse of a small symmetric positive-definite matrix (Gauss-Jordan with partial
/// pivoting); `None` when it is singular.
fn invert(mut a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut inv: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
        .collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() < f64::MIN_POSITIVE {
            return None;
        }
        a.swap(col, pivot);
        inv.swap(col, pivot);
        let d = a[col][col];
        for j in 0..n {
            a[col][j] /= d;
            inv[col][j] /= d;
        }
        for row in 0..n {
            if row != col {
                let f = a[row][col];
                if f != 0.0 {
                    for j in 0..n {
                        a[row][j] -= f * a[col][j];
                        inv[row][j] -= f * inv[col][j];
                    }
                }
            }
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_fitted_exactly_with_its_leverages() {
        // y = 2 + 3x at x = 0..4.
        let rows: Vec<Vec<f64>> = (0..5).map(|x| vec![1.0, x as f64]).collect();
        let y: Vec<f64> = (0..5).map(|x| 2.0 + 3.0 * x as f64).collect();
        let fit = Fit::new(&rows, &y).unwrap();
        assert!((fit.beta[0] - 2.0).abs() < 1e-12 && (fit.beta[1] - 3.0).abs() < 1e-12);
        assert!(fit.rss() < 1e-20);
        assert_eq!(fit.rank, 2);
        // Leverage of a line at x: 1/n + (x - mean)^2 / Sxx = 1/5 + (x-2)^2/10.
        assert!((fit.leverage(&[1.0, 2.0]) - 0.2).abs() < 1e-12);
        assert!((fit.leverage(&[1.0, 4.0]) - 0.6).abs() < 1e-12);
        // Out of the data: 1/5 + 9/10.
        assert!((fit.leverage(&[1.0, 5.0]) - 1.1).abs() < 1e-12);
        assert!((fit.predict(&[1.0, 5.0]) - 17.0).abs() < 1e-9);
    }

    #[test]
    fn a_mean_is_the_fit_of_a_constant() {
        let rows = vec![vec![1.0]; 4];
        let fit = Fit::new(&rows, &[1.0, 2.0, 3.0, 6.0]).unwrap();
        assert!((fit.beta[0] - 3.0).abs() < 1e-12);
        assert!((fit.rss() - (4.0 + 1.0 + 0.0 + 9.0)).abs() < 1e-12);
        assert!((fit.leverage(&[1.0]) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn a_column_the_others_give_is_dropped() {
        // Two groups, a constant, and both group indicators: the second indicator is the
        // constant less the first, so it is dropped and the fit is the groups' means.
        let rows = vec![
            vec![1.0, 1.0, 0.0],
            vec![1.0, 1.0, 0.0],
            vec![1.0, 0.0, 1.0],
            vec![1.0, 0.0, 1.0],
        ];
        let fit = Fit::new(&rows, &[1.0, 3.0, 10.0, 12.0]).unwrap();
        assert_eq!(fit.rank, 2);
        assert_eq!(fit.beta[2], 0.0);
        assert!((fit.predict(&rows[0]) - 2.0).abs() < 1e-12);
        assert!((fit.predict(&rows[2]) - 11.0).abs() < 1e-12);
        // An all-zero column (a runner with no point) is dropped too.
        let rows = vec![vec![1.0, 0.0]; 3];
        let fit = Fit::new(&rows, &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!((fit.rank, fit.beta[1]), (1, 0.0));
        assert!(Fit::new(&[], &[]).is_none());
    }
}
