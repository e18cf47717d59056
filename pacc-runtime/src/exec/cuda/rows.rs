//! The rows of the device buffers: where each row of the last axis starts.
//!
//! A warp of a marching kernel reads 32 or 64 consecutive elements of one row. When rows are
//! `n * 4` bytes long and `n * 4` is not a multiple of 128, most rows start inside a 128-byte
//! line, and every warp access touches one line and sector more than it needs. On the H100 the
//! staged `propagate` kernel ran at 140-142 Gpt/s on cubes of 768, 832, 896 and 1024 (rows a
//! multiple of 128 bytes) but at 120-123 on 816, 820 and 824
//! (`benches/results/2026-11-25-h100-row-pitch/`). So the runtime pads rows on the device to a
//! multiple of 128 bytes for programs whose kernels take the row pitch
//! ([`Program::row_pitch`]); host arrays keep their layout, and the transfers are strided
//! copies, which ran at the flat copies' rate there.

use crate::plan::Plan;
use crate::program::Program;

/// Bytes a padded row starts on.
pub const ROW_ALIGN: usize = 128;

/// The layout of one plane in a device buffer: `rows` rows of `len` elements, `pitch`
/// elements apart (3D: a plane holds `n1` rows of `n2`; 2D: one row of `n1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rows {
    pub rows: usize,
    pub len: usize,
    pub pitch: usize,
}

impl Rows {
    /// The host's layout: rows back to back.
    pub fn flat(shape: &[usize]) -> Rows {
        let len = shape.last().copied().unwrap_or(1);
        let rows = if shape.len() == 3 { shape[1] } else { 1 };
        Rows {
            rows,
            len,
            pitch: len,
        }
    }

    /// Rows starting on [`ROW_ALIGN`] bytes for every element size in `elem_sizes` (one pitch
    /// in elements serves every array, since the kernels take one).
    pub fn aligned(shape: &[usize], elem_sizes: &[usize]) -> Rows {
        let flat = Rows::flat(shape);
        let smallest = elem_sizes.iter().copied().min().unwrap_or(4).max(1);
        let step = (ROW_ALIGN / smallest).max(1);
        Rows {
            pitch: flat.len.next_multiple_of(step),
            ..flat
        }
    }

    pub fn padded(&self) -> bool {
        self.pitch != self.len
    }

    /// Elements of one plane on the device.
    pub fn plane_len(&self) -> usize {
        self.rows * self.pitch
    }

    /// The copies that move `n` host bytes (whole rows, back to back) of elements of `elem`
    /// bytes to or from this layout, split at the host offsets `cuts` (ascending, inside
    /// `0..n`): one copy per piece of the host side, since the driver rejects a copy spanning
    /// two page-locked registrations. Without cuts it is one flat or one strided copy.
    pub fn segments(&self, n: usize, elem: usize, cuts: &[usize]) -> Vec<Segment> {
        let (hr, dr) = (self.len * elem, self.pitch * elem);
        let dev = |h: usize| h / hr * dr + h % hr;
        let bounds = std::iter::once(0).chain(cuts.iter().copied()).chain([n]);
        let mut out = Vec::new();
        let mut lo = 0;
        for hi in bounds.skip(1) {
            if !self.padded() || hr == 0 {
                out.push(Segment::Flat {
                    host: lo,
                    dev: lo,
                    len: hi - lo,
                });
                lo = hi;
                continue;
            }
            // A partial row first, then whole rows, then a partial row.
            let first_full = lo.next_multiple_of(hr).min(hi);
            if first_full > lo {
                out.push(Segment::Flat {
                    host: lo,
                    dev: dev(lo),
                    len: first_full - lo,
                });
            }
            let rows = (hi - first_full) / hr;
            if rows > 0 {
                out.push(Segment::Rows {
                    host: first_full,
                    dev: dev(first_full),
                    rows,
                });
            }
            let tail = first_full + rows * hr;
            if hi > tail {
                out.push(Segment::Flat {
                    host: tail,
                    dev: dev(tail),
                    len: hi - tail,
                });
            }
            lo = hi;
        }
        out
    }

    /// Device bytes the plan's buffer sets and ring need beyond the flat layout.
    pub fn extra_bytes(&self, plan: &Plan) -> u64 {
        let per_elem_plane = (self.plane_len() - self.rows * self.len) as u64;
        let elem_planes: u64 = (plan.elem_sizes.iter().enumerate())
            .map(|(a, &e)| (e * plan.device_planes(a)) as u64)
            .sum();
        per_elem_plane * elem_planes
    }
}

/// One copy of a transfer (offsets in bytes from the transfer's start on each side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Segment {
    /// `len` contiguous bytes on both sides.
    Flat { host: usize, dev: usize, len: usize },
    /// `rows` whole rows, back to back on the host and a pitch apart on the device.
    Rows {
        host: usize,
        dev: usize,
        rows: usize,
    },
}

