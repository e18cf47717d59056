//! Whether compression pays for a call: the tuner's decision under
//! [`CompressWhen::Auto`](crate::options::CompressWhen::Auto).
//!
//! Compression trades link bytes for device work: the codec's kernels read and write HBM beside
//! the memory-bound stencil and take SM time. It pays only where the link, not the kernels,
//! sets the pace, and only from the second pass on (the first pass loads raw arrays, the last
//! writes raw results). The model prices both plans of the call, built as they would run:
//!
//! * uncompressed: [`predict`];
//! * compressed: the link moves the compressed bytes; the kernels' time grows by the codec's HBM
//!   traffic (raw plus compressed bytes, read or written once each) at the device's memory rate,
//!   which the stencil would otherwise have had; and the codec's own compute (encode and decode
//!   bytes at the rates the probe measured on the whole GPU) is a term of its own.
//!
//! Both are combined by the model's one rule, [`block_time`](super::model::block_time), as the
//! plan's tiling overlaps its resources.
//!
//! It compresses when the uncompressed run is link-bound and the compressed one is predicted at
//! least [`MARGIN`] faster; the reason, with both predictions, goes into the report.

use super::model::{predict, Rates};
use crate::plan::{self, OpKind, Plan, PlanOptions};
use crate::program::Program;

/// The least predicted gain that makes the tuner compress (model error, and the fidelity the
/// caller gives up).
pub const MARGIN: f64 = 0.95;

/// Bytes per second the codec encodes and decodes on the whole GPU (uncompressed bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodecSpeed {
    pub encode: f64,
    pub decode: f64,
}

/// The tuner's decision and why.
#[derive(Clone, Debug, PartialEq)]
pub struct CompressionDecision {
    /// Per physical array, the rate to run with (all `None`: no compression).
    pub compress: Vec<Option<f64>>,
    pub reason: String,
    /// Whether the uncompressed run is link-bound.
    pub link_bound: bool,
    /// Predicted seconds of the whole run, uncompressed and compressed.
    pub plain_seconds: f64,
    pub compressed_seconds: f64,
}

/// The seconds a run of `plan` takes in the model: its resources' busy time, with the codec's
/// compute and HBM traffic where it compresses.
fn seconds(program: &Program, plan: &Plan, rates: &Rates, codec: &[CodecSpeed]) -> (f64, f64, f64) {
    let p = predict(program, plan, rates);
    let (mut raw_enc, mut raw_dec, mut coded) = (0u64, 0u64, 0u64);
    let mut compute = 0.0;
    for op in &plan.ops {
        let (array, planes, encode) = match &op.kind {
            OpKind::Encode { array, planes, .. } => (*array, planes, true),
            OpKind::Decode { array, planes, .. } => (*array, planes, false),
            _ => continue,
        };
        let bytes = raw(plan, array, planes.len());
        coded += plan
            .compressed(array)
            .map_or(bytes, |c| c.bytes(planes) as u64);
        // Each array at its own element type's and rate's speed.
        let speed = codec.get(array).or(codec.first());
        if encode {
            raw_enc += bytes;
            compute += speed.map_or(0.0, |c| bytes as f64 / c.encode);
        } else {
            raw_dec += bytes;
            compute += speed.map_or(0.0, |c| bytes as f64 / c.decode);
        }
    }
    // A device copy reads and writes each byte: HBM moves twice the copy rate.
    let hbm = (raw_enc + raw_dec + coded) as f64 / (2.0 * rates.dtod_rate);
    let mut p = p;
    p.kernel_seconds += hbm;
    p.codec_seconds = compute;
    let total = super::model::block_time(&p, plan.chunks, plan.scheme, rates);
    (total, p.link_seconds + p.dtod_seconds, p.kernel_seconds)
}

fn raw(plan: &Plan, array: usize, planes: usize) -> u64 {
    (planes * plan.plane_len * plan.elem_sizes[array]) as u64
}

