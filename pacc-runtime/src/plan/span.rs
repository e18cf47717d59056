//! Plane intervals: the arithmetic of chunk windows and halos.

use std::ops::Range;

/// A possibly empty half-open interval of planes.
pub type Span = Option<Range<usize>>;

pub fn span(lo: i64, hi: i64, n: usize) -> Span {
    let lo = lo.max(0) as usize;
    let hi = (hi.max(0) as usize).min(n);
    (lo < hi).then_some(lo..hi)
}

/// Smallest interval containing both.
pub fn hull(a: &Span, b: &Span) -> Span {
    match (a, b) {
        (None, x) | (x, None) => x.clone(),
        (Some(a), Some(b)) => Some(a.start.min(b.start)..a.end.max(b.end)),
    }
}

pub fn intersect(a: &Span, b: &Span) -> Span {
    match (a, b) {
        (Some(a), Some(b)) => {
            let lo = a.start.max(b.start);
            let hi = a.end.min(b.end);
            (lo < hi).then_some(lo..hi)
        }
        _ => None,
    }
}

/// `a` minus `b`: up to two pieces, below and above `b`.
pub fn subtract(a: &Span, b: &Span) -> Vec<Range<usize>> {
    let Some(a) = a else { return Vec::new() };
    let Some(b) = b else { return vec![a.clone()] };
    let mut out = Vec::new();
    if a.start < b.start.min(a.end) {
        out.push(a.start..b.start.min(a.end));
    }
    if b.end.max(a.start) < a.end {
        out.push(b.end.max(a.start)..a.end);
    }
    out
}

/// Smallest interval containing `a` minus `b`.
pub fn hull_minus(a: &Span, b: &Span) -> Span {
    subtract(a, b)
        .into_iter()
        .fold(None, |acc, r| hull(&acc, &Some(r)))
}

pub fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// A set of planes: disjoint, non-empty intervals in increasing order.
pub type Planes = Vec<Range<usize>>;

/// `set` with `r` added.
pub fn add(set: &mut Planes, r: Range<usize>) {
    if r.is_empty() {
        return;
    }
    let (mut lo, mut hi) = (r.start, r.end);
    let mut out = Vec::with_capacity(set.len() + 1);
    for q in set.drain(..) {
        if q.end < lo || hi < q.start {
            out.push(q);
        } else {
            (lo, hi) = (lo.min(q.start), hi.max(q.end));
        }
    }
    out.push(lo..hi);
    out.sort_by_key(|q| q.start);
    *set = out;
}

/// The planes of `r` not in `set`.
pub fn outside(r: Range<usize>, set: &Planes) -> Planes {
    let mut out = Vec::new();
    let mut lo = r.start;
    for q in set.iter().filter(|q| overlaps(q, &r)) {
        if lo < q.start {
            out.push(lo..q.start);
        }
        lo = lo.max(q.end);
    }
    if lo < r.end {
        out.push(lo..r.end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plane_sets_merge_what_touches_and_subtract_what_they_hold() {
        let mut set = Planes::new();
        add(&mut set, 10..20);
        add(&mut set, 30..40);
        add(&mut set, 0..0);
        assert_eq!(set, vec![10..20, 30..40]);
        add(&mut set, 20..25);
        assert_eq!(set, vec![10..25, 30..40]);
        add(&mut set, 5..35);
        assert_eq!(set, vec![5..40]);
        add(&mut set, 0..2);
        assert_eq!(set, vec![0..2, 5..40]);
        assert_eq!(outside(0..50, &set), vec![2..5, 40..50]);
        assert_eq!(outside(6..30, &set), Vec::<Range<usize>>::new());
        assert_eq!(outside(3..8, &Planes::new()), vec![3..8]);
    }

    #[test]
    fn subtract_splits_around_the_hole() {
        assert_eq!(subtract(&Some(0..10), &Some(3..5)), vec![0..3, 5..10]);
        assert_eq!(
            subtract(&Some(0..10), &Some(0..10)),
            Vec::<Range<usize>>::new()
        );
        assert_eq!(subtract(&Some(4..10), &Some(0..6)), vec![6..10]);
        assert_eq!(subtract(&Some(0..4), &Some(6..9)), vec![0..4]);
        assert_eq!(hull_minus(&Some(0..10), &Some(3..5)), Some(0..10));
        assert_eq!(hull_minus(&Some(0..10), &Some(2..10)), Some(0..2));
    }

    #[test]
    fn span_clamps_to_the_axis() {
        assert_eq!(span(-3, 4, 10), Some(0..4));
        assert_eq!(span(8, 14, 10), Some(8..10));
        assert_eq!(span(5, 5, 10), None);
        assert_eq!(hull(&Some(1..3), &Some(6..8)), Some(1..8));
        assert_eq!(intersect(&Some(1..5), &Some(4..8)), Some(4..5));
        assert_eq!(intersect(&Some(1..4), &Some(4..8)), None);
    }
}
