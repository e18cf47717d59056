//! Options and their precedence, resolved in one place: an option the caller gives (in code, on
//! the command line or as a `PACC_*` variable read by `Options::from_env`) beats the directive's
//! clause, which beats the default. The session (`run`), each distributed rank and the `pacc`
//! tool call these functions; the tuner, fusion and the executors read only what [`settle`]
//! resolved (`crate::settled::Settled`):
//!
//! - chunk count and blocking depth ([`Fixed`], [`plan_options`]), scheme and ring;
//! - the codec ([`codec`]) and the compression rates, array by array ([`resolve`], through
//!   [`compress_rates`]);
//! - steps per fused launch ([`fuse`]);
//! - the CUDA backend's settings, the kernels' compile-time shape among them (`PACC_MARCH`),
//!   and the rest a call's layers read ([`settle`]).
//!
//! What the tuner then picks where nothing is fixed is `crate::tune`'s.

use crate::codec::CodecKind;
use crate::error::{CompressError, Error};
use crate::march::MarchTuning;
use crate::options::Options;
use crate::plan::{PlanOptions, Scheme};
use crate::program::Program;
use crate::settled::{CudaSettings, March, Settled, DEFAULT_PIN_THREADS};

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

pub use crate::settled::Fixed;

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
/// separately, array by array, by [`compress_rates`] (they need the shape), which refuses a
/// codec name [`codec`] does not know; here such a name leaves the default.
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

/// A call's settings as the tuner, fusion and the executors read them, resolved once: what
/// `opts` and `program`'s clauses fix, the fused step count, and the CUDA backend's settings
/// with their defaults. The kernels' compile-time shape is the option if set, else
/// `PACC_MARCH`, else the translator's defaults (the tuner's pick replaces it where neither
/// fixed it: [`CudaSettings::march_fixed`]); a `PACC_MARCH` that does not parse is kept for
/// the CUDA backend to refuse where it compiles.
pub fn settle(program: &Program, opts: &Options) -> Settled {
    let c = &opts.cuda;
    let march = match c.march {
        Some(t) => March::from(t),
        None => match MarchTuning::from_env() {
            Ok(t) => March::from(t.unwrap_or_default()),
            Err(Error::Option(m)) => March::unreadable(m),
            Err(e) => March::unreadable(e.to_string()),
        },
    };
    Settled {
        fixed: Fixed::of(program, opts),
        scheme_fixed: opts.scheme.is_some(),
        compress_when: opts.compress_when,
        fuse: fuse(opts),
        fusion_free: opts.fuse.is_none(),
        fuse_from: opts.source_of("fuse"),
        durable: opts.checkpoint.is_some() || opts.resume.is_some(),
        on_progress: opts.on_progress.clone(),
        cuda: CudaSettings {
            fma: c.fma,
            trace: c.trace.clone(),
            kernel_form: c.kernel_form,
            march,
            march_fixed: c.march.is_some() || crate::env::var_os("PACC_MARCH").is_some(),
            unpadded_rows: c.unpadded_rows,
            pin_threads: c.pin_threads.unwrap_or(DEFAULT_PIN_THREADS).max(1),
            pin_overlap: !c.pin_upfront,
            host_path: c.host_path,
            codec_grid: c.codec_grid,
            serial_stream: c.serial_stream,
        },
    }
}

/// The rate each physical array is compressed at (`None`: uncompressed) on arrays of `shape`
/// under `scheme`: the directive's clause (unless [`Options::compress_off`]), then
/// [`Options::compress_all`] (arrays the steps write, and inputs only with
/// [`Options::compress_inputs`]; never scratch arrays), then [`Options::compress`], each
/// overriding the one before array by array; then checked (`crate::compress::check`).
pub fn compress_rates(
    program: &Program,
    shape: &[usize],
    scheme: crate::plan::Scheme,
    opts: &Options,
) -> Result<Vec<Option<f64>>, crate::error::CompressError> {
    use crate::compress::{input_only, scratch, unknown_array};
    let mut rates: Vec<Option<f64>> = vec![None; program.arrays.len()];
    if !opts.compress_off {
        for c in &program.compress {
            if let Some(slot) = rates.get_mut(c.array) {
                *slot = Some(c.rate);
            }
        }
    }
    if let Some(r) = opts.compress_all {
        for (a, slot) in rates.iter_mut().enumerate() {
            if !scratch(program, a) && (opts.compress_inputs || !input_only(program, a)) {
                *slot = Some(r);
            }
        }
    }
    for (name, r) in &opts.compress {
        let a = (program.array_index(name)).ok_or_else(|| unknown_array(program, name))?;
        rates[a] = Some(*r);
    }
    crate::compress::check(program, shape, scheme, rates, || codec(program, opts))
}

/// The planner options of a call on arrays of `shape` for `steps` steps before any tuning:
/// [`plan_options`] and each array's compression rate ([`compress_rates`]; none when no array
/// is compressed). The session and each distributed rank start from this.
pub fn resolve(
    program: &Program,
    shape: &[usize],
    steps: usize,
    opts: &Options,
) -> Result<PlanOptions, Error> {
    let mut popts = plan_options(program, shape[0], steps, opts);
    popts.compress = compress_rates(program, shape, popts.scheme, opts)?;
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
    fn settle_resolves_what_every_layer_reads_once() {
        use crate::options::Origin;
        let with_clauses = program(Some(6), None);
        let s = settle(&with_clauses, &Options::new().fuse(1));
        let want = Fixed {
            chunks: Some(6),
            block_steps: None,
        };
        assert_eq!(s.fixed, want, "the clause");
        assert!(!s.scheme_fixed && !s.durable);
        assert_eq!(s.fuse, None);
        assert!(
            !s.fusion_free,
            "asking for 1 step per launch fixes single steps"
        );
        let t = MarchTuning::parse("bx=64,by=4").unwrap();
        let o = Options::new()
            .fuse(3)
            .scheme(Scheme::StagedCopy)
            .checkpoint("/tmp/ckpt", 2)
            .page_locking(0, false)
            .march(t)
            .set_by("fuse", Origin::Environment);
        let s = settle(&with_clauses, &o);
        assert_eq!((s.fuse, s.fusion_free), (Some(3), false));
        assert_eq!(s.fuse_from, "`PACC_FUSE`");
        assert!(s.scheme_fixed && s.durable);
        assert_eq!((s.cuda.pin_threads, s.cuda.pin_overlap), (1, false));
        assert_eq!(
            s.cuda.march.get().unwrap(),
            t,
            "the option beats `PACC_MARCH`"
        );
        assert!(s.cuda.march_fixed);
        // A call that sets nothing settles to the defaults the layers below would have applied.
        if crate::env::var_os("PACC_MARCH").is_none() {
            let s = settle(&program(None, None), &Options::new());
            let d = Settled::default();
            assert_eq!(s.cuda, d.cuda);
            assert_eq!(s.cuda.pin_threads, DEFAULT_PIN_THREADS);
            assert_eq!(
                (s.fixed, s.fuse, s.fusion_free),
                (d.fixed, d.fuse, d.fusion_free)
            );
            assert_eq!((&s.fuse_from, s.durable), (&d.fuse_from, d.durable));
        }
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
