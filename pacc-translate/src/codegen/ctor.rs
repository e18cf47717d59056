//! Rust constructor expressions of the runtime's program values, read off their `Serialize`
//! impls: the generated code rebuilds the `Program` the translator built, and a field added to
//! `Program` (or to a type under it) is spelled without a line here.
//!
//! The runtime's program types keep three conventions, and a break shows as a compile error in
//! the generated code, which the expansion tests catch:
//! - every struct and enum is named at `::pacc::runtime::program::<Name>`;
//! - integers are `usize` (serde hands them over as `u64`), `u32` or `i64`;
//! - a tuple whose items all have one shape is a Rust array (`[u32; 2]`), else a tuple.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, ToTokens};
use serde::ser::{self, Serialize};

/// Where the types of the program description live in the generated code.
const PROGRAM: &str = "::pacc::runtime::program";

/// The constructor expression of `value`, a struct spelled at `path`, with the tokens of
/// `fields` in place of those fields' values. A shape the conventions do not cover gives a
/// `compile_error!` naming it.
pub fn spell<T: Serialize>(value: &T, path: &str, fields: &[(&str, TokenStream)]) -> TokenStream {
    let root = Spell {
        root: Some(Root {
            path: parse(path),
            fields,
        }),
    };
    match value.serialize(root) {
        Ok(e) => e.tokens,
        Err(e) => {
            let msg = format!("pacc: cannot spell the program description: {}", e.0);
            quote!(::core::compile_error!(#msg))
        }
    }
}

/// A value that [`spell`] cannot write as Rust (it breaks a convention of the module).
#[derive(Debug)]
pub struct Unspellable(String);

impl std::fmt::Display for Unspellable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unspellable {}

impl ser::Error for Unspellable {
    fn custom<M: std::fmt::Display>(msg: M) -> Self {
        Unspellable(msg.to_string())
    }
}

/// A spelled value and its shape: items of one shape make a Rust array, mixed ones a tuple.
pub struct Expr {
    tokens: TokenStream,
    shape: String,
}

fn expr(tokens: TokenStream, shape: impl Into<String>) -> Expr {
    Expr {
        tokens,
        shape: shape.into(),
    }
}

fn parse(path: &str) -> TokenStream {
    path.parse().unwrap_or_default()
}

fn type_path(name: &str) -> TokenStream {
    parse(&format!("{PROGRAM}::{name}"))
}

fn variant_path(name: &str, variant: &str) -> TokenStream {
    parse(&format!("{PROGRAM}::{name}::{variant}"))
}

/// The outermost struct: its own path and the fields given as tokens.
struct Root<'a> {
    path: TokenStream,
    fields: &'a [(&'a str, TokenStream)],
}

/// The serializer: the outermost value carries its [`Root`], every value inside is plain.
struct Spell<'a> {
    root: Option<Root<'a>>,
}

fn nested<T: Serialize + ?Sized>(value: &T) -> Result<Expr, Unspellable> {
    value.serialize(Spell { root: None })
}

/// Items of a sequence, tuple or variant, in order.
pub struct Items {
    items: Vec<Expr>,
    form: Form,
}

/// Named fields of a struct or struct variant, in order.
pub struct Fields<'a> {
    path: TokenStream,
    shape: String,
    fields: Vec<(&'static str, TokenStream)>,
    given: &'a [(&'a str, TokenStream)],
}

enum Form {
    Vec,
    Tuple,
    Call(TokenStream, String),
}

impl Items {
    fn new(form: Form, len: usize) -> Self {
        Items {
            items: Vec::with_capacity(len),
            form,
        }
    }

    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unspellable> {
        self.items.push(nested(value)?);
        Ok(())
    }