/// The rows a run uses, and a note for the report when they are padded or why they are not.
/// `spare` is the device memory left after the flat plan's needs; `pad` is the caller's wish
/// (`Options::row_padding`).
pub(crate) fn choose(
    program: &Program,
    plan: &Plan,
    pad: bool,
    spare: u64,
) -> (Rows, Option<String>) {
    let flat = Rows::flat(&plan.shape);
    let aligned = Rows::aligned(&plan.shape, &plan.elem_sizes);
    // Rows of one element are a 1D program's planes (`host::describe`): padding each to 128
    // bytes would multiply the device memory by 16 or 32 and spread the points apart.
    if !program.row_pitch || !aligned.padded() || !pad || flat.len == 1 {
        return (flat, None);
    }
    let extra = aligned.extra_bytes(plan);
    let why_not = if plan.compression.iter().any(Option::is_some) {
        Some("the codec reads and writes whole planes".to_string())
    } else if extra > spare {
        Some(format!(
            "they would need {} more bytes of device memory than are free",
            extra - spare
        ))
    } else {
        None
    };
    match why_not {
        Some(why) => (
            flat,
            Some(format!(
                "rows of {} elements are not padded to {ROW_ALIGN} bytes on the device: {why}",
                flat.len
            )),
        ),
        None => (
            aligned,
            Some(format!(
                "rows padded from {} to {} elements on the device (each row starts on {ROW_ALIGN} bytes; PACC_PAD_ROWS=0 turns this off)",
                aligned.len, aligned.pitch
            )),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pitch_rounds_rows_up_to_128_bytes_of_the_smallest_element() {
        let r = Rows::aligned(&[10, 820, 820], &[4, 4, 4]);
        assert_eq!((r.rows, r.len, r.pitch), (820, 820, 832));
        assert_eq!(r.plane_len(), 820 * 832);
        assert!(r.padded());
        // Already aligned rows stay as they are.
        assert!(!Rows::aligned(&[4, 8, 768], &[4]).padded());
        // f64 alone: 16 elements per 128 bytes; mixed with f32, the f32 rows decide.
        assert_eq!(Rows::aligned(&[4, 4, 100], &[8]).pitch, 112);
        assert_eq!(Rows::aligned(&[4, 4, 100], &[8, 4]).pitch, 128);
        // 2D: a plane is one row.
        let r2 = Rows::aligned(&[100, 1000], &[4]);
        assert_eq!((r2.rows, r2.len, r2.pitch), (1, 1000, 1024));
        let f = Rows::flat(&[5, 6, 7]);
        assert_eq!((f.rows, f.len, f.pitch, f.padded()), (6, 7, 7, false));
    }

    /// Every host byte lands once, at its row's device offset, and no copy crosses a cut.
    fn check_segments(r: Rows, elem: usize, n: usize, cuts: &[usize]) -> Vec<Segment> {
        let segs = r.segments(n, elem, cuts);
        let (hr, dr) = (r.len * elem, r.pitch * elem);
        let mut seen = vec![false; n];
        for s in &segs {
            let (host, dev, len) = match *s {
                Segment::Flat { host, dev, len } => (host, dev, len),
                Segment::Rows { host, dev, rows } => {
                    assert_eq!(host % hr, 0, "{s:?}: whole rows start a row");
                    (host, dev, rows * hr)
                }
            };
            assert_eq!(dev, host / hr * dr + host % hr, "{s:?}");
            if let Segment::Flat { host, len, .. } = *s {
                assert!(
                    !r.padded() || host / hr == (host + len - 1) / hr,
                    "{s:?}: one row"
                );
            }
            assert!(
                cuts.iter().all(|&c| c <= host || c >= host + len),
                "{s:?} crosses"
            );
            for b in &mut seen[host..host + len] {
                assert!(!*b, "{s:?}: byte copied twice");
                *b = true;
            }
        }
        assert!(seen.iter().all(|&b| b), "every byte copied");
        segs
    }

    #[test]
    fn segments_cut_copies_at_piece_boundaries() {
        let padded = Rows {
            rows: 6,
            len: 10,
            pitch: 32,
        };
        let flat = Rows::flat(&[4, 6, 10]);
        // No cuts: one copy, as before pieces existed.
        assert_eq!(
            check_segments(padded, 4, 2 * 240, &[]),
            vec![Segment::Rows {
                host: 0,
                dev: 0,
                rows: 12
            }]
        );
        assert_eq!(
            check_segments(flat, 4, 480, &[]),
            vec![Segment::Flat {
                host: 0,
                dev: 0,
                len: 480
            }]
        );
        // A cut inside a row splits it; a cut on a row boundary does not.
        let segs = check_segments(padded, 4, 480, &[100]);
        assert_eq!(segs.len(), 4, "{segs:?}");
        assert_eq!(check_segments(padded, 4, 480, &[120]).len(), 2);
        assert_eq!(check_segments(flat, 4, 480, &[100, 256]).len(), 3);
        for cuts in [vec![1, 2, 3], vec![39, 41, 400], vec![40, 80, 479]] {
            check_segments(padded, 4, 480, &cuts);
            check_segments(padded, 8, 960, &cuts);
            check_segments(flat, 4, 480, &cuts);
        }
    }
}
