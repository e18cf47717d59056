//! The directive's clauses: `halo = N`, `chunks = N`, `block_steps = N`, `input(..)`,
//! `inout(..)`, `scratch(..)`, `compress(a = RATE, .., codec = NAME)`.

use crate::ir::Directive;
use proc_macro2::TokenStream;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Ident, LitInt, Token};

pub const CLAUSES: &str = "`halo = N`, `chunks = N`, `block_steps = N`, `input(a, ..)`, `inout(a, ..)`, `scratch(a, ..)` and `compress(a = RATE, ..)`";

/// The forms of the `compress(..)` clause, for messages.
pub fn compress_forms() -> String {
    use pacc_runtime::codec::CodecKind;
    let other = CodecKind::ALL.iter().rfind(|k| **k != CodecKind::default());
    let example = other.map_or(String::new(), |k| {
        format!(", e.g. `compress(u = 16, codec = {k})`")
    });
    format!(
        "`compress(ARRAY = RATE, ..)` ({}, the default codec) or `compress(ARRAY = RATE, .., codec = NAME)` with NAME a codec ({}){example}",
        CodecKind::default(),
        CodecKind::names()
    )
}

/// Largest rate the clause accepts (bits per value of an f64).
pub const MAX_RATE: f64 = 64.0;

/// Parses the attribute's arguments. Names in role clauses are checked against the parameters
/// later.
pub fn parse(args: TokenStream) -> syn::Result<Directive> {
    let parser = |input: ParseStream| -> syn::Result<Directive> {
        let mut d = Directive::default();
        let mut errors: Option<syn::Error> = None;
        while !input.is_empty() {
            let name: Ident = input.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    format!("expected a clause; the directive accepts {CLAUSES}"),
                )
            })?;
            let key = name.to_string();
            match key.as_str() {
                "halo" | "chunks" | "block_steps" => {
                    input.parse::<Token![=]>().map_err(|e| {
                        syn::Error::new(e.span(), format!("expected `{key} = N` with N an integer"))
                    })?;
                    let lit: LitInt = input.parse().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            format!("expected `{key} = N` with N a non-negative integer"),
                        )
                    })?;
                    let v: usize = lit.base10_parse()?;
                    if key != "halo" && v == 0 {
                        push(
                            &mut errors,
                            syn::Error::new_spanned(&lit, format!("`{key}` must be at least 1")),
                        );
                    }
                    let dup = match key.as_str() {
                        "halo" => d.halo.replace((v, lit.span())).is_some(),
                        "chunks" => d.chunks.replace(v).is_some(),
                        _ => d.block_steps.replace(v).is_some(),
                    };
                    if dup {
                        push(
                            &mut errors,
                            syn::Error::new_spanned(&name, format!("clause `{key}` given twice")),
                        );
                    }
                }
                "input" | "inout" | "scratch" => {
                    let content;
                    syn::parenthesized!(content in input);
                    let names: Punctuated<Ident, Token![,]> =
                        content.parse_terminated(<Ident as syn::parse::Parse>::parse, Token![,])?;
                    let list = match key.as_str() {
                        "input" => &mut d.input,
                        "inout" => &mut d.inout,
                        _ => &mut d.scratch,
                    };
                    list.extend(names);
                }
                "compress" => {
                    let content;
                    syn::parenthesized!(content in input);
                    for (id, rate, span) in compress_list(&content, &mut d.codec, &mut errors)? {
                        if d.compress.iter().any(|(n, ..)| *n == id) {
                            let msg = format!("`{id}` is given twice in `compress(..)`");
                            push(&mut errors, syn::Error::new_spanned(&id, msg));
                            continue;
                        }
                        d.compress.push((id, rate, span));
                    }
                }
                _ => {
                    // `codec` belongs to `compress(..)`; a user who wrote it at the top level
                    // needs to hear where it goes.
                    let hint = match key.as_str() {
                        "codec" => {
                            format!(
                                "; `codec` goes inside the compress clause: {}",
                                compress_forms()
                            )
                        }
                        _ => String::new(),
                    };
                    push(
                        &mut errors,
                        syn::Error::new_spanned(
                            &name,
                            format!(
                                "unknown clause `{key}`; the directive accepts {CLAUSES}{hint}"
                            ),
                        ),
                    );
                    // Skip this clause's tokens up to the next comma.
                    while !input.is_empty() && !input.peek(Token![,]) {
                        input.parse::<proc_macro2::TokenTree>()?;
                    }
                }
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        match errors {
            Some(e) => Err(e),
            None => Ok(d),
        }
    };
    parser.parse2(args)
}

