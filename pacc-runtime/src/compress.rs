//! Compression settings of a call: the rate of each physical array, which
//! `crate::config::compress_rates` resolves from the directive's `compress(a = R, ..)` clause
//! and [`crate::Options::compress`], checked against the program, the shape, the scheme and the
//! codec's rate rule ([`Codec::accepts`], with the codec `crate::config` resolved) before any
//! data is touched.
//!
//! Compression is per *physical* array (the host keeps one compressed copy of each), and arrays
//! that trade places through `std::mem::swap` share buffers, so every array of a swap group must
//! have the same rate.

pub use crate::binding::swap_groups;
pub use crate::error::CompressError;
pub use crate::options::{parse_list, ParsedList};

use crate::binding::written_physically;
use crate::codec::{Codec, CodecError, CodecKind, Rate};
use crate::plan::Scheme;
use crate::program::Program;

fn rate_text(r: Option<f64>) -> String {
    r.map_or("uncompressed".into(), |r| format!("rate {r}"))
}

/// Whether array `a` is scratch: written by the steps but not returned to the caller (the host
/// keeps no copy of it, so there is nothing to compress).
pub(crate) fn scratch(program: &Program, a: usize) -> bool {
    !crate::plan::returned_arrays(program)[a] && written_physically(program, a)
}

/// Whether array `a` is an input only (never written): lossy compression changes the caller's
/// data, so `compress_all` leaves it alone unless asked.
pub(crate) fn input_only(program: &Program, a: usize) -> bool {
    !written_physically(program, a)
}

/// The refusal of a rate for an array the program does not have.
pub(crate) fn unknown_array(program: &Program, name: &str) -> CompressError {
    CompressError::UnknownArray {
        name: name.into(),
        program: program.name.clone(),
        arrays: array_list(program),
    }
}

/// `rates` (one per physical array, `None`: uncompressed; `crate::config::compress_rates` says
/// which) checked against the program, the shape `shape`, the scheme, swap groups, scratch
/// arrays and the codec's rate rule. `codec` gives the codec the options resolve to, asked only
/// when some array is compressed.
pub fn check(
    program: &Program,
    shape: &[usize],
    scheme: Scheme,
    rates: Vec<Option<f64>>,
    codec: impl FnOnce() -> Result<CodecKind, CompressError>,
) -> Result<Vec<Option<f64>>, CompressError> {
    let n = program.arrays.len();
    if rates.iter().all(Option::is_none) {
        return Ok(rates);
    }
    if !scheme.transfers().can_compress() {
        return Err(CompressError::Scheme { scheme });
    }
    let codec = codec()?.get();
    for (a, r) in rates.iter().enumerate() {
        if let Some(r) = r {
            if scratch(program, a) {
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
