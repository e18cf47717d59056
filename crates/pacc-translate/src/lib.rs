use proc_macro2::TokenStream;
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let _ = args;
    item
}