/// The arrays of `rates` by name, for the reason.
fn names(program: &Program, rates: &[Option<f64>]) -> String {
    let named: Vec<String> = (rates.iter().enumerate())
        .filter_map(|(a, r)| r.map(|r| format!("`{}` at rate {r}", program.arrays[a].name)))
        .collect();
    named.join(", ")
}

/// Decides whether the call (`popts`, whose `compress` holds the rates the caller allows) runs
/// compressed; `points` are the point statements' planes (as for [`plan::build`]); `codec`
/// holds, per physical array, the codec's speed at that array's element type and rate (read for
/// the arrays `popts` compresses).
pub fn decide(
    program: &Program,
    shape: &[usize],
    steps: usize,
    points: &[usize],
    popts: &PlanOptions,
    rates: &Rates,
    codec: &[CodecSpeed],
) -> Result<CompressionDecision, plan::PlanError> {
    let plain_opts = PlanOptions {
        compress: Vec::new(),
        ..popts.clone()
    };
    let plain = plan::build(program, shape, steps, points, &plain_opts)?;
    let packed = plan::build(program, shape, steps, points, popts)?;
    let (p, p_link, p_kernels) = seconds(program, &plain, rates, codec);
    let (c, ..) = seconds(program, &packed, rates, codec);
    let link_bound = p_link >= p_kernels;
    let arrays = names(program, &popts.compress);
    let codec_name = popts.codec.get().name();
    let blocks = plain.blocks.len();
    let (go, why) = if blocks < 2 {
        let why = format!(
            "one block ({steps} steps): every byte crosses the link raw, so there is nothing to compress"
        );
        (false, why)
    } else if !link_bound {
        let why = format!(
            "kernel-bound (kernels {p_kernels:.3} s, link {p_link:.3} s over the run): the codec would only add device work"
        );
        (false, why)
    } else if c > p * MARGIN {
        let why = format!(
            "link-bound (link {p_link:.3} s, kernels {p_kernels:.3} s), but compressed is predicted only {:.2}x faster",
            p / c
        );
        (false, why)
    } else {
        let why = format!(
            "link-bound (link {p_link:.3} s, kernels {p_kernels:.3} s over the run): predicted {:.2}x faster",
            p / c
        );
        (true, why)
    };
    let reason = if go {
        format!("compressed {arrays} ({codec_name}): {why} ({c:.3} s against {p:.3} s)")
    } else {
        format!("did not compress {arrays} ({codec_name}): {why}; predicted {c:.3} s compressed, {p:.3} s not")
    };
    Ok(CompressionDecision {
        compress: if go {
            popts.compress.clone()
        } else {
            Vec::new()
        },
        reason,
        link_bound,
        plain_seconds: p,
        compressed_seconds: c,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::CodecKind;
    use crate::plan::Scheme;
    use crate::program::{fixtures, Role};
    use crate::tune::model::LinkRates;

    /// A 3D leap-frog-like step: `a` read with reach 4, `b` written, swapped; `v` read-only.
    fn prog() -> Program {
        let arrays = [("a", Role::InOut), ("b", Role::InOut), ("v", Role::Input)];
        fixtures::one_kernel("p", &arrays, &[(0, 4), (2, 0)], 1, 4)
    }

    /// H100-like rates: 55 GB/s each way, `gpts` billion points per second of kernels.
    fn rates(gpts: f64) -> Rates {
        let link = LinkRates {
            htod: 55e9,
            dtoh: 55e9,
            both: 98e9,
            bytes: 1 << 28,
        };
        Rates::new(link, vec![gpts * 1e9])
    }

    const ZFP: CodecSpeed = CodecSpeed {
        encode: 245e9,
        decode: 270e9,
    };

    fn popts(chunks: usize, block_steps: usize, compress: Vec<Option<f64>>) -> PlanOptions {
        PlanOptions {
            chunks,
            block_steps,
            scheme: Scheme::RegionSharing,
            buffer_sets: Scheme::RegionSharing.buffer_sets(),
            compress,
            codec: CodecKind::Zfp,
            read_only_ring: true,
        }
    }

    const SHAPE: [usize; 3] = [256, 256, 256];
    const WRITTEN: [Option<f64>; 3] = [Some(16.0), Some(16.0), None];

    #[test]
    fn link_bound_runs_compress_and_say_why() {
        // Shallow blocks over fast kernels: every block moves the arrays for 2 steps of work.
        let o = popts(4, 2, WRITTEN.to_vec());
        let d = decide(&prog(), &SHAPE, 16, &[], &o, &rates(100.0), &[ZFP; 3]).unwrap();
        assert!(d.link_bound, "{d:?}");
        assert_eq!(d.compress, WRITTEN.to_vec(), "{}", d.reason);
        assert!(d.compressed_seconds < d.plain_seconds * MARGIN, "{d:?}");
        assert!(d
            .reason
            .starts_with("compressed `a` at rate 16, `b` at rate 16 (zfp): link-bound"));
    }

    #[test]
    fn kernel_bound_runs_do_not_compress() {
        // Slow kernels: the link waits for them, and the codec would only add device work.
        let o = popts(4, 8, WRITTEN.to_vec());
        let d = decide(&prog(), &SHAPE, 16, &[], &o, &rates(0.5), &[ZFP; 3]).unwrap();
        assert!(!d.link_bound, "{d:?}");
        assert!(d.compress.iter().all(Option::is_none), "{}", d.reason);
        assert!(d.reason.contains("kernel-bound"), "{}", d.reason);
    }

    #[test]
    fn one_block_has_nothing_to_compress() {
        let o = popts(4, 16, WRITTEN.to_vec());
        let d = decide(&prog(), &SHAPE, 16, &[], &o, &rates(100.0), &[ZFP; 3]).unwrap();
        assert!(d.compress.is_empty(), "{d:?}");
        assert!(d.reason.contains("one block (16 steps)"), "{}", d.reason);
    }

    #[test]
    fn a_slow_codec_keeps_a_link_bound_run_raw() {
        // A codec slower than the link it saves: compressed would not be 5% faster.
        let slow = CodecSpeed {
            encode: 5e9,
            decode: 5e9,
        };
        let o = popts(4, 2, WRITTEN.to_vec());
        let d = decide(&prog(), &SHAPE, 16, &[], &o, &rates(100.0), &[slow; 3]).unwrap();
        assert!(d.link_bound && d.compress.is_empty(), "{d:?}");
        assert!(d.reason.contains("predicted only"), "{}", d.reason);
    }

    /// Each array's encode and decode count at its own speed (its element type's and rate's):
    /// a slow codec for the input alone makes compressing it too cost more than it saves.
    #[test]
    fn each_array_counts_at_its_own_codec_speed() {
        let all = popts(4, 2, vec![Some(16.0); 3]);
        let fast = decide(&prog(), &SHAPE, 16, &[], &all, &rates(100.0), &[ZFP; 3]).unwrap();
        let slow = CodecSpeed {
            encode: 1e9,
            decode: 1e9,
        };
        let mixed = decide(
            &prog(),
            &SHAPE,
            16,
            &[],
            &all,
            &rates(100.0),
            &[ZFP, ZFP, slow],
        );
        let mixed = mixed.unwrap();
        assert!(
            mixed.compressed_seconds > fast.compressed_seconds,
            "{mixed:?} {fast:?}"
        );
    }

    #[test]
    fn compressing_inputs_too_saves_more() {
        let o = popts(4, 2, WRITTEN.to_vec());
        let written = decide(&prog(), &SHAPE, 16, &[], &o, &rates(100.0), &[ZFP; 3]).unwrap();
        let all = popts(4, 2, vec![Some(16.0); 3]);
        let every = decide(&prog(), &SHAPE, 16, &[], &all, &rates(100.0), &[ZFP; 3]).unwrap();
        assert!(
            every.compressed_seconds < written.compressed_seconds,
            "{every:?} {written:?}"
        );
        assert_eq!(every.plain_seconds, written.plain_seconds);
    }
}
