//! Compression settings of a call: the directive's `compress(a = R, ..)` clause and
//! [`Options::compress`] resolved to one rate per physical array, and checked against the
//! program, the shape and the scheme before any data is touched.
//!
//! Compression is per *physical* array (the host keeps one compressed copy of each), and arrays
//! that trade places through `std::mem::swap` share buffers, so every array of a swap group must
//! have the same rate.

use crate::options::Options;
use crate::plan::Scheme;
use crate::program::{Elem, Program, Stage};

/// A compression setting that cannot be honoured, or a codec failure during a run.
#[derive(Debug, thiserror::Error)]
pub enum CompressError {
    #[error("compress: `{name}` is not an array of `{program}` (its arrays: {arrays}). Hint: name one of the function's array parameters")]
    UnknownArray {
        name: String,
        program: String,
        arrays: String,
    },
    #[error("compress: array `{array}` ({elem}, {ndim}D) cannot use rate {rate}: {reason}. Hint: use a rate in bits per value below {bits} (the raw size) whose codec blocks fill whole 64-bit words (for 2D arrays a multiple of 4, e.g. 8, 12, 16)")]
    Rate {
        array: String,
        elem: &'static str,
        ndim: usize,
        rate: f64,
        bits: usize,
        reason: String,
    },
    #[error("compress: `{a}` ({ra}) and `{b}` ({rb}) trade places through `std::mem::swap`, so they share the same buffers and host copies. Hint: give every array of the swap group the same rate, e.g. compress({a} = R, {b} = R)")]
    SwapGroup {
        a: String,
        ra: String,
        b: String,
        rb: String,
    },
    #[error("compress: the {scheme} scheme cannot compress (its host staging buffers hold raw planes). Hint: use region-sharing (the default) or direct-map")]
    Scheme { scheme: Scheme },
    #[error("compress: `{array}` is a scratch array; its contents never go back to the host, so there is nothing to compress. Hint: leave it out of compress(..)")]
    Scratch { array: String },
    #[error("compressing `{array}` failed: {message}. Hint: NaN or infinite values cannot be compressed; they usually mean the simulation became unstable (check the time step), or run without compression to see where they appear")]
    Codec { array: String, message: String },
}

fn rate_text(r: Option<f64>) -> String {
    r.map_or("uncompressed".into(), |r| format!("rate {r}"))
}

/// The arrays connected to each other by swap statements: `group[a]` is the smallest array index
/// of `a`'s group.
pub fn swap_groups(program: &Program) -> Vec<usize> {
    let mut group: Vec<usize> = (0..program.arrays.len()).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for st in &program.step {
            if let Stage::Swap(x, y) = *st {
                let g = group[x].min(group[y]);
                for a in [x, y] {
                    if group[a] != g {
                        changed = true;
                        let old = group[a];
                        group.iter_mut().filter(|v| **v == old).for_each(|v| *v = g);
                    }
                }
            }
        }
    }
    group
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
    let scratch = |a: usize| {
        !crate::plan::returned_arrays(program)[a] && crate::run::written_physically(program, a)
    };
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
    if scheme == Scheme::StagedCopy {
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

/// Parses `PACC_COMPRESS`-style lists: `a=16,b=12.5`, or `all=16`, or `off`.
pub fn parse_list(s: &str) -> Result<ParsedList, String> {
    let mut out = ParsedList::default();
    let s = s.trim();
    if s.is_empty() {
        return Ok(out);
    }
    if s == "off" || s == "none" {
        out.off = true;
        return Ok(out);
    }
    for item in s.split(',') {
        let (name, rate) = item.split_once('=').ok_or_else(|| {
            format!("`{item}`: expected NAME=RATE (e.g. `cur=16,prev=16`), `all=RATE` or `off`")
        })?;
        let rate: f64 = rate.trim().parse().map_err(|_| {
            format!("`{item}`: the rate must be a number of bits per value, e.g. 16 or 12.5")
        })?;
        match name.trim() {
            "all" => out.all = Some(rate),
            n => out.arrays.push((n.to_string(), rate)),
        }
    }
    Ok(out)
}

/// What [`parse_list`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedList {
    pub arrays: Vec<(String, f64)>,
    pub all: Option<f64>,
    pub off: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse() {
        let p = parse_list("a=16, b = 12.5").unwrap();
        assert_eq!(p.arrays, vec![("a".into(), 16.0), ("b".into(), 12.5)]);
        assert_eq!(parse_list("all=8").unwrap().all, Some(8.0));
        assert!(parse_list("off").unwrap().off);
        assert!(parse_list("a").is_err());
        assert!(parse_list("a=x").is_err());
    }
}
