//! The directive's clauses: `halo = N`, `chunks = N`, `block_steps = N`, `input(..)`,
//! `inout(..)`, `scratch(..)`.

use crate::ir::Directive;
use proc_macro2::TokenStream;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Ident, LitInt, Token};

pub const CLAUSES: &str = "`halo = N`, `chunks = N`, `block_steps = N`, `input(a, ..)`, `inout(a, ..)` and `scratch(a, ..)`";

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
                _ => {
                    push(
                        &mut errors,
                        syn::Error::new_spanned(
                            &name,
                            format!("unknown clause `{key}`; the directive accepts {CLAUSES}"),
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
            scratch(d)
        ))
        .unwrap();
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

    #[test]
    fn bad_value() {
        assert!(parse(quote!(halo = x)).is_err());
        assert!(parse(quote!(chunks = 0)).is_err());
    }
}
