//! Error metrics of a lossy (compressed) run against a reference run: what
//! `examples/fidelity.rs` reports and the tests check.
//!
//! For a result `a` and its reference `b` (same shape, `n` points), with `M = max |b_i|` and a
//! floor `f = floor_fraction * M`:
//!
//! - pointwise relative error `e_i = |a_i - b_i| / max(|b_i|, f)`; the floor keeps points where
//!   the reference is (nearly) zero from dividing by zero, and says which values count as
//!   "small": below `f` the error is measured against `f` instead;
//! - [`Errors::max_rel`] `= max_i e_i`, [`Errors::mean_rel`] `= (1/n) sum_i e_i` (over every
//!   point, boundary and untouched points included);
//! - [`Errors::rel_l2`] `= ||a - b||_2 / ||b||_2`;
//! - [`Errors::max_abs_over_max`] `= max_i |a_i - b_i| / M` (the error relative to the field's
//!   range, the measure `--verify` of the examples uses).
//!
//! Everything is accumulated in f64. A NaN or infinite difference counts as an infinite error.
//! Where a denominator is zero (an all-zero reference), an error is 0 if `a` equals `b` there
//! and infinite otherwise.

use ndarray::{ArrayBase, Data, Dimension};

/// The default floor, as a fraction of the reference's largest magnitude.
pub const DEFAULT_FLOOR_FRACTION: f64 = 1e-6;

/// Errors of one field against its reference (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Errors {
    /// Largest pointwise relative error.
    pub max_rel: f64,
    /// Mean pointwise relative error.
    pub mean_rel: f64,
    /// Relative L2 error `||a - b|| / ||b||`.
    pub rel_l2: f64,
    /// Largest absolute difference over the reference's largest magnitude.
    pub max_abs_over_max: f64,
    /// The reference's largest magnitude `M`.
    pub ref_max: f64,
    /// The floor of the pointwise denominators, `floor_fraction * M`.
    pub floor: f64,
}

fn ratio(num: f64, den: f64) -> f64 {
    if !num.is_finite() {
        f64::INFINITY
    } else if den > 0.0 {
        num / den
    } else if num == 0.0 {
        0.0
    } else {
        f64::INFINITY
    }
}

/// The errors of `got` against the reference `want` with the pointwise floor
/// `floor_fraction * max |want|` (e.g. [`DEFAULT_FLOOR_FRACTION`]).
///
/// # Panics
///
/// If the shapes differ or `floor_fraction` is negative or not finite.
pub fn compare<S, T, D>(
    got: &ArrayBase<S, D>,
    want: &ArrayBase<T, D>,
    floor_fraction: f64,
) -> Errors
where
    S: Data<Elem = f32>,
    T: Data<Elem = f32>,
    D: Dimension,
{
    assert_eq!(
        got.shape(),
        want.shape(),
        "fidelity::compare: the arrays have different shapes"
    );
    assert!(
        floor_fraction.is_finite() && floor_fraction >= 0.0,
        "fidelity::compare: the floor fraction must be finite and >= 0, got {floor_fraction}"
    );
    let ref_max = want
        .iter()
        .map(|&w| (w as f64).abs())
        .fold(0.0f64, f64::max);
    let floor = floor_fraction * ref_max;
    let (mut max_rel, mut sum_rel, mut max_abs) = (0.0f64, 0.0f64, 0.0f64);
    let (mut diff2, mut ref2) = (0.0f64, 0.0f64);
    for (&g, &w) in got.iter().zip(want.iter()) {
        let (g, w) = (g as f64, w as f64);
        let d = (g - w).abs();
        let d = if d.is_nan() { f64::INFINITY } else { d };
        let e = ratio(d, w.abs().max(floor));
        max_rel = max_rel.max(e);
        sum_rel += e;
        max_abs = max_abs.max(d);
        diff2 += d * d;
        ref2 += w * w;
    }
    let n = want.len();
    Errors {
        max_rel,
        mean_rel: if n == 0 { 0.0 } else { sum_rel / n as f64 },
        rel_l2: ratio(diff2.sqrt(), ref2.sqrt()),
        max_abs_over_max: ratio(max_abs, ref_max),
        ref_max,
        floor,
    }
}
