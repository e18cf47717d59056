//! Loop bounds: what each end of a nest's range counts from, and how a call's scalar values make
//! every bound concrete ([`Program::resolved`]) before the planner and the executors see it.

use super::{KernelDecl, Program};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::cmp::Ordering;

/// What a loop bound counts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Base {
    /// Nothing: the bound is its offset (`4` in `4..nz - 4`).
    Zero,
    /// The extent of the bound's own axis (`nz` in `4..nz - 4`).
    Extent,
    /// The value of [`Program::scalars`]`[s]`, an integer known before the time loop (a
    /// parameter, a pre-loop local, another axis's extent, or a synthetic `__pacc_` scalar the
    /// wrapper computes from the bound's expression). [`Program::resolved`] replaces it by its
    /// value for one call; the planner and the executors see only the two other bases.
    Scalar(usize),
}

/// One end of a loop range along an axis: `base + offset`. `4..nz - 4` is
/// `{Zero, 4}..{Extent, -4}`; `1..n - 1` with `n` program scalar 2 is `{Zero, 1}..{Scalar(2), -1}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Bound {
    pub base: Base,
    pub offset: i64,
}

impl Bound {
    /// `offset`.
    pub const fn start(offset: i64) -> Self {
        Bound {
            base: Base::Zero,
            offset,
        }
    }
    /// `n + offset`, `n` the axis's extent.
    pub const fn end(offset: i64) -> Self {
        Bound {
            base: Base::Extent,
            offset,
        }
    }
    /// `s + offset`, `s` the value of program scalar `scalar`.
    pub const fn scalar(scalar: usize, offset: i64) -> Self {
        Bound {
            base: Base::Scalar(scalar),
            offset,
        }
    }
    /// Whether the bound counts from a scalar, so that it has a value only for a call.
    pub const fn is_scalar(self) -> bool {
        matches!(self.base, Base::Scalar(_))
    }
    /// The bound's value for an axis of extent `n`. A scalar-based bound has none without the
    /// call's values: resolve the program first ([`Program::resolved`]; the planner and every
    /// executor refuse a program that is not, [`Program::unresolved`]); here it counts as its
    /// offset alone.
    pub fn eval(self, n: usize) -> i64 {
        match self.base {
            Base::Zero | Base::Scalar(_) => self.offset,
            Base::Extent => n as i64 + self.offset,
        }
    }
    /// How `self` compares with `other` for every value of their base, when they share one
    /// (`n - 1 < n + 2`, `s - 1 < s`); `None` for different bases, which only a shape and the
    /// call's values order.
    pub fn cmp_same_base(self, other: Bound) -> Option<Ordering> {
        (self.base == other.base).then(|| self.offset.cmp(&other.offset))
    }
    /// The bound moved by `by` (`n - 1` by 2 is `n + 1`); `None` on overflow.
    pub fn shifted(self, by: i64) -> Option<Bound> {
        Some(Bound {
            base: self.base,
            offset: self.offset.checked_add(by)?,
        })
    }
    /// The concrete bound for a call where scalar `s` has the value `value(s)` (`None`: not an
    /// integer). A bound without a scalar base is returned as it is.
    fn resolve(self, value: &impl Fn(usize) -> Option<i128>) -> Result<Bound, Unresolvable> {
        let Base::Scalar(s) = self.base else {
            return Ok(self);
        };
        let v = value(s).ok_or(Unresolvable::NotInteger(s))?;
        let sum = v + i128::from(self.offset);
        match i64::try_from(sum) {
            Ok(offset) => Ok(Bound::start(offset)),
            Err(_) => Err(Unresolvable::Overflow(s, v, self.offset)),
        }
    }
}

/// The half-open loop range `lo..hi` of one axis of a kernel's nest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AxisRange {
    pub lo: Bound,
    pub hi: Bound,
}

impl AxisRange {
    fn resolve(self, value: &impl Fn(usize) -> Option<i128>) -> Result<AxisRange, Unresolvable> {
        Ok(AxisRange {
            lo: self.lo.resolve(value)?,
            hi: self.hi.resolve(value)?,
        })
    }
    fn scalar(self) -> Option<usize> {
        [self.lo, self.hi].into_iter().find_map(|b| match b.base {
            Base::Scalar(s) => Some(s),
            _ => None,
        })
    }
}

enum Unresolvable {
    NotInteger(usize),
    Overflow(usize, i128, i64),
}

