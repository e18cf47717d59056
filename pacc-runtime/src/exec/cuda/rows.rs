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

    /// Device bytes the plan's buffer sets and ring need beyond the flat layout.
    pub fn extra_bytes(&self, plan: &Plan) -> u64 {
        let per_elem_plane = (self.plane_len() - self.rows * self.len) as u64;
        let elem_planes: u64 = (plan.elem_sizes.iter().enumerate())
            .map(|(a, &e)| (e * plan.device_planes(a)) as u64)
            .sum();
        per_elem_plane * elem_planes
    }
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
    if !program.row_pitch || !aligned.padded() || !pad {
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
}
