//! Options and their precedence, resolved in one place: an option the caller gives (in code, on
//! the command line or as a `PACC_*` variable read by `Options::from_env`) beats the directive's
//! clause, which beats the default. The session (`run`), each distributed rank, the tuner, the
//! executors and the `pacc` tool read these functions rather than the raw fields:
//!
//! - chunk count and blocking depth ([`Fixed`], [`plan_options`]), scheme and ring;
//! - the codec ([`codec`]) and the compression rates, array by array ([`resolve`], through
//!   `crate::compress::rates`);
//! - steps per fused launch ([`fuse`]);
//! - the CUDA kernels' compile-time shape ([`march`], [`march_fixed`]).
//!
//! What the tuner then picks where nothing is fixed is `crate::tune`'s.

use crate::codec::CodecKind;
use crate::error::{CompressError, Error};
use crate::march::MarchTuning;
use crate::options::Options;
use crate::plan::{PlanOptions, Scheme};
use crate::program::Program;

/// Default chunk count when neither the options nor the directive give one (clamped to the
/// number of planes).
pub const DEFAULT_CHUNKS: usize = 4;
/// Default temporal blocking depth (clamped to the number of steps).
pub const DEFAULT_BLOCK_STEPS: usize = 4;
/// Default transfer scheme (the directive has no clause for it).
pub const DEFAULT_SCHEME: Scheme = Scheme::DEFAULT;

/// Default codec of compressed arrays (neither the options nor the directive name one).
pub const DEFAULT_CODEC: CodecKind = CodecKind::Zfp;

/// The precedence rule itself: the caller's option if given, else the directive's clause.
/// `None`: neither fixes the setting, so the default (or the tuner) decides.
pub fn fixed<T>(option: Option<T>, clause: Option<T>) -> Option<T> {
    option.or(clause)
}

pub use crate::tune::Fixed;

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

/// The codec of the call's compressed arrays: [`Options::codec`] (or `PACC_CODEC`), else the
/// codec the directive's `compress(.., codec = NAME)` names, else [`DEFAULT_CODEC`]. A name the
/// runtime does not know (a hand-written program) is refused.
pub fn codec(program: &Program, opts: &Options) -> Result<CodecKind, CompressError> {
    let clause = match program.compress_codec() {
        Some(name) => Some(name.parse().map_err(|reason| CompressError::UnknownCodec {
            program: program.name.clone(),
            reason,
        })?),
        None => None,
    };
    Ok(fixed(opts.codec, clause).unwrap_or(DEFAULT_CODEC))
}

/// The planner options for a call of `steps` steps on arrays of `planes` planes: explicit
/// options first, then the directive's clauses, then the defaults. Compression rates are resolved
/// separately, array by array, by `crate::compress::rates` (they need the shape), which refuses
/// a codec name [`codec`] does not know; here such a name leaves the default.
pub fn plan_options(program: &Program, planes: usize, steps: usize, opts: &Options) -> PlanOptions {
    let f = Fixed::of(program, opts);
    let scheme = opts.scheme.unwrap_or(DEFAULT_SCHEME);
    PlanOptions {
        chunks: f.chunks(planes),
        block_steps: f.block_steps(steps),
        scheme,
        buffer_sets: scheme.buffer_sets(),
        read_only_ring: !opts.no_ring,
        codec: codec(program, opts).unwrap_or(DEFAULT_CODEC),
        ..PlanOptions::default()
    }
}

/// The steps per fused launch the caller forced (`Options::fuse`, `PACC_FUSE`); `None` for
/// single steps or when unset (then the tuner may weigh fusion).
pub fn fuse(opts: &Options) -> Option<usize> {
    opts.fuse.filter(|&s| s > 1)
}

/// The marching kernels' compile-time shape a CUDA run compiles with: the option if set, else
/// `PACC_MARCH`, else the translator's defaults (the tuner's pick arrives as the option).
pub fn march(opts: &Options) -> Result<MarchTuning, Error> {
    match opts.cuda.march {
        Some(t) => Ok(t),
        None => Ok(MarchTuning::from_env()?.unwrap_or_default()),
    }
}

/// Whether the caller fixed the kernels' shape (the option, or `PACC_MARCH`), so the tuner
/// leaves it alone.
pub fn march_fixed(opts: &Options) -> bool {
    opts.cuda.march.is_some() || std::env::var_os("PACC_MARCH").is_some()
}

/// The planner options of a call on arrays of `shape` for `steps` steps before any tuning:
/// [`plan_options`] and each array's compression rate (`crate::compress::rates`; none when no
/// array is compressed). The session and each distributed rank start from this.
pub fn resolve(
    program: &Program,
    shape: &[usize],
    steps: usize,
    opts: &Options,
) -> Result<PlanOptions, Error> {
    let mut popts = plan_options(program, shape[0], steps, opts);
    let codec = || codec(program, opts);
    popts.compress = crate::compress::rates(program, shape, popts.scheme, opts, codec)?;
    if !popts.compresses() {
        popts.compress.clear();
    }
    Ok(popts)
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

    #[test]
    fn codec_option_beats_clause_beats_default() {
        use crate::program::CompressDecl;
        let mut p = program(None, None);
        let o = Options::new();
        assert_eq!(codec(&p, &o).unwrap(), DEFAULT_CODEC);
        p.compress = vec![CompressDecl {
            array: 0,
            rate: 16.0,
            codec: Some("f16".into()),
        }];
        assert_eq!(codec(&p, &o).unwrap(), CodecKind::F16, "the clause");
        assert_eq!(plan_options(&p, 8, 8, &o).codec, CodecKind::F16);
        let o = o.codec(CodecKind::Zfp);
        assert_eq!(codec(&p, &o).unwrap(), CodecKind::Zfp, "the option wins");
        p.compress[0].codec = Some("lz4".into());
        let e = codec(&p, &Options::new()).unwrap_err();
        assert!(e.to_string().contains("expected zfp or f16"), "{e}");
    }
}
