//! Compression settings of a call: the directive's `compress(a = R, ..)` clause and
//! [`Options::compress`] resolved to one rate per physical array, and checked against the
//! program, the shape and the scheme before any data is touched.
//!
//! Compression is per *physical* array (the host keeps one compressed copy of each), and arrays
//! that trade places through `std::mem::swap` share buffers, so every array of a swap group must
//! have the same rate.

pub use crate::binding::swap_groups;
pub use crate::error::CompressError;
pub use crate::options::{parse_list, ParsedList};

use crate::binding::written_physically;
use crate::options::Options;
use crate::plan::Scheme;
use crate::program::{Elem, Program};

fn rate_text(r: Option<f64>) -> String {
    r.map_or("uncompressed".into(), |r| format!("rate {r}"))
}

/// The rate each physical array is compressed at (`None`: uncompressed), from the clause, then
/// the options (which override it array by array). Checks names, rates, swap groups, scratch
/// arrays and the scheme; `shape` is the arrays' shape.
pub fn rates(
    program: &Program,
    shape: &[usize],
    scheme: Scheme,
    opts: &Options,
) -> Result<Vec<Option<f64>>, CompressError> {
    let n = program.arrays.len();
    let mut rates: Vec<Option<f64>> = vec![None; n];
    let scratch =
        |a: usize| !crate::plan::returned_arrays(program)[a] && written_physically(program, a);
    if !opts.compress_off {
        for &(a, r) in &program.compress {
            if let Some(slot) = rates.get_mut(a) {
                *slot = Some(r);
            }
        }
    }
    if let Some(r) = opts.compress_all {
        for (a, slot) in rates.iter_mut().enumerate() {
            if !scratch(a) {
                *slot = Some(r);
            }
        }
    }
    for (name, r) in &opts.compress {
        let a = program
            .array_index(name)
            .ok_or_else(|| CompressError::UnknownArray {
                name: name.clone(),
                program: program.name.clone(),
                arrays: array_list(program),
            })?;
        rates[a] = Some(*r);
    }
    if rates.iter().all(Option::is_none) {
        return Ok(rates);
    }
    if !scheme.transfers().can_compress() {
        return Err(CompressError::Scheme { scheme });
    }
    for (a, r) in rates.iter().enumerate() {
        if let Some(r) = r {
            if scratch(a) {
                return Err(CompressError::Scratch {
                    array: program.arrays[a].name.clone(),
                });
            }
            check_rate(program, a, shape, *r)?;
        }
    }
    let group = swap_groups(program);
    for a in 0..n {
        let g = group[a];
        if rates[a] != rates[g] {
            return Err(CompressError::SwapGroup {
                a: program.arrays[g].name.clone(),
                ra: rate_text(rates[g]),
                b: program.arrays[a].name.clone(),
                rb: rate_text(rates[a]),
            });
        }
    }
    Ok(rates)
}

fn array_list(program: &Program) -> String {
    program
        .arrays
        .iter()
        .map(|a| format!("`{}`", a.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A rate the codec accepts for this array, smaller than raw, in whole 64-bit words per block
/// (what the GPU kernels need; the CPU codec then runs exactly the same stream).
fn check_rate(
    program: &Program,
    a: usize,
    shape: &[usize],
    rate: f64,
) -> Result<(), CompressError> {
    let elem = program.arrays[a].elem;
    let bits = 8 * elem.size();
    let bad = |reason: String| CompressError::Rate {
        array: program.arrays[a].name.clone(),
        elem: elem.rust_name(),
        ndim: shape.len(),
        rate,
        bits,
        reason,
    };
    if !(rate.is_finite() && rate > 0.0) {
        return Err(bad("a rate is a positive number of bits per value".into()));
    }
    if rate >= bits as f64 {
        return Err(bad(format!(
            "an {} value has {bits} bits, so the compressed array would be no smaller",
            elem_name(elem)
        )));
    }
    let block = crate::codec::block_bits(rate, shape.len()).map_err(|e| bad(e.to_string()))?;
    if block % 64 != 0 {
        return Err(bad(format!(
            "a block of {} values would take {block} bits, not a whole number of 64-bit words",
            1usize << (2 * shape.len())
        )));
    }
    crate::codec::slab_bytes(shape.get(1..).unwrap_or(&[]), rate)
        .map_err(|e| bad(e.to_string()))?;
    Ok(())
}

fn elem_name(e: Elem) -> &'static str {
    e.rust_name()
}
