use proc_macro::TokenStream;

#[proc_macro_attribute]
pub fn pipeline(args: TokenStream, item: TokenStream) -> TokenStream {
    pacc_translate::expand(args.into(), item.into()).into()
}
