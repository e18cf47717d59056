//! The `compress(a = RATE, .., codec = NAME)` clause against the function: names are array
//! parameters, the codec takes the rates for the element type (the runtime's rate rule,
//! `Codec::check_rate`), scratch arrays are not compressed, and arrays that trade places through
//! `std::mem::swap` (one physical array each, sharing buffers) have the same rate.

use crate::ir::{Func, StepItem};
use crate::parse::args::push;
use pacc_runtime::codec::zfp::ZfpError;
use pacc_runtime::codec::{CodecError, CodecKind, Rate};
use pacc_runtime::program::{CompressDecl, Role};

/// One entry per compressed array, in clause order.
pub fn compress(f: &Func, roles: &[Role]) -> syn::Result<Vec<CompressDecl>> {
    let mut errors = None;
    let names: Vec<String> = f.arrays.iter().map(|a| a.name.to_string()).collect();
    let mut rates: Vec<Option<f64>> = vec![None; names.len()];
    let mut out = Vec::new();
    // The parser accepted only names the runtime has; the default is the runtime's too.
    let named = f.directive.codec.as_ref().map(|c| c.to_string());
    let kind: CodecKind = named
        .as_deref()
        .and_then(|n| n.parse().ok())
        .unwrap_or_default();
    for (id, rate, span) in &f.directive.compress {
        let Some(a) = names.iter().position(|n| id == n) else {
            let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            let msg = format!(
                "`{id}` is not an array parameter of `{}`; `compress(..)` names array parameters: {}",
                f.name,
                list.join(", ")
            );
            push(&mut errors, syn::Error::new_spanned(id, msg));
            continue;
        };
        if roles.get(a) == Some(&Role::Scratch) {
            let msg = format!("`{id}` is `scratch`: its contents never go back to the host, so there is nothing to compress; leave it out of `compress(..)`");
            push(&mut errors, syn::Error::new_spanned(id, msg));
            continue;
        }
        let elem = f.arrays[a].elem;
        let checked = Rate::new(*rate).and_then(|r| kind.get().check_rate(elem, f.ndim, r));
        let msg = match checked {
            Ok(()) => None,
            Err(CodecError::NoSmaller { .. }) => {
                let bits = 8 * elem.size();
                Some(format!("`{id}` holds {} values of {bits} bits; a rate of {rate} bits per value would not make it smaller (use less than {bits})", elem.rust_name()))
            }
            // The GPU codec works in whole 64-bit words per block of 4^d values.
            Err(CodecError::Zfp(ZfpError::UnalignedBlock { bits: b, .. })) => Some(format!("at {rate} bits per value a {}D codec block of {} values takes {b} bits, not a whole number of 64-bit words; use {}", f.ndim, 1usize << (2 * f.ndim), if f.ndim == 2 { "a multiple of 4 (e.g. 8, 12, 16)" } else { "a whole number of bits" })),
            Err(e) => Some(e.to_string()),
        };
        if let Some(msg) = msg {
            push(&mut errors, syn::Error::new(*span, msg));
            continue;
        }
        rates[a] = Some(*rate);
        out.push(CompressDecl {
            array: a,
            rate: *rate,
            codec: named.clone(),
        });
    }
    for item in &f.time.items {
        if let StepItem::Swap { a, b, stmt } = item {
            if rates[*a] != rates[*b] {
                let show = |r: Option<f64>| {
                    r.map_or("uncompressed".to_string(), |r| format!("compressed at {r}"))
                };
                let msg = format!(
                    "`{}` ({}) and `{}` ({}) trade places here, so they share buffers and must be compressed at the same rate; state both in `compress(..)` with one rate",
                    names[*a], show(rates[*a]), names[*b], show(rates[*b])
                );
                push(&mut errors, syn::Error::new_spanned(stmt, msg));
            }
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