/// `a = 16, b = 12.5, codec = f16`: array names with rates in bits per value (0 < rate <= 64),
/// and at most one codec, by name (`codec = 16` is an array named `codec`).
fn compress_list(
    input: ParseStream,
    codec: &mut Option<Ident>,
    errors: &mut Option<syn::Error>,
) -> syn::Result<Vec<(Ident, f64, proc_macro2::Span)>> {
    let mut out = Vec::new();
    while !input.is_empty() {
        let id: Ident = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!(
                    "expected an array or `codec`; the clause takes {}",
                    compress_forms()
                ),
            )
        })?;
        input.parse::<Token![=]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!(
                    "expected `{id} = RATE` (bits per value, e.g. 16 or 12.5); the clause takes {}",
                    compress_forms()
                ),
            )
        })?;
        if id == "codec" && input.peek(Ident) {
            codec_name(input, &id, codec, errors)?;
        } else {
            rate(input, id, &mut out, errors)?;
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    if let (Some(c), true) = (codec.as_ref(), out.is_empty()) {
        let msg = format!(
            "`codec = {c}` names no array to compress; the clause takes {}",
            compress_forms()
        );
        push(errors, syn::Error::new_spanned(c, msg));
    }
    Ok(out)
}

/// `codec = NAME` of the compress clause: a codec the runtime has, given once.
fn codec_name(
    input: ParseStream,
    key: &Ident,
    codec: &mut Option<Ident>,
    errors: &mut Option<syn::Error>,
) -> syn::Result<()> {
    let name: Ident = input.parse()?;
    if let Err(reason) = name.to_string().parse::<pacc_runtime::codec::CodecKind>() {
        let msg = format!(
            "{reason} in `compress(..)`; the clause takes {}",
            compress_forms()
        );
        push(errors, syn::Error::new_spanned(&name, msg));
    } else if codec.replace(name).is_some() {
        let msg = "`codec` is given twice in `compress(..)`; name one codec for the clause";
        push(errors, syn::Error::new_spanned(key, msg));
    }
    Ok(())
}

/// `ARRAY = RATE` of the compress clause.
fn rate(
    input: ParseStream,
    id: Ident,
    out: &mut Vec<(Ident, f64, proc_macro2::Span)>,
    errors: &mut Option<syn::Error>,
) -> syn::Result<()> {
    let lit: syn::Lit = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("expected `{id} = RATE` with RATE a number of bits per value, e.g. 16 or 12.5"),
        )
    })?;
    let rate = match &lit {
        syn::Lit::Int(i) => i.base10_parse::<f64>().ok(),
        syn::Lit::Float(f) => f.base10_parse::<f64>().ok(),
        syn::Lit::Str(name) if id == "codec" => {
            let msg = format!(
                "write the codec as a name, `codec = {}`, not a string; the clause takes {}",
                name.value(),
                compress_forms()
            );
            push(errors, syn::Error::new_spanned(&lit, msg));
            return Ok(());
        }
        _ => None,
    };
    match rate {
        Some(r) if r > 0.0 && r <= MAX_RATE => out.push((id, r, lit.span())),
        Some(r) => push(
            errors,
            syn::Error::new_spanned(&lit, format!("compression rate {r} for `{id}` is out of range: a rate is the bits kept per value, more than 0 and at most {MAX_RATE} (f32 arrays: below 32)")),
        ),
        None => push(
            errors,
            syn::Error::new_spanned(&lit, format!("the compression rate of `{id}` must be a number of bits per value, e.g. 16 or 12.5")),
        ),
    }
    Ok(())
}

