//! Compression settings of a call: the directive's `compress(a = R, ..)` clause and
//! [`Options::compress`] resolved to one rate per physical array, and checked against the
//! program, the shape, the scheme and the codec's rate rule ([`Codec::accepts`], with the codec
//! `crate::config` resolved) before any data is touched.
//!
//! Compression is per *physical* array (the host keeps one compressed copy of each), and arrays
//! that trade places through `std::mem::swap` share buffers, so every array of a swap group must
//! have the same rate.

pub use crate::binding::swap_groups;
pub use crate::error::CompressError;
pub use crate::options::{parse_list, ParsedList};

use crate::binding::written_physically;
use crate::codec::{Codec, CodecError, CodecKind, Rate};
use crate::options::Options;
use crate::plan::Scheme;
use crate::program::Program;

fn rate_text(r: Option<f64>) -> String {
    r.map_or("uncompressed".into(), |r| format!("rate {r}"))
}

/// The rate each physical array is compressed at (`None`: uncompressed), from the clause, then
/// the options (which override it array by array). Checks names, rates, swap groups, scratch
/// arrays and the scheme; `shape` is the arrays' shape. `codec` gives the codec the options
/// resolve to (`crate::config::codec`), asked only when some array is compressed.
pub fn rates(
    program: &Program,
    shape: &[usize],
    scheme: Scheme,
    opts: &Options,
    codec: impl FnOnce() -> Result<CodecKind, CompressError>,
) -> Result<Vec<Option<f64>>, CompressError> {
    let n = program.arrays.len();
    let mut rates: Vec<Option<f64>> = vec![None; n];
    let scratch =
        |a: usize| !crate::plan::returned_arrays(program)[a] && written_physically(program, a);
    if !opts.compress_off {
        for c in &program.compress {
            if let Some(slot) = rates.get_mut(c.array) {
                *slot = Some(c.rate);
            }
        }
    }
    if let Some(r) = opts.compress_all {
        // Inputs only where the caller allows their lossy compression.
        let input = |a: usize| !written_physically(program, a);
        for (a, slot) in rates.iter_mut().enumerate() {
            if !scratch(a) && (opts.compress_inputs || !input(a)) {
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
    let codec = codec()?.get();
    for (a, r) in rates.iter().enumerate() {
        if let Some(r) = r {
            if scratch(a) {
                return Err(CompressError::Scratch {
                    array: program.arrays[a].name.clone(),
                });
            }
            check_rate(codec, program, a, shape, *r)?;
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

/// A rate the codec accepts for this array (its rate rule and slab size).
fn check_rate(
    codec: &dyn Codec,
    program: &Program,
    a: usize,
    shape: &[usize],
    rate: f64,
) -> Result<(), CompressError> {
    let elem = program.arrays[a].elem;
    let bad = |reason: String| CompressError::Rate {
        array: program.arrays[a].name.clone(),
        elem: elem.rust_name(),
        ndim: shape.len(),
        rate,
        bits: 8 * elem.size(),
        reason,
    };
    let reason = match Rate::new(rate).and_then(|r| codec.accepts(elem, shape, r)) {
        Ok(_) => return Ok(()),
        Err(CodecError::NotARate { .. }) => "a rate is a positive number of bits per value".into(),
        Err(e) => format!("{}: {e}", codec.name()),
    };
    Err(bad(reason))
}
