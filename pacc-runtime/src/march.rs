//! The compile-time shape of the marching kernels: thread block, unrolling of the marching loop
//! and the blocks per SM the compiler must fit (which caps registers per thread).
//!
//! The translator writes its defaults as `#ifndef` macros (`PACC_BX`, `PACC_BY`, `PACC_UNROLL`,
//! `PACC_MINB`); a [`MarchTuning`] defines some of them ahead of the source. It comes from
//! [`Options::march`](crate::Options::march), else from `PACC_MARCH`, else, on long CUDA runs,
//! from the tuner, which times [`MarchTuning::candidates`] on a slab of the call's arrays.

use crate::error::Error;
use crate::program::{VECTOR_BLOCK, VECTOR_WIDTH};

/// Overrides of the marching kernels' compile-time shape. Unset fields keep the translator's
/// defaults.
///
/// ```
/// use pacc_runtime::MarchTuning;
/// let t = MarchTuning::parse("unroll=1,minb=3").unwrap();
/// assert_eq!((t.unroll, t.minb), (Some(1), Some(3)));
/// assert!(MarchTuning::parse("bx=64,by=32").is_err()); // 2048 threads per block
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MarchTuning {
    /// Threads along the fastest axis.
    pub bx: Option<u32>,
    /// Threads along the second-fastest axis (3D).
    pub by: Option<u32>,
    /// Steps of the marching loop the compiler may unroll (1..=8).
    pub unroll: Option<u32>,
    /// Blocks per SM the compiler must fit (`__launch_bounds__`' second argument, 1..=32).
    pub minb: Option<u32>,
    /// In-plane reads from tiles in shared memory (1, the staged form) or through the L1
    /// cache (0).
    pub stage: Option<u32>,
    /// Planes beyond the next that the marching loop asks the L2 for (0..=16; 0: none).
    pub prefetch: Option<u32>,
    /// Rows of the plane each thread of a 3D kernel computes (1..=8; `PACC_RY`): a block
    /// covers `by * ry` rows, and the loop control, addresses, halo cell and barrier of a step
    /// serve `ry` points.
    pub ry: Option<u32>,
    /// Points along x per thread of a 3D kernel (`PACC_VX`): 4 runs the vector form
    /// ([`VECTOR_SUFFIX`](crate::program::VECTOR_SUFFIX)) wherever the source has one and the
    /// rows allow it, the default; 1 runs the scalar forms (where `stage`, `prefetch` and `ry`
    /// apply). `bx`, `by`, `unroll` and `minb` shape whichever form a kernel runs.
    pub vx: Option<u32>,
}

/// Threads per SM of an H100 class device, which the candidates' occupancy targets divide.
const SM_THREADS: u32 = 2048;

impl MarchTuning {
    /// `PACC_MARCH` if set (parsed), else no override. Which one a run uses is
    /// [`crate::config::settle`]'s to say.
    pub fn from_env() -> Result<Option<MarchTuning>, Error> {
        crate::env::var("PACC_MARCH")
            .map(|v| MarchTuning::parse(&v))
            .transpose()
    }

    /// `PACC_MARCH` syntax: comma-separated `bx=N`, `by=N`, `unroll=N`, `minb=N`, `stage=0|1`,
    /// `prefetch=N`, `ry=N`, `vx=1|4`.
    pub fn parse(v: &str) -> Result<MarchTuning, Error> {
        let bad = |what: &str| {
            Error::Option(format!(
                "PACC_MARCH=`{v}`: {what}; expected comma-separated bx=N, by=N (threads, \
                 bx * by <= 1024), unroll=N (1..=8), minb=N (blocks per SM, 1..=32), \
                 stage=0|1 (in-plane reads through the L1 cache or from shared memory), \
                 prefetch=N (planes ahead asked of the L2, 0..=16), ry=N (rows per thread \
                 in 3D, 1..=8) and vx=1|4 (points along x per thread in 3D: 4 is the vector \
                 form)"
            ))
        };
        let mut t = MarchTuning::default();
        for item in v.split(',').filter(|s| !s.trim().is_empty()) {
            let (k, val) = item
                .split_once('=')
                .ok_or_else(|| bad("an item lacks `=`"))?;
            let n: u32 = val
                .trim()
                .parse()
                .map_err(|_| bad("a value is not a number"))?;
            match k.trim() {
                "bx" if n > 0 => t.bx = Some(n),
                "by" if n > 0 => t.by = Some(n),
                "unroll" if (1..=8).contains(&n) => t.unroll = Some(n),
                "minb" if (1..=32).contains(&n) => t.minb = Some(n),
                "stage" if n <= 1 => t.stage = Some(n),
                "prefetch" if n <= 16 => t.prefetch = Some(n),
                "ry" if (1..=8).contains(&n) => t.ry = Some(n),
                "vx" if n == 1 || n as usize == VECTOR_WIDTH => t.vx = Some(n),
                _ => return Err(bad("unknown key or value out of range")),
            }
        }
        if t.bx.unwrap_or(1) * t.by.unwrap_or(1) > 1024 {
            return Err(bad("more than 1024 threads per block"));
        }
        if t.vector_only_scalar_keys() {
            return Err(bad(
                "stage, prefetch and ry shape the scalar forms: add vx=1 to run those",
            ));
        }
        Ok(t)
    }

