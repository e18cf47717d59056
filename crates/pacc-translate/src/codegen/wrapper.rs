//! The wrapper: the user's signature running the pipeline, and `mod <name>` with `serial`,
//! `CUDA_SOURCE`, `program()` and `run(.., &Options)` (docs/internals.md §1).

use crate::analysis::Analysis;
use crate::codegen::{cpu, program};
use crate::ir::{Func, ParamKind, Passing, StepItem};
use pacc_runtime::program::{Program, Role};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{FnArg, Pat};

pub fn generate(f: &Func, an: &Analysis, prog: &Program) -> TokenStream {
    let item = &f.item;
    let vis = &item.vis;
    let name = &f.name;
    let name_str = name.to_string();
    let attrs: Vec<_> = item.attrs.iter().filter(|a| !crate::is_pipeline_attr(a)).collect();
    let sig = &item.sig;
    let inputs = &sig.inputs;
    let output = &sig.output;
    let ret_ty = match output {
        syn::ReturnType::Default => quote!(()),
        syn::ReturnType::Type(_, t) => quote!(#t),
    };
    let args: Vec<&syn::Ident> = f.params.iter().map(|p| &p.name).collect();
    let body = &item.block;
    let cuda = &prog.cuda_source;
    let prog_expr = program::tokens(prog, quote!(::std::string::String::from(CUDA_SOURCE)));

    // `run`'s parameters: the user's, with views that are handed over mutably made `mut`.
    let run_inputs = inputs.iter().map(|a| match a {
        FnArg::Typed(pt) => {
            let mut pt = pt.clone();
            if let Pat::Ident(pi) = &mut *pt.pat {
                let is_mut_view = f.params.iter().any(|p| {
                    p.name == pi.ident
                        && matches!(p.kind, ParamKind::Array(i) if matches!(f.arrays[i].passing, Passing::View { .. }) && an.roles[i] != Role::Input)
                });
                if is_mut_view {
                    pi.mutability = Some(Default::default());
                }
            }
            quote!(#pt)
        }
        other => quote!(#other),
    });

    // Serial path: shape and steps for the report.
    let first = &f.arrays[0].name;
    let only_params = |e: &syn::Expr| {
        let names: Vec<String> = f.params.iter().map(|p| p.name.to_string()).collect();
        idents(quote!(#e)).iter().all(|i| names.contains(i) || i == "as" || crate::ir::Ty::from_name(i).is_some())
    };
    let (start, end) = (&f.time.start, &f.time.end);
    let serial_steps = if only_params(start) && only_params(end) {
        steps_expr(f)
    } else {
        quote!(0usize)
    };

    let pre = &f.pre;
    let post = &f.post;
    let range = if f.time.inclusive {
        quote!((#start)..=(#end))
    } else {
        quote!((#start)..(#end))
    };
    let t_like = if f.time.inclusive {
        quote!(*__tr.start())
    } else {
        quote!(__tr.start)
    };
    let steps = steps_expr(f);

    let arrays = f.arrays.iter().enumerate().map(|(i, a)| {
        let n = &a.name;
        let s = n.to_string();
        let writable = an.roles[i] != Role::Input;
        match (a.passing, writable) {
            (Passing::Ref { mutable: true }, true) => quote!(::pacc::runtime::host::host_array_mut(&mut *#n, #s)?),
            (Passing::Ref { .. }, _) => quote!(::pacc::runtime::host::host_array(&*#n, #s)?),
            (Passing::View { .. }, true) => quote!(::pacc::runtime::host::host_array_mut(&mut #n, #s)?),
            (Passing::View { .. }, false) => quote!(::pacc::runtime::host::host_array(&#n, #s)?),
        }
    });
    let scalars = f.scalars.iter().map(|s| {
        let v = cpu::typed(&s.name, s.ty);
        quote!(::pacc::runtime::ScalarValue::from(#v))
    });
    let slices = f.slices.iter().map(|s| {
        let n = &s.name;
        let ty = format_ident!("{}", s.elem.rust_name());
        quote!(::pacc::runtime::host::host_slice::<#ty>(&#n[..]))
    });
    let npoints = f.points().count();
    let pvars: Vec<_> = (0..npoints).map(|i| format_ident!("__p{i}")).collect();
    let red_init = f.reductions.iter().map(|r| {
        let n = &r.name;
        let v = cpu::typed(n, r.ty);
        quote!((#v) as f64)
    });
    let resets = f.time.items.iter().filter_map(|i| match i {
        StepItem::Reset { reduction, value } => {
            let v = cpu::typed(value, f.reductions[*reduction].ty);
            Some(quote!((#v) as f64))
        }
        _ => None,
    });
    let red_back = f.reductions.iter().enumerate().map(|(i, r)| {
        let n = &r.name;
        let ty = format_ident!("{}", r.ty.rust_name());
        quote!(#n = __out.reductions[#i] as #ty;)
    });
    let swaps = f.time.items.iter().filter_map(|i| match i {
        StepItem::Swap { stmt, .. } => Some(stmt),
        _ => None,
    });
    let kernels = cpu::kernels(f, an);
    let (point_eval, point_push) = cpu::points(f, an);
    let time_helpers = time_helpers();

    quote! {
        #(#attrs)*
        #[allow(unused_mut, unused_variables)]
        #vis fn #name(#inputs) #output {
            let __opts = ::pacc::runtime::Options::from_env().unwrap_or_else(|e| panic!("pacc: {e}"));
            match #name::run(#(#args,)* &__opts) {
                ::core::result::Result::Ok((__r, _report)) => __r,
                ::core::result::Result::Err(e) => panic!("pacc: `{}` failed: {}", #name_str, e),
            }
        }

        #[allow(non_snake_case, unused_mut, unused_variables, unused_assignments, unused_parens, unused_braces, clippy::all)]
        #vis mod #name {
            use super::*;

            /// The original function, untouched.
            pub fn serial(#inputs) #output #body

            /// Generated CUDA C of every kernel and point statement.
            pub const CUDA_SOURCE: &str = #cuda;

            /// The program description (built once).
            pub fn program() -> &'static ::pacc::runtime::Program {
                static P: ::std::sync::OnceLock<::pacc::runtime::Program> = ::std::sync::OnceLock::new();
                P.get_or_init(|| #prog_expr)
            }

            /// Runs with explicit options; returns the function's value and a report.
            pub fn run(#(#run_inputs,)* __opts: &::pacc::runtime::Options)
                -> ::core::result::Result<(#ret_ty, ::pacc::runtime::Report), ::pacc::runtime::Error>
            {
                if __opts.backend == ::pacc::runtime::BackendChoice::Serial {
                    let __shape: ::std::vec::Vec<usize> = #first.shape().to_vec();
                    let __steps: usize = #serial_steps;
                    let __start = ::std::time::Instant::now();
                    let __r = serial(#(#args),*);
                    return ::core::result::Result::Ok((
                        __r,
                        ::pacc::runtime::Report::serial(program(), &__shape, __steps, __start.elapsed()),
                    ));
                }
                #(#pre)*
                let __tr = #range;
                let __t_like = #t_like;
                let __t0: i64 = (#t_like) as i64;
                let __steps: usize = #steps;
                let __arrays = vec![#(#arrays),*];
                let __scalars: ::std::vec::Vec<::pacc::runtime::ScalarValue> = vec![#(#scalars),*];
                let __slices: ::std::vec::Vec<::pacc::runtime::HostSlice> = vec![#(#slices),*];
                #point_eval
                let __points: ::std::vec::Vec<::std::vec::Vec<i64>> = vec![#(#pvars.to_vec()),*];
                let __reduction_init: ::std::vec::Vec<f64> = vec![#(#red_init),*];
                let __reset_values: ::std::vec::Vec<f64> = vec![#(#resets),*];
                let mut __kernels: ::std::vec::Vec<::std::boxed::Box<::pacc::runtime::exec::CpuKernelFn<'_>>> = ::std::vec::Vec::new();
                #kernels
                let mut __points_cpu: ::std::vec::Vec<::std::boxed::Box<::pacc::runtime::exec::CpuPointFn<'_>>> = ::std::vec::Vec::new();
                #point_push
                let __out = ::pacc::runtime::run(
                    program(),
                    ::pacc::runtime::Invocation {
                        arrays: __arrays,
                        scalars: __scalars,
                        slices: __slices,
                        points: __points,
                        t0: __t0,
                        steps: __steps,
                        reduction_init: __reduction_init,
                        reset_values: __reset_values,
                        cpu: ::pacc::runtime::exec::CpuKernels { kernels: __kernels, points: __points_cpu },
                    },
                    __opts,
                )?;
                #(#red_back)*
                for _ in 0..__out.swap_replays {
                    #(#swaps)*
                }
                let __report = __out.report;
                let __ret: #ret_ty = { #(#post)* };
                ::core::result::Result::Ok((__ret, __report))
            }

            #time_helpers
        }
    }
}

fn steps_expr(f: &Func) -> TokenStream {
    let (start, end) = (&f.time.start, &f.time.end);
    let incl = f.time.inclusive;
    let extra = if incl { quote!(+ 1) } else { quote!() };
    let r = if incl {
        quote!((#start)..=(#end))
    } else {
        quote!((#start)..(#end))
    };
    let (s, e) = if incl {
        (quote!(*__r.start()), quote!(*__r.end()))
    } else {
        (quote!(__r.start), quote!(__r.end))
    };
    quote!({
        let __r = #r;
        let (__a, __b) = ((#s) as i64, (#e) as i64 #extra);
        if __b > __a { (__b - __a) as usize } else { 0usize }
    })
}

fn idents(ts: TokenStream) -> Vec<String> {
    let mut v = Vec::new();
    for t in ts {
        match t {
            proc_macro2::TokenTree::Ident(i) => v.push(i.to_string()),
            proc_macro2::TokenTree::Group(g) => v.extend(idents(g.stream())),
            _ => {}
        }
    }
    v
}

/// `__pacc_time(like, t)`: the step's time value in the time variable's own integer type.
fn time_helpers() -> TokenStream {
    quote! {
        #[doc(hidden)]
        pub trait __PaccTime: Copy {
            fn __from_i64(v: i64) -> Self;
        }
        macro_rules! __pacc_time_impls {
            ($($t:ty),*) => { $(impl __PaccTime for $t { fn __from_i64(v: i64) -> Self { v as $t } })* };
        }
        __pacc_time_impls!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
        #[doc(hidden)]
        #[inline(always)]
        pub fn __pacc_time<T: __PaccTime>(_like: T, v: i64) -> T {
            T::__from_i64(v)
        }
    }
}