/// A loop bound that counts from a scalar and has no value: the call's value is not an
/// integer, or does not fit, or there is no call (`pacc plan`, a plan built from the program
/// as the translator wrote it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoundError {
    #[error("nest {nest} (`{kernel}`) runs along axis {axis} to a bound counted from scalar `{scalar}`, but the call passes no integer value for it. Hint: the translator's description and the call disagree; please report this")]
    NotInteger {
        nest: usize,
        kernel: String,
        axis: usize,
        scalar: String,
    },
    #[error("nest {nest} (`{kernel}`) runs along axis {axis} to `{scalar}` {offset:+} with `{scalar}` = {value}, which does not fit a 64-bit integer. Hint: check the value of `{scalar}`; a loop bound must be an index of the arrays")]
    Overflow {
        nest: usize,
        kernel: String,
        axis: usize,
        scalar: String,
        /// The scalar's value, in words (it may lie beyond `i64`).
        value: String,
        offset: i64,
    },
    #[error("the loop bound `{expr}` is {value}, which does not fit a 64-bit integer. Hint: a loop bound must be an index of the arrays")]
    Value { expr: String, value: String },
    #[error("nest {nest} (`{kernel}`) runs along axis {axis} to a bound counted from scalar `{scalar}`, whose value only a call knows. Hint: {}", unresolved_hint(.scalar))]
    Unresolved {
        nest: usize,
        kernel: String,
        axis: usize,
        scalar: String,
    },
}

fn unresolved_hint(scalar: &str) -> String {
    let what = match scalar.starts_with(SYNTHETIC_PREFIX) {
        true => "a synthetic scalar holding the value of a bound that is an expression; ",
        false => "",
    };
    format!("`{scalar}` is {what}plan the program resolved with the call's scalar values (`Program::resolved`); `pacc plan` takes the value as `--scalar {scalar}=VALUE`")
}

/// The value of a loop bound the wrapper computes from the user's expression `expr` (its
/// synthetic scalar, [`SYNTHETIC_PREFIX`]): a typed error where it does not fit an `i64`.
pub fn bound_value<T>(value: T, expr: &str) -> Result<i64, BoundError>
where
    T: TryInto<i64> + Copy + std::fmt::Display,
{
    value.try_into().map_err(|_| BoundError::Value {
        expr: expr.to_string(),
        value: value.to_string(),
    })
}

/// The prefix of the scalars the translator adds for bounds that are expressions (user names
/// starting with `__` are refused, so none can clash).
pub const SYNTHETIC_PREFIX: &str = "__pacc_";

impl Program {
    /// Every loop range of the program with the kernel it belongs to (its index in
    /// [`Program::kernels`], or in the active fused group's nests after them).
    fn all_nests(&self) -> impl Iterator<Item = &KernelDecl> {
        let active = self.fusion.active.iter().flat_map(|a| &a.nests);
        self.kernels.iter().chain(active)
    }