    /// The `PACC_MARCH` form of the overrides (empty when there are none).
    pub fn describe(&self) -> String {
        let f = [
            ("bx", self.bx),
            ("by", self.by),
            ("unroll", self.unroll),
            ("minb", self.minb),
            ("stage", self.stage),
            ("prefetch", self.prefetch),
            ("ry", self.ry),
            ("vx", self.vx),
        ];
        f.iter()
            .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The shapes the tuner times for a kernel whose default block is `block`, in a source
    /// whose default form is staged (`Some(true)`), L1 (`Some(false)`), or that has no staged
    /// form (`None`, see [`MarchTuning::stage_forms`]): the default, then room for 1024, 1536
    /// and 2048 resident threads per SM, the default with L2 prefetching two planes ahead, then
    /// the other form, if any, at the default shape and at 1536 threads. Fewer registers per thread let more threads hide memory latency, until the
    /// compiler spills; unrolling needs registers too, so the tighter two do not unroll. On the
    /// H100 the best of these differs by program and plane size (`benches/results/`).
    ///
    /// A source with 3D kernels (`rows`, see [`MarchTuning::row_forms`]) adds two and four rows
    /// per thread in the default form: fewer instructions per point, at 1.16x for `propagate`
    /// at 512³ with four rows (128 registers, one block per SM) on the H100.
    ///
    /// A source with vector forms (`vector`, see [`MarchTuning::vector_forms`]) runs them by
    /// default, so the list starts with their shapes (the default 16 x 16 threads with two
    /// blocks per SM, one block per SM, 32 x 8, and 32 x 16 with one block), then the scalar
    /// forms' default, four rows per thread and the other in-plane form, each with `vx=1`.
    pub fn candidates(
        block: [u32; 2],
        staged: Option<bool>,
        rows: bool,
        vector: bool,
    ) -> Vec<MarchTuning> {
        if !vector {
            return Self::scalar_candidates(block, staged, rows);
        }
        let scalar = MarchTuning {
            vx: Some(1),
            ..MarchTuning::default()
        };
        let mut out = vec![
            MarchTuning::default(),
            MarchTuning {
                minb: Some(1),
                ..MarchTuning::default()
            },
            MarchTuning {
                bx: Some(32),
                by: Some(8),
                ..MarchTuning::default()
            },
            MarchTuning {
                bx: Some(32),
                by: Some(16),
                minb: Some(1),
                ..MarchTuning::default()
            },
            scalar,
        ];
        if rows {
            out.push(MarchTuning {
                ry: Some(4),
                ..scalar
            });
        }
        if let Some(staged) = staged {
            out.push(MarchTuning {
                stage: Some(u32::from(!staged)),
                ..scalar
            });
        }
        out
    }

    /// [`MarchTuning::candidates`] of a source without vector forms.
    fn scalar_candidates(block: [u32; 2], staged: Option<bool>, rows: bool) -> Vec<MarchTuning> {
        let threads = (block[0] * block[1]).max(1);
        let minb = |per_sm: u32| (per_sm / threads).clamp(1, 32);
        let mut out = vec![MarchTuning::default()];
        let mut push = |t: MarchTuning| {
            if !out.contains(&t) {
                out.push(t);
            }
        };
        // With the default unrolling, a cap of one block per SM is the default itself.
        if minb(1024) > 1 {
            push(MarchTuning {
                minb: Some(minb(1024)),
                ..MarchTuning::default()
            });
        }
        let tight = |per_sm: u32| MarchTuning {
            unroll: Some(1),
            minb: Some(minb(per_sm)),
            ..MarchTuning::default()
        };
        push(tight(1536));
        push(tight(SM_THREADS));
        // Asking the L2 for planes two steps ahead: 1.07-1.08x on the H100 for `propagate` at
        // 820³ and the sponge model at 1000³, 0.85x for `propagate` at 512³ and 0.97x for Himeno.
        push(MarchTuning {
            prefetch: Some(2),
            ..MarchTuning::default()
        });
        if rows {
            for ry in [2, 4] {
                push(MarchTuning {
                    ry: Some(ry),
                    ..MarchTuning::default()
                });
            }
        }
        let Some(staged) = staged else { return out };
        let other = Some(u32::from(!staged));
        push(MarchTuning {
            stage: other,
            ..MarchTuning::default()
        });
        push(MarchTuning {
            stage: other,
            ..tight(1536)
        });
        out
    }

    /// Whether `source` (a generated program) has a staged form of some kernel (`None`: it has
    /// none, so `stage` changes nothing), and if so whether it uses it unless told otherwise
    /// (its header's `#define PACC_STAGE`).
    pub fn stage_forms(source: &str) -> Option<bool> {
        source
            .contains("#if PACC_STAGE")
            .then(|| source.contains("#define PACC_STAGE 1\n"))
    }

    /// Whether `source` has kernels that take `PACC_RY` (3D marching kernels).
    pub fn row_forms(source: &str) -> bool {
        source.contains("#define PACC_RY ")
    }

    /// Rows per thread (1 unless set).
    pub fn rows(&self) -> u32 {
        self.ry.unwrap_or(1)
    }

    /// The program's source with the overrides defined ahead of its own defaults.
    pub fn source<'a>(&self, source: &'a str) -> std::borrow::Cow<'a, str> {
        if *self == MarchTuning::default() {
            return source.into();
        }
        let mut s = String::new();
        // The shape keys apply to the scalar and the vector forms alike (`PACC_V*`).
        let defs = [
            ("PACC_BX", self.bx),
            ("PACC_BY", self.by),
            ("PACC_UNROLL", self.unroll),
            ("PACC_MINB", self.minb),
            ("PACC_STAGE", self.stage),
            ("PACC_PREFETCH", self.prefetch),
            ("PACC_RY", self.ry),
            // Scalar forms only: the vector forms need not be compiled.
            ("PACC_VX", self.vx.or((!self.vector()).then_some(1))),
            ("PACC_VBX", self.bx),
            ("PACC_VBY", self.by),
            ("PACC_VUNROLL", self.unroll),
            ("PACC_VMINB", self.minb),
        ];
        for (name, v) in defs {
            if let Some(v) = v {
                s.push_str(&format!("#define {name} {v}\n"));
            }
        }
        s.push_str(source);
        s.into()
    }

    /// The thread block, `default` where not overridden.
    pub fn block(&self, [bx, by]: [u32; 2]) -> [u32; 2] {
        [self.bx.unwrap_or(bx), self.by.unwrap_or(by)]
    }

    /// Whether 3D kernels run their vector forms where they have one: `vx=4`, or `vx` unset
    /// and none of the keys that shape only the scalar forms (`stage`, `prefetch`, `ry`) set.
    pub fn vector(&self) -> bool {
        match self.vx {
            Some(v) => v != 1,
            None => self.stage.is_none() && self.prefetch.is_none() && self.ry.is_none(),
        }
    }

    /// These overrides for a kernel that has no vector form: its scalar forms, shaped alike.
    pub fn scalar(&self) -> MarchTuning {
        MarchTuning {
            vx: Some(1),
            ..*self
        }
    }

    /// The thread block of a vector form, [`VECTOR_BLOCK`] where not overridden.
    pub fn vector_block(&self) -> [u32; 2] {
        self.block(VECTOR_BLOCK)
    }

    /// Whether keys that only shape the scalar forms are set while the vector form would run.
    fn vector_only_scalar_keys(&self) -> bool {
        self.vx.is_some_and(|v| v != 1)
            && (self.stage.is_some() || self.prefetch.is_some() || self.ry.is_some())
    }

    /// Whether `source` has vector forms (3D marching kernels compiled with `PACC_VX`).
    pub fn vector_forms(source: &str) -> bool {
        source.contains(crate::program::VECTOR_SUFFIX) && source.contains("#define PACC_VX ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_key_and_refuses_out_of_range() {
        let t = MarchTuning::parse("bx=32, by=16,unroll=4,minb=2").unwrap();
        assert_eq!(t.block([64, 8]), [32, 16]);
        assert_eq!((t.unroll, t.minb), (Some(4), Some(2)));
        assert_eq!(t.describe(), "bx=32,by=16,unroll=4,minb=2");
        for bad in ["minb=0", "minb=33", "unroll=9", "bx", "bz=4", "bx=x"] {
            assert!(MarchTuning::parse(bad).is_err(), "{bad}");
        }
        // The error names the variable, the value and what is accepted.
        let e = MarchTuning::parse("minb=40").unwrap_err().to_string();
        assert!(e.contains("PACC_MARCH=`minb=40`"), "{e}");
        assert!(e.contains("out of range"), "{e}");
        assert!(e.contains("minb=N (blocks per SM, 1..=32)"), "{e}");
    }

    #[test]
    fn source_defines_only_the_overrides() {
        let src = "#ifndef PACC_MINB\n#define PACC_MINB 1\n#endif\n";
        assert_eq!(MarchTuning::default().source(src), src);
        let t = MarchTuning {
            minb: Some(3),
            ..MarchTuning::default()
        };
        assert_eq!(
            t.source(src),
            format!("#define PACC_MINB 3\n#define PACC_VMINB 3\n{src}")
        );
    }

    #[test]
    fn candidates_target_resident_threads() {
        let c = MarchTuning::candidates([64, 8], Some(true), false, false);
        let got: Vec<_> = c.iter().map(|t| (t.unroll, t.minb, t.stage)).collect();
        assert_eq!(c[4].prefetch, Some(2));
        assert_eq!(c.iter().filter(|t| t.prefetch.is_some()).count(), 1);
        assert_eq!(
            got,
            [
                (None, None, None),
                (None, Some(2), None),
                (Some(1), Some(3), None),
                (Some(1), Some(4), None),
                (None, None, None),
                // The other form (L1), at the default shape and at 1536 threads.
                (None, None, Some(0)),
                (Some(1), Some(3), Some(0)),
            ]
        );
        // A block of 1024 threads: one per SM is the default, two is the most.
        let c = MarchTuning::candidates([256, 4], Some(false), false, false);
        let got: Vec<_> = c.iter().map(|t| (t.unroll, t.minb, t.stage)).collect();
        assert_eq!(
            got,
            [
                (None, None, None),
                (Some(1), Some(1), None),
                (Some(1), Some(2), None),
                (None, None, None),
                (None, None, Some(1)),
                (Some(1), Some(1), Some(1)),
            ]
        );
        // No staged form (every in-plane read diagonal, say): no stage candidates.
        let c = MarchTuning::candidates([64, 8], None, false, false);
        assert_eq!(c.len(), 5);
        assert!(c.iter().all(|t| t.stage.is_none()));
        // 3D kernels: two and four rows per thread, after the prefetch candidate.
        let c = MarchTuning::candidates([64, 8], Some(true), true, false);
        let rows: Vec<_> = c.iter().map(|t| t.rows()).collect();
        assert_eq!(rows, [1, 1, 1, 1, 1, 2, 4, 1, 1]);
        assert_eq!(c[6].describe(), "ry=4");
        assert!(c.iter().all(|t| t.vx.is_none()));
    }

    #[test]
    fn vector_sources_time_vector_shapes_first_then_the_scalar_forms() {
        let c = MarchTuning::candidates([64, 8], Some(true), true, true);
        let d: Vec<_> = c.iter().map(MarchTuning::describe).collect();
        assert_eq!(
            d,
            [
                "",
                "minb=1",
                "bx=32,by=8",
                "bx=32,by=16,minb=1",
                "vx=1",
                "ry=4,vx=1",
                "stage=0,vx=1"
            ]
        );
        let vec: Vec<_> = c.iter().map(MarchTuning::vector).collect();
        assert_eq!(vec, [true, true, true, true, false, false, false]);
        // Without staged or row forms only the scalar default joins.
        assert_eq!(MarchTuning::candidates([64, 8], None, false, true).len(), 5);
    }

    #[test]
    fn vx_selects_the_form_and_refuses_scalar_keys_with_the_vector_form() {
        // Unset: the vector form, unless a key of the scalar forms asks for them.
        assert!(MarchTuning::default().vector());
        assert!(MarchTuning::parse("bx=32").unwrap().vector());
        assert!(!MarchTuning::parse("ry=4").unwrap().vector());
        assert!(!MarchTuning::parse("stage=0").unwrap().vector());
        assert!(!MarchTuning::parse("vx=1").unwrap().vector());
        assert!(MarchTuning::parse("vx=4,minb=1").unwrap().vector());
        let e = MarchTuning::parse("vx=4,ry=2").unwrap_err().to_string();
        assert!(e.contains("add vx=1"), "{e}");
        let e = MarchTuning::parse("vx=2").unwrap_err().to_string();
        assert!(e.contains("vx=1|4"), "{e}");
        // The scalar keys leave the vector forms out of the compile; shape keys serve both.
        let src = "#ifndef PACC_VX\n#define PACC_VX 4\n#endif\n";
        assert!(MarchTuning::parse("ry=4")
            .unwrap()
            .source(src)
            .contains("#define PACC_VX 1\n"));
        let s = MarchTuning::parse("bx=32,by=8")
            .unwrap()
            .source(src)
            .into_owned();
        assert!(
            s.contains("#define PACC_BX 32\n") && s.contains("#define PACC_VBX 32\n"),
            "{s}"
        );
        assert_eq!(s.matches("#define PACC_VX ").count(), 1, "{s}");
        assert_eq!(MarchTuning::default().vector_block(), [16, 16]);
        assert_eq!(MarchTuning::parse("by=8").unwrap().vector_block(), [16, 8]);
        assert!(MarchTuning::vector_forms(
            "#define PACC_VX 4\n void k0_vec("
        ));
        assert!(!MarchTuning::vector_forms("#define PACC_RY 1\n"));
    }

    #[test]
    fn the_default_form_is_read_from_the_source() {
        let staged = "#ifndef PACC_STAGE\n#define PACC_STAGE 1\n#endif\n#if PACC_STAGE && X\n";
        assert_eq!(MarchTuning::stage_forms(staged), Some(true));
        assert_eq!(
            MarchTuning::stage_forms("#define PACC_STAGE 0\n#if PACC_STAGE && X\n"),
            Some(false)
        );
        // A default but no staged kernel (Himeno: diagonal reads only).
        assert_eq!(MarchTuning::stage_forms("#define PACC_STAGE 1\n"), None);
        // An override is defined ahead of the default, which it shadows.
        let t = MarchTuning::parse("stage=0").unwrap();
        assert!(t.source(staged).starts_with("#define PACC_STAGE 0\n"));
        assert_eq!(t.describe(), "stage=0");
        let e = MarchTuning::parse("stage=2").unwrap_err().to_string();
        assert!(
            e.contains("PACC_MARCH=`stage=2`") && e.contains("stage=0|1"),
            "{e}"
        );
        let p = MarchTuning::parse("prefetch=2").unwrap();
        assert_eq!(p.describe(), "prefetch=2");
        assert!(p.source(staged).starts_with("#define PACC_PREFETCH 2\n"));
        let r = MarchTuning::parse("ry=4").unwrap();
        assert_eq!((r.rows(), r.describe()), (4, "ry=4".to_string()));
        assert!(r.source(staged).starts_with("#define PACC_RY 4\n"));
        for bad in ["ry=9", "ry=0"] {
            let e = MarchTuning::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains("out of range") && e.contains("ry=N (rows per thread in 3D, 1..=8)"),
                "{e}"
            );
        }
        assert!(MarchTuning::row_forms(
            "#ifndef PACC_RY\n#define PACC_RY 1\n#endif\n"
        ));
        assert!(!MarchTuning::row_forms(staged));
        let e = MarchTuning::parse("prefetch=17").unwrap_err().to_string();
        assert!(
            e.contains("out of range") && e.contains("prefetch=N"),
            "{e}"
        );
    }
}
