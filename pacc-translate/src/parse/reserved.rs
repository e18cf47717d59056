//! Names the generated code keeps for itself: every name it adds beside the user's (`__opts`,
//! `__arrays`, `__p0`, ...) begins with two underscores, so a user's name that does too could
//! collide with one and fail inside the expansion, where rustc's message points at nothing the
//! user wrote.

use syn::visit::Visit;

/// The prefix of every name the generated wrapper and kernels introduce.
pub const PREFIX: &str = "__";

/// A compile error at each parameter or binding of `item` whose name begins with [`PREFIX`].
pub fn check(item: &syn::ItemFn) -> syn::Result<()> {
    let mut v = Bindings(None);
    v.visit_item_fn(item);
    v.0.map_or(Ok(()), Err)
}

struct Bindings(Option<syn::Error>);

impl<'ast> Visit<'ast> for Bindings {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        let name = p.ident.to_string();
        if name.trim_start_matches("r#").starts_with(PREFIX) {
            let e = syn::Error::new(
                p.ident.span(),
                format!(
                    "`{name}`: names beginning with `{PREFIX}` are kept for the code \
                     #[pacc::pipeline] generates; rename it (e.g. `{}`)",
                    name.trim_start_matches('_')
                ),
            );
            match &mut self.0 {
                Some(all) => all.combine(e),
                None => self.0 = Some(e),
            }
        }
        syn::visit::visit_pat_ident(self, p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_and_bindings_with_the_generated_prefix_are_refused() {
        let f: syn::ItemFn = syn::parse_quote! {
            fn f(__opts: &mut Array2<f32>, b: &mut Array2<f32>) {
                let (n, __arrays) = b.dim();
                for _t in 0..n { let x = 1; }
            }
        };
        let e = check(&f).unwrap_err();
        let all: Vec<String> = e.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(
            all[0].contains("`__opts`") && all[0].contains("e.g. `opts`"),
            "{all:?}"
        );
        assert!(all[1].contains("`__arrays`"), "{all:?}");
        let fine: syn::ItemFn = syn::parse_quote! {
            fn f(_a: &mut Array2<f32>, b_: f32) { let _x = 1; }
        };
        assert!(check(&fine).is_ok());
    }
}