    fn finish(self) -> Expr {
        let shapes_agree = (self.items.windows(2)).all(|w| w[0].shape == w[1].shape);
        let items: Vec<TokenStream> = self.items.into_iter().map(|e| e.tokens).collect();
        match self.form {
            Form::Vec => expr(quote!(::std::vec::Vec::from([#(#items),*])), "vec"),
            Form::Tuple if shapes_agree && !items.is_empty() => {
                expr(quote!([#(#items),*]), "tuple")
            }
            Form::Tuple => expr(quote!((#(#items),*)), "tuple"),
            Form::Call(path, shape) => expr(quote!(#path(#(#items),*)), shape),
        }
    }
}

impl Fields<'_> {
    fn push<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Unspellable> {
        let tokens = match self.given.iter().find(|(n, _)| *n == name) {
            Some((_, t)) => t.clone(),
            None => nested(value)?.tokens,
        };
        self.fields.push((name, tokens));
        Ok(())
    }

    fn finish(self) -> Expr {
        let path = self.path;
        let fields = self.fields.into_iter().map(|(n, v)| {
            let n = format_ident!("{n}");
            quote!(#n: #v)
        });
        expr(quote!(#path { #(#fields),* }), self.shape)
    }
}

macro_rules! literal {
    ($($method:ident($ty:ty) => $lit:ident, $shape:literal;)*) => {
        $(fn $method(self, v: $ty) -> Result<Expr, Unspellable> {
            Ok(expr(Literal::$lit(v as _).into_token_stream(), $shape))
        })*
    };
}

impl<'a> ser::Serializer for Spell<'a> {
    type Ok = Expr;
    type Error = Unspellable;
    type SerializeSeq = Items;
    type SerializeTuple = Items;
    type SerializeTupleStruct = Items;
    type SerializeTupleVariant = Items;
    type SerializeMap = ser::Impossible<Expr, Unspellable>;
    type SerializeStruct = Fields<'a>;
    type SerializeStructVariant = Fields<'a>;

    literal! {
        serialize_i8(i8) => i8_suffixed, "i8";
        serialize_i16(i16) => i16_suffixed, "i16";
        serialize_i32(i32) => i32_suffixed, "i32";
        serialize_i64(i64) => i64_suffixed, "i64";
        serialize_u8(u8) => u8_suffixed, "u8";
        serialize_u16(u16) => u16_suffixed, "u16";
        serialize_u32(u32) => u32_suffixed, "u32";
        serialize_u64(u64) => usize_suffixed, "usize";
        serialize_f32(f32) => f32_suffixed, "f32";
        serialize_f64(f64) => f64_suffixed, "f64";
    }

    fn serialize_bool(self, v: bool) -> Result<Expr, Unspellable> {
        Ok(expr(quote!(#v), "bool"))
    }

    fn serialize_char(self, v: char) -> Result<Expr, Unspellable> {
        Ok(expr(quote!(#v), "char"))
    }

    fn serialize_str(self, v: &str) -> Result<Expr, Unspellable> {
        Ok(expr(quote!(::std::string::String::from(#v)), "string"))
    }

    fn serialize_bytes(self, _: &[u8]) -> Result<Expr, Unspellable> {
        Err(Unspellable("byte strings are not spelled".into()))
    }

    fn serialize_none(self) -> Result<Expr, Unspellable> {
        Ok(expr(quote!(::core::option::Option::None), "option"))
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Expr, Unspellable> {
        let v = nested(value)?.tokens;
        Ok(expr(quote!(::core::option::Option::Some(#v)), "option"))
    }

    fn serialize_unit(self) -> Result<Expr, Unspellable> {
        Ok(expr(quote!(()), "unit"))
    }

    fn serialize_unit_struct(self, name: &'static str) -> Result<Expr, Unspellable> {
        Ok(expr(type_path(name), name))
    }

    fn serialize_unit_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Expr, Unspellable> {
        Ok(expr(variant_path(name, variant), name))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<Expr, Unspellable> {
        let mut items = Items::new(Form::Call(type_path(name), name.into()), 1);
        items.push(value)?;
        Ok(items.finish())
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Expr, Unspellable> {
        let mut items = Items::new(Form::Call(variant_path(name, variant), name.into()), 1);
        items.push(value)?;
        Ok(items.finish())
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Items, Unspellable> {
        Ok(Items::new(Form::Vec, len.unwrap_or(0)))
    }

    fn serialize_tuple(self, len: usize) -> Result<Items, Unspellable> {
        Ok(Items::new(Form::Tuple, len))
    }

    fn serialize_tuple_struct(self, name: &'static str, len: usize) -> Result<Items, Unspellable> {
        Ok(Items::new(Form::Call(type_path(name), name.into()), len))
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Items, Unspellable> {
        let path = variant_path(name, variant);
        Ok(Items::new(Form::Call(path, name.into()), len))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unspellable> {
        Err(Unspellable("maps are not spelled".into()))
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Fields<'a>, Unspellable> {
        let (path, given) = match self.root {
            Some(r) => (r.path, r.fields),
            None => (type_path(name), &[][..]),
        };
        Ok(Fields {
            path,
            shape: name.into(),
            fields: Vec::with_capacity(len),
            given,
        })
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Fields<'a>, Unspellable> {
        Ok(Fields {
            path: variant_path(name, variant),
            shape: name.into(),
            fields: Vec::with_capacity(len),
            given: &[],
        })
    }
}

impl ser::SerializeSeq for Items {
    type Ok = Expr;
    type Error = Unspellable;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unspellable> {
        self.push(value)
    }

    fn end(self) -> Result<Expr, Unspellable> {
        Ok(self.finish())
    }
}

impl ser::SerializeTuple for Items {
    type Ok = Expr;
    type Error = Unspellable;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unspellable> {
        self.push(value)
    }

    fn end(self) -> Result<Expr, Unspellable> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleStruct for Items {
    type Ok = Expr;
    type Error = Unspellable;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unspellable> {
        self.push(value)
    }

    fn end(self) -> Result<Expr, Unspellable> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleVariant for Items {
    type Ok = Expr;
    type Error = Unspellable;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unspellable> {
        self.push(value)
    }

    fn end(self) -> Result<Expr, Unspellable> {
        Ok(self.finish())
    }
}

impl ser::SerializeStruct for Fields<'_> {
    type Ok = Expr;
    type Error = Unspellable;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Unspellable> {
        self.push(name, value)
    }

    fn end(self) -> Result<Expr, Unspellable> {
        Ok(self.finish())
    }
}

impl ser::SerializeStructVariant for Fields<'_> {
    type Ok = Expr;
    type Error = Unspellable;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Unspellable> {
        self.push(name, value)
    }

    fn end(self) -> Result<Expr, Unspellable> {
        Ok(self.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct Outer {
        n: usize,
        pair: (usize, f64),
        block: [u32; 2],
        off: Option<i64>,
        source: String,
    }

    #[test]
    fn spells_literals_arrays_tuples_and_given_fields() {
        let v = Outer {
            n: 3,
            pair: (1, 2.5),
            block: [64, 8],
            off: Some(-1),
            source: "unused".into(),
        };
        let t = spell(&v, "::x::Outer", &[("source", quote!(SRC))]);
        let m1 = -1i64;
        let want = quote!(::x::Outer {
            n: 3usize,
            pair: (1usize, 2.5f64),
            block: [64u32, 8u32],
            off: ::core::option::Option::Some(#m1),
            source: SRC
        });
        assert_eq!(t.to_string(), want.to_string());
    }
}