pub fn push(acc: &mut Option<syn::Error>, e: syn::Error) {
    match acc {
        Some(a) => a.combine(e),
        None => *acc = Some(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn parses_all_clauses() {
        let d = parse(quote!(
            halo = 4,
            chunks = 8,
            block_steps = 3,
            input(a, b),
            inout(c),
            scratch(d),
            compress(a = 16, c = 12.5)
        ))
        .unwrap();
        let rates: Vec<f64> = d.compress.iter().map(|c| c.1).collect();
        assert_eq!(rates, vec![16.0, 12.5]);
        assert_eq!(d.halo.map(|h| h.0), Some(4));
        assert_eq!(d.chunks, Some(8));
        assert_eq!(d.block_steps, Some(3));
        assert_eq!(d.input.len(), 2);
        assert_eq!(d.inout.len(), 1);
        assert_eq!(d.scratch.len(), 1);
    }

    #[test]
    fn empty_is_default() {
        let d = parse(quote!()).unwrap();
        assert!(d.halo.is_none() && d.input.is_empty());
    }

    #[test]
    fn unknown_clause_lists_the_known_ones() {
        let e = parse(quote!(halo = 1, tile = 3)).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("unknown clause `tile`") && m.contains("block_steps"),
            "{m}"
        );
    }

    /// The forms name every registered codec and the default, as the messages always did.
    #[test]
    fn the_compress_forms_come_from_the_codec_registry() {
        use pacc_runtime::codec::CodecKind;
        let f = compress_forms();
        for k in CodecKind::ALL {
            assert!(f.contains(k.name()), "{f}");
        }
        assert!(
            f.contains(&format!("({}, the default codec)", CodecKind::default())),
            "{f}"
        );
        assert_eq!(
            f,
            "`compress(ARRAY = RATE, ..)` (zfp, the default codec) or `compress(ARRAY = RATE, .., \
             codec = NAME)` with NAME a codec (zfp or f16), e.g. `compress(u = 16, codec = f16)`"
        );
    }

    #[test]
    fn a_top_level_codec_says_where_it_goes() {
        let m = parse(quote!(halo = 1, codec = f16))
            .unwrap_err()
            .to_string();
        assert!(m.contains("unknown clause `codec`"), "{m}");
        assert!(m.contains("`codec` goes inside the compress clause"), "{m}");
        assert!(m.contains("compress(u = 16, codec = f16)"), "{m}");
    }

    #[test]
    fn bad_compress_rates() {
        for bad in [
            quote!(compress(a = x)),
            quote!(compress(a = 0)),
            quote!(compress(a = 65.0)),
            quote!(compress(a = "16")),
            quote!(compress(a = 16, a = 8)),
            quote!(compress(a = 16, codec = lz4)),
            quote!(compress(a = 16, codec = f16, codec = zfp)),
            quote!(compress(codec = f16)),
            quote!(compress(a = 16, codec =)),
            quote!(compress(a = 16, codec = "f16")),
        ] {
            assert!(parse(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn compress_names_a_codec() {
        let d = parse(quote!(compress(u = 16, v = 16, codec = f16))).unwrap();
        assert_eq!(d.compress.len(), 2);
        assert_eq!(d.codec.map(|c| c.to_string()).as_deref(), Some("f16"));
        // An array named `codec` keeps its rate.
        let d = parse(quote!(compress(codec = 8, a = 16))).unwrap();
        assert_eq!((d.compress.len(), d.codec.is_none()), (2, true));
        let m = parse(quote!(compress(a = 16, codec = lz4)))
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("unknown codec `lz4`") && m.contains("codec = NAME"),
            "{m}"
        );
    }

    #[test]
    fn bad_value() {
        assert!(parse(quote!(halo = x)).is_err());
        assert!(parse(quote!(chunks = 0)).is_err());
    }
}
