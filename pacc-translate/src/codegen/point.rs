//! The single-point statement of the time loop (`u[[sz, sy, sx]] += e;`): its CPU closure and
//! its CUDA kernel, in one place. Its lowering is `lower/step.rs`, its reads
//! `analysis::point_reads`, its declaration `codegen/program.rs`; the runtime runs it as
//! `Stage::Point` / `OpKind::Point` (docs/internals.md §7 counts what a new kind touches).

use super::cpu::{grids, time_binding, uses_time_expr, Rewrite};
use super::emit::{c_ident, point_name, Gen};
use crate::analysis::Analysis;
use crate::ir::{Func, Point, Ty};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::fmt::Write as _;
use syn::visit_mut::VisitMut;

/// The statements evaluating each point's index (`__p<i>`), and pushing its closure, which
/// writes the element at that index only (the same `__p<i>` goes into the invocation's points,
/// as the contract of `CpuKernels::new` asks).
pub fn cpu_closures(f: &Func, an: &Analysis) -> (TokenStream, TokenStream) {
    let names: Vec<String> = f.arrays.iter().map(|a| a.name.to_string()).collect();
    let mut eval = TokenStream::new();
    let mut push = TokenStream::new();
    for (i, p) in f.points().enumerate() {
        let pv = format_ident!("__p{i}");
        let idx = &p.index;
        let nd = f.ndim;
        eval.extend(quote!(let #pv: [i64; #nd] = [#((#idx) as i64),*];));
        let ivars: Vec<syn::Ident> = (0..nd).map(|a| format_ident!("__i{a}")).collect();
        let mut rw = Rewrite {
            arrays: &names,
            ndim: nd,
            point: Some(ivars.clone()),
        };
        let mut stmt = p.stmt.clone();
        rw.visit_stmt_mut(&mut stmt);
        let mut used = an.point_reads[i].clone();
        if !used.contains(&p.array) {
            used.push(p.array);
        }
        used.sort();
        let g = grids(f, &used);
        let t = time_binding(f, uses_time_expr(&p.value));
        let ax: Vec<usize> = (0..nd).collect();
        push.extend(quote! {
            __points_cpu.push(::std::boxed::Box::new(|__f: &::pacc::runtime::exec::KernelFrame<'_>| {
                #g
                #t
                #(let #ivars: usize = #pv[#ax] as usize;)*
                #stmt
            }));
        });
    }
    (eval, push)
}

impl Gen<'_> {
    /// The point kernel `pacc_<fn>_p<i>`: one thread applies the statement at its element.
    pub(super) fn point(&mut self, i: usize, p: &Point) {
        let f = self.f;
        let mut params: Vec<String> = [
            "pacc_base",
            "pacc_n0",
            "pacc_n1",
            "pacc_n2",
            "pacc_rp",
            "pacc_t",
            "pacc_i0",
            "pacc_i1",
            "pacc_i2",
        ]
        .iter()
        .map(|p| format!("long long {p}"))
        .collect();
        params.extend(self.common_params(&[p.array], false));
        let _ = writeln!(
            self.out,
            "extern \"C\" __global__ void {}(\n    {})\n{{",
            point_name(f, i),
            params.join(",\n    ")
        );
        self.out
            .push_str("    if (blockIdx.x != 0 || threadIdx.x != 0) return;\n");
        let at = if f.ndim == 3 {
            "((pacc_i0 - pacc_base) * pacc_n1 + pacc_i1) * pacc_rp + pacc_i2"
        } else {
            "(pacc_i0 - pacc_base) * pacc_rp + pacc_i1"
        };
        let _ = writeln!(self.out, "    const long long pacc_at = {at};");
        self.point_at = Some("pacc_at".into());
        self.time_binding("    ", uses_time_expr(&p.value));
        let elem = Ty::from_elem(f.arrays[p.array].elem);
        let target = format!("{}[pacc_at]", c_ident(&f.arrays[p.array].name.to_string()));
        let v = self.expr(&p.value, Some(elem));
        let rhs = match p.op {
            None => v,
            Some(op) => self.arith(op, &target, &v, elem),
        };
        let _ = writeln!(self.out, "    {target} = {rhs};");
        self.out.push_str("}\n");
    }
}