    /// The first bound that counts from a scalar, as an error saying the program needs a
    /// call's values ([`Program::resolved`]); `Ok` when every bound is concrete.
    pub fn unresolved(&self) -> Result<(), BoundError> {
        for (nest, k) in self.all_nests().enumerate() {
            for (axis, r) in k.ranges.iter().enumerate() {
                if let Some(s) = r.scalar() {
                    return Err(BoundError::Unresolved {
                        nest,
                        kernel: k.name.clone(),
                        axis,
                        scalar: self.scalar_name(s),
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether some loop bound counts from a scalar.
    pub fn has_scalar_bounds(&self) -> bool {
        self.unresolved().is_err()
    }

    fn scalar_name(&self, s: usize) -> String {
        self.scalars
            .get(s)
            .map_or_else(|| format!("#{s}"), |d| d.name.clone())
    }

    /// The program with every scalar-based bound replaced by its value for a call in which
    /// scalar `s` has the value `value(s)` (`None`: not an integer, or not passed): the kernels'
    /// ranges, the active fused group's nests and the slices' recorded reads. Borrowed when no
    /// bound counts from a scalar. Touches nothing else; the CUDA kernels read the scalars
    /// themselves, so the program's source stays as it is.
    pub fn resolved(
        &self,
        value: impl Fn(usize) -> Option<i128>,
    ) -> Result<Cow<'_, Program>, BoundError> {
        let slices_scalar = (self.slices.iter().flat_map(|s| &s.reads))
            .flat_map(|r| &r.axes)
            .any(|a| a.range.scalar().is_some());
        let guards_scalar = (self.all_nests().flat_map(|k| &k.guarded))
            .flat_map(|g| g.from.iter().chain(&g.to).flatten())
            .any(|b| b.is_scalar());
        if !self.has_scalar_bounds() && !slices_scalar && !guards_scalar {
            return Ok(Cow::Borrowed(self));
        }
        let mut p = self.clone();
        let name = |s: usize| self.scalar_name(s);
        let active = p.fusion.active.iter_mut().flat_map(|a| &mut a.nests);
        for (nest, k) in p.kernels.iter_mut().chain(active).enumerate() {
            for axis in 0..k.ranges.len() {
                let range = k.ranges[axis];
                k.ranges[axis] = range.resolve(&value).map_err(|e| match e {
                    Unresolvable::NotInteger(s) => BoundError::NotInteger {
                        nest,
                        kernel: k.name.clone(),
                        axis,
                        scalar: name(s),
                    },
                    Unresolvable::Overflow(s, v, o) => BoundError::Overflow {
                        nest,
                        kernel: k.name.clone(),
                        axis,
                        scalar: name(s),
                        value: v.to_string(),
                        offset: o,
                    },
                })?;
            }
        }
        // A guard's limit from a scalar: its value for the call. One without a value limits
        // nothing, so its read counts over the nest's whole range (checked, never skipped).
        for g in (p.kernels.iter_mut().flat_map(|k| &mut k.guarded)).chain(
            (p.fusion.active.iter_mut().flat_map(|a| &mut a.nests)).flat_map(|k| &mut k.guarded),
        ) {
            for limits in g.from.iter_mut().chain(g.to.iter_mut()) {
                *limits = (limits.iter())
                    .filter_map(|b| b.resolve(&value).ok())
                    .collect();
            }
        }
        // A slice read's loop ranges are its nest's: resolved the same way (an unresolvable
        // one was reported above, with its nest).
        for term in (p.slices.iter_mut().flat_map(|s| &mut s.reads)).flat_map(|r| &mut r.axes) {
            if let Ok(r) = term.range.resolve(&value) {
                term.range = r;
            }
        }
        Ok(Cow::Owned(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ScalarDecl, ScalarType};

    fn program(ranges: Vec<AxisRange>) -> Program {
        Program {
            name: "f".into(),
            ndim: 2,
            scalars: vec![ScalarDecl {
                name: "n".into(),
                ty: ScalarType::Usize,
            }],
            kernels: vec![KernelDecl {
                name: "f_k0".into(),
                ranges,
                reads: vec![],
                writes: vec![],
                reductions: vec![],
                launch: Default::default(),
                guarded: vec![],
            }],
            ..Default::default()
        }
    }

    #[test]
    fn scalar_bounds_resolve_to_their_values_and_others_stay() {
        let p = program(vec![
            AxisRange {
                lo: Bound::start(1),
                hi: Bound::scalar(0, -1),
            },
            AxisRange {
                lo: Bound::start(0),
                hi: Bound::end(-2),
            },
        ]);
        assert!(p.has_scalar_bounds());
        let e = p.unresolved().unwrap_err().to_string();
        assert!(
            e.contains("nest 0 (`f_k0`) runs along axis 0") && e.contains("`n`"),
            "{e}"
        );
        let r = p.resolved(|_| Some(10)).unwrap();
        assert_eq!(r.kernels[0].ranges[0].hi, Bound::start(9));
        assert_eq!(r.kernels[0].ranges[1], p.kernels[0].ranges[1]);
        assert!(r.unresolved().is_ok());
        // Nothing to resolve: the program itself.
        assert!(matches!(r.resolved(|_| None).unwrap(), Cow::Borrowed(_)));
    }

    #[test]
    fn unresolvable_bounds_are_typed_errors() {
        let p = program(vec![AxisRange {
            lo: Bound::scalar(0, i64::MIN),
            hi: Bound::start(4),
        }]);
        let e = p.resolved(|_| Some(-1)).unwrap_err();
        assert!(
            matches!(&e, BoundError::Overflow { value, .. } if value == "-1"),
            "{e}"
        );
        let e = p.resolved(|_| None).unwrap_err();
        assert!(matches!(e, BoundError::NotInteger { axis: 0, .. }), "{e}");
    }

    #[test]
    fn bounds_of_one_base_compare_by_offset() {
        let (a, b) = (Bound::scalar(1, -1), Bound::scalar(1, 2));
        assert_eq!(a.cmp_same_base(b), Some(Ordering::Less));
        assert_eq!(
            Bound::end(0).cmp_same_base(Bound::end(0)),
            Some(Ordering::Equal)
        );
        assert_eq!(a.cmp_same_base(Bound::end(2)), None);
        assert_eq!(a.shifted(3), Some(b));
        assert_eq!(Bound::start(i64::MAX).shifted(1), None);
        assert_eq!(bound_value(7usize, "n"), Ok(7));
        let e = bound_value(u64::MAX, "n * 2").unwrap_err().to_string();
        assert!(e.contains("`n * 2` is 18446744073709551615"), "{e}");
    }
}
