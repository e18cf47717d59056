//! How the step's `std::mem::swap` statements bind the function's array names to the physical
//! arrays: the one home of the swap permutation (planner, checkpoints, the session's segments and
//! the wrapper's replays all ask here) and of the swap groups.
//!
//! A binding `b` says which physical array each name refers to: name `a` is argument `b[a]`. It
//! starts as the identity; each `Stage::Swap(x, y)` of a step exchanges `b[x]` and `b[y]`.

use crate::program::{Program, Stage};

/// The binding before each statement of one step that starts from `start`, and the binding after
/// the step.
pub fn bindings_through_step(program: &Program, start: &[usize]) -> (Vec<Vec<usize>>, Vec<usize>) {
    let mut cur = start.to_vec();
    let mut before = Vec::with_capacity(program.step.len());
    for st in &program.step {
        before.push(cur.clone());
        if let Stage::Swap(a, b) = *st {
            cur.swap(a, b);
        }
    }
    (before, cur)
}

/// After how many steps the step's swaps bring every name back to its own array (the order of
/// the permutation one step makes; 1 without swaps).
pub fn period(program: &Program) -> usize {
    let start = identity(program);
    let mut b = start.clone();
    for period in 1.. {
        b = bindings_through_step(program, &b).1;
        if b == start {
            return period;
        }
    }
    unreachable!("a permutation has finite order")
}

/// The binding `steps` steps after `binding`.
pub fn advance(program: &Program, binding: &[usize], steps: usize) -> Vec<usize> {
    let mut b = binding.to_vec();
    for _ in 0..steps % period(program) {
        b = bindings_through_step(program, &b).1;
    }
    b
}

/// The binding after `steps` steps from the start: `b[a]` is the argument the name `a` refers to.
pub fn binding_at(program: &Program, steps: usize) -> Vec<usize> {
    advance(program, &identity(program), steps)
}

/// `physical` (one entry per argument, in argument order) reordered as `binding` binds them to
/// the names: name `a` gets argument `binding[a]`. Moves every entry once, so it serves the host
/// descriptions, which are not `Copy`; a binding is a permutation (swaps applied to the
/// identity), so no entry is left out or taken twice.
pub(crate) fn bind<T>(physical: Vec<T>, binding: &[usize]) -> Vec<T> {
    let name_of = |p: usize| binding.iter().position(|&b| b == p).unwrap_or(p);
    sorted_by(physical, name_of)
}

/// The inverse of [`bind`]: the names' entries back in argument order.
pub(crate) fn unbind<T>(named: Vec<T>, binding: &[usize]) -> Vec<T> {
    sorted_by(named, |a| binding.get(a).copied().unwrap_or(a))
}

/// `v` with entry `i` moved to place `key(i)` (stable, so a key given twice keeps both).
fn sorted_by<T>(v: Vec<T>, key: impl Fn(usize) -> usize) -> Vec<T> {
    let mut keyed: Vec<(usize, T)> = v
        .into_iter()
        .enumerate()
        .map(|(i, x)| (key(i), x))
        .collect();
    keyed.sort_by_key(|&(k, _)| k);
    keyed.into_iter().map(|(_, x)| x).collect()
}

/// How many times the wrapper replays the step's swaps after `steps` steps so that the names
/// end bound as the serial loop leaves them: `steps` modulo the permutation's order.
pub fn swap_replays(program: &Program, steps: usize) -> usize {
    steps % period(program)
}

/// The arrays connected to each other by swap statements: `group[a]` is the smallest array index
/// of `a`'s group. (Connected, not the permutation's orbits: two swaps of the same pair cancel
/// in the permutation but still let a kernel between them write the other array.)
pub fn swap_groups(program: &Program) -> Vec<usize> {
    let mut group: Vec<usize> = (0..program.arrays.len()).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for st in &program.step {
            if let Stage::Swap(x, y) = *st {
                let g = group[x].min(group[y]);
                for a in [x, y] {
                    if group[a] != g {
                        changed = true;
                        let old = group[a];
                        group.iter_mut().filter(|v| **v == old).for_each(|v| *v = g);
                    }
                }
            }
        }
    }
    group
}

/// Whether physical array `a` is ever written: it is written by name, or it shares a swap group
/// with a name that is.
pub fn written_physically(program: &Program, a: usize) -> bool {
    let group = swap_groups(program);
    (0..program.arrays.len()).any(|g| group[g] == group[a] && program.is_written(g))
}

fn identity(program: &Program) -> Vec<usize> {
    (0..program.arrays.len()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ArrayDecl, Elem, Role};

    fn program(n: usize, step: Vec<Stage>) -> Program {
        Program {
            name: "swaps".into(),
            ndim: 2,
            arrays: (0..n)
                .map(|i| ArrayDecl {
                    name: format!("a{i}"),
                    elem: Elem::F64,
                    role: Role::Input,
                })
                .collect(),
            step,
            ..Default::default()
        }
    }

    #[test]
    fn bind_moves_each_argument_to_its_name_and_unbind_undoes_it() {
        let p = program(
            4,
            vec![Stage::Swap(0, 1), Stage::Swap(1, 2), Stage::Swap(3, 0)],
        );
        let physical = || -> Vec<String> { (0..4).map(|a| format!("arg{a}")).collect() };
        for steps in 0..2 * period(&p) {
            let b = binding_at(&p, steps);
            let by_index: Vec<String> = b.iter().map(|&a| physical()[a].clone()).collect();
            let named = bind(physical(), &b);
            assert_eq!(named, by_index, "after {steps} steps, binding {b:?}");
            assert_eq!(unbind(named, &b), physical(), "after {steps} steps");
        }
    }

    #[test]
    fn a_three_cycle_returns_after_three_steps() {
        // Swap(0, 1) then Swap(1, 2): name 0 -> 1, 1 -> 2, 2 -> 0 after one step.
        let p = program(4, vec![Stage::Swap(0, 1), Stage::Swap(1, 2)]);
        assert_eq!(binding_at(&p, 0), vec![0, 1, 2, 3]);
        assert_eq!(binding_at(&p, 1), vec![1, 2, 0, 3]);
        assert_eq!(binding_at(&p, 2), vec![2, 0, 1, 3]);
        assert_eq!(binding_at(&p, 3), vec![0, 1, 2, 3]);
        assert_eq!(binding_at(&p, 7), binding_at(&p, 1));
        assert_eq!(period(&p), 3);
        assert_eq!(swap_replays(&p, 8), 2);
        assert_eq!(advance(&p, &binding_at(&p, 2), 2), binding_at(&p, 4));
        let (before, after) = bindings_through_step(&p, &[0, 1, 2, 3]);
        assert_eq!(before, vec![vec![0, 1, 2, 3], vec![1, 0, 2, 3]]);
        assert_eq!(after, binding_at(&p, 1));
    }

    #[test]
    fn cancelling_swaps_keep_the_binding_but_join_the_group() {
        let p = program(3, vec![Stage::Swap(0, 1), Stage::Swap(0, 1)]);
        assert_eq!(period(&p), 1);
        assert_eq!(binding_at(&p, 5), vec![0, 1, 2]);
        assert_eq!(swap_groups(&p), vec![0, 0, 2]);
        let q = program(3, vec![]);
        assert_eq!((period(&q), swap_replays(&q, 9)), (1, 0));
        assert_eq!(swap_groups(&q), vec![0, 1, 2]);
    }
}
