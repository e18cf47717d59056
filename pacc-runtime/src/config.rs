//! Options and their precedence, resolved in one place: an option the caller gives beats the
//! directive's clause, which beats the default. The session (`run`), the tuner and the `pacc`
//! tool all resolve the chunk count and the blocking depth here.

use crate::options::Options;
use crate::plan::{PlanOptions, Scheme};
use crate::program::Program;

/// Default chunk count when neither the options nor the directive give one (clamped to the
/// number of planes).
pub const DEFAULT_CHUNKS: usize = 4;
/// Default temporal blocking depth (clamped to the number of steps).
pub const DEFAULT_BLOCK_STEPS: usize = 4;
/// Default transfer scheme (the directive has no clause for it).
pub const DEFAULT_SCHEME: Scheme = Scheme::RegionSharing;

/// The precedence rule itself: the caller's option if given, else the directive's clause.
/// `None`: neither fixes the setting, so the default (or the tuner) decides.
pub fn fixed<T>(option: Option<T>, clause: Option<T>) -> Option<T> {
    option.or(clause)
}

/// The chunk count and blocking depth the caller fixed, by option or by the directive's clause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fixed {
    pub chunks: Option<usize>,
    pub block_steps: Option<usize>,
}

impl Fixed {
    /// What `opts` and `program`'s clauses fix (see [`fixed`]).
    pub fn of(program: &Program, opts: &Options) -> Fixed {
        Fixed {
            chunks: fixed(opts.chunks, program.default_chunks),
            block_steps: fixed(opts.block_steps, program.default_block_steps),
        }
    }

    /// The chunk count: fixed, else [`DEFAULT_CHUNKS`] clamped to `planes`.
    pub fn chunks(self, planes: usize) -> usize {
        self.chunks
            .unwrap_or_else(|| DEFAULT_CHUNKS.min(planes).max(1))
    }

    /// The blocking depth: fixed, else [`DEFAULT_BLOCK_STEPS`] clamped to `steps`.
    pub fn block_steps(self, steps: usize) -> usize {
        self.block_steps
            .unwrap_or_else(|| DEFAULT_BLOCK_STEPS.min(steps).max(1))
    }
}

/// The planner options for a call of `steps` steps on arrays of `planes` planes: explicit
/// options first, then the directive's clauses, then the defaults. Compression rates are resolved
/// separately, array by array, by `crate::compress::rates` (they need the shape).
pub fn plan_options(program: &Program, planes: usize, steps: usize, opts: &Options) -> PlanOptions {
    let f = Fixed::of(program, opts);
    let scheme = opts.scheme.unwrap_or(DEFAULT_SCHEME);
    PlanOptions {
        chunks: f.chunks(planes),
        block_steps: f.block_steps(steps),
        scheme,
        buffer_sets: scheme.buffer_sets(),
        read_only_ring: !opts.no_ring,
        ..PlanOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ArrayDecl, Elem, Role};

    fn program(chunks: Option<usize>, block_steps: Option<usize>) -> Program {
        Program {
            name: "p".into(),
            ndim: 2,
            arrays: vec![ArrayDecl {
                name: "a".into(),
                elem: Elem::F32,
                role: Role::InOut,
            }],
            halo: 1,
            default_chunks: chunks,
            default_block_steps: block_steps,
            ..Default::default()
        }
    }

    #[test]
    fn option_beats_clause_beats_default() {
        assert_eq!(fixed(Some(1), Some(2)), Some(1));
        assert_eq!(fixed(None, Some(2)), Some(2));
        assert_eq!(fixed::<usize>(None, None), None);

        let with_clauses = program(Some(6), Some(3));
        let bare = program(None, None);
        let opts = Options::new().chunks(5).block_steps(2);
        let o = plan_options(&with_clauses, 100, 50, &opts);
        assert_eq!((o.chunks, o.block_steps), (5, 2), "options win");
        let o = plan_options(&with_clauses, 100, 50, &Options::new());
        assert_eq!((o.chunks, o.block_steps), (6, 3), "then the clauses");
        let o = plan_options(&bare, 100, 50, &Options::new());
        let want = (DEFAULT_CHUNKS, DEFAULT_BLOCK_STEPS);
        assert_eq!((o.chunks, o.block_steps), want, "then the defaults");
        assert_eq!(o.scheme, DEFAULT_SCHEME);
        let o = plan_options(&bare, 3, 2, &Options::new().scheme(Scheme::StagedCopy));
        assert_eq!((o.chunks, o.block_steps), (3, 2), "defaults are clamped");
        assert_eq!(o.scheme, Scheme::StagedCopy);
        // Fixed settings are not clamped: the planner reports what it had to change.
        let o = plan_options(&with_clauses, 3, 2, &Options::new());
        assert_eq!((o.chunks, o.block_steps), (6, 3));
        let f = Fixed::of(&with_clauses, &Options::new().block_steps(9));
        assert_eq!(
            f,
            Fixed {
                chunks: Some(6),
                block_steps: Some(9)
            }
        );
        assert_eq!(Fixed::of(&bare, &Options::new()), Fixed::default());
    }
}
