//! 1D programs (planes of one point: 2D programs of shape `[n, 1]`), 1D series beside grids,
//! and nests whose loops are reordered to the arrays' layout.

use pacc_runtime::program::{Bound, Role};
use pacc_translate::translate;
use quote::quote;

fn tr(item: proc_macro2::TokenStream) -> pacc_translate::Translation {
    translate(Default::default(), item).unwrap_or_else(|e| panic!("{e}"))
}

fn err(item: proc_macro2::TokenStream) -> String {
    match translate(Default::default(), item) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_1d_program_is_2d_of_planes_of_one_point() {
    let t = tr(quote! {
        fn heat1d(u: &mut Array1<f64>, v: &mut Array1<f64>, alpha: f64, steps: usize) {
            let n = u.len();
            for _ in 0..steps {
                for i in 1..n - 1 {
                    v[i] = u[i] + alpha * (u[[i - 1]] - 2.0 * u[i] + u[i + 1]);
                }
                std::mem::swap(u, v);
            }
        }
    });
    let p = &t.program;
    assert_eq!(p.ndim, 2);
    assert_eq!(p.halo, 1);
    assert_eq!(p.kernels[0].ranges[0].lo, Bound::start(1));
    assert_eq!(p.kernels[0].ranges[0].hi, Bound::end(-1));
    // The inner axis: one point.
    assert_eq!(p.kernels[0].ranges[1].lo, Bound::start(0));
    assert_eq!(p.kernels[0].ranges[1].hi, Bound::start(1));
    assert_eq!(p.kernels[0].reads[0].lo, vec![-1, 0]);
    assert_eq!(p.kernels[0].reads[0].hi, vec![1, 0]);
    let host = t.host.to_string();
    assert!(host.contains("get2 (i - 1 , __pacc_x)"), "{host}");
    assert!(t.cuda.contains("__global__ void pacc_heat1d_k0"));
}

#[test]
fn extents_of_a_1d_array() {
    for len in [quote!(u.len()), quote!(u.dim()), quote!(u.shape()[0])] {
        let t = tr(quote! {
            fn f(u: &mut ArrayViewMut1<f32>, v: &mut Array<f32, Ix1>, steps: usize) {
                let n = #len;
                for _ in 0..steps {
                    for i in 2..n { v[[i]] = 0.5 * u[i - 2]; }
                    std::mem::swap(u, v);
                }
            }
        });
        assert_eq!(t.program.kernels[0].ranges[0].hi, Bound::end(0), "{len}");
    }
}

#[test]
fn series_beside_grids_and_in_1d_programs() {
    // Beside a 2D grid every 1D array is a series.
    let t = tr(quote! {
        fn f(a: &mut Array2<f64>, b: &mut Array2<f64>, g: &Array1<f64>, steps: usize) {
            let (ny, nx) = a.dim();
            for t in 0..steps {
                for y in 1..ny - 1 { for x in 0..nx { b[[y, x]] = a[[y - 1, x]] * g[[t]] + g[y]; } }
                std::mem::swap(a, b);
            }
        }
    });
    assert_eq!(t.program.arrays.len(), 2);
    assert_eq!(t.program.slices.len(), 1);
    assert!(t.host.to_string().contains("host_series"));
    // In a 1D program: read at the time step (a series), at a loop variable (a grid).
    let t = tr(quote! {
        fn g(u: &mut Array1<f64>, v: &mut Array1<f64>, c: &Array1<f64>, f: &Array1<f64>, steps: usize) {
            let n = u.len();
            for t in 0..steps {
                for i in 1..n - 1 { v[i] = c[i] * (u[i - 1] + u[i + 1]) + f[t]; }
                std::mem::swap(u, v);
                u[[0]] += f[t];
            }
        }
    });
    let p = &t.program;
    let names: Vec<_> = p.arrays.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["u", "v", "c"]);
    assert_eq!(p.arrays[2].role, Role::Input);
    assert_eq!(p.slices.len(), 1);
    assert_eq!(p.slices[0].name, "f");
    assert_eq!(p.points.len(), 1);
}

#[test]
fn a_1d_array_takes_one_index() {
    let e = err(quote! {
        fn f(u: &mut Array1<f64>, v: &mut Array1<f64>, steps: usize) {
            let n = u.len();
            for _ in 0..steps {
                for i in 1..n { v[[i, 0]] = u[i - 1]; }
                std::mem::swap(u, v);
            }
        }
    });
    assert!(e.contains("`v` has one axis"), "{e}");
    let e = err(quote! {
        fn f(u: &mut Array4<f64>) { for _ in 0..1 {} }
    });
    assert!(e.contains("1, 2 or 3 dimensions"), "{e}");
}

#[test]
fn loops_written_out_of_layout_order_are_reordered() {
    let t = tr(quote! {
        fn f(a: &mut Array3<f32>, b: &mut Array3<f32>, steps: usize) -> f32 {
            let (nz, ny, nx) = a.dim();
            let mut m = f32::NEG_INFINITY;
            for _ in 0..steps {
                for x in 1..nx - 1 {
                    for y in 0..ny {
                        for z in 2..nz {
                            b[[z, y, x]] = a[[z - 2, y, x + 1]] + a[[z, y, x - 1]];
                            m = m.max(b[[z, y, x]]);
                        }
                    }
                }
                std::mem::swap(a, b);
            }
            m
        }
    });
    let k = &t.program.kernels[0];
    // The bounds moved with their loops: z (2..nz) outermost, x (1..nx-1) innermost.
    assert_eq!(
        (k.ranges[0].lo, k.ranges[0].hi),
        (Bound::start(2), Bound::end(0))
    );
    assert_eq!(
        (k.ranges[2].lo, k.ranges[2].hi),
        (Bound::start(1), Bound::end(-1))
    );
    assert_eq!(k.reads[0].lo, vec![-2, 0, -1]);
    assert_eq!(
        t.notes,
        ["nest 0: loops reordered x,y,z -> z,y,x to follow the array layout"]
    );
    assert!(t.summary().contains("note: nest 0: loops reordered"));
    // The CPU kernel binds z to the plane and loops y, then x, with their own bounds.
    let host = t.host.to_string();
    assert!(
        host.contains("let z : usize = __plane ; for y in 0 .. ny { for x in 1 .. nx - 1"),
        "{host}"
    );
}

#[test]
fn reordered_sums_say_so_and_2d_nests_reorder_too() {
    let t = tr(quote! {
        fn f(a: &mut Array2<f64>, b: &mut Array2<f64>, steps: usize) -> f64 {
            let (ny, nx) = a.dim();
            let mut s = 0.0;
            for _ in 0..steps {
                for x in 0..nx { for y in 1..ny { b[[y, x]] = a[[y - 1, x]]; s += a[[y, x]]; } }
                std::mem::swap(a, b);
            }
            s
        }
    });
    assert_eq!(t.notes.len(), 1);
    assert!(
        t.notes[0].contains("loops reordered x,y -> y,x"),
        "{:?}",
        t.notes
    );
    assert!(t.notes[0].contains("to rounding"), "{:?}", t.notes);
    // Loops in layout order: no note.
    let t = tr(quote! {
        fn g(a: &mut Array2<f64>, b: &mut Array2<f64>, steps: usize) {
            let (ny, nx) = a.dim();
            for _ in 0..steps {
                for y in 1..ny { for x in 0..nx { b[[y, x]] = a[[y - 1, x]]; } }
                std::mem::swap(a, b);
            }
        }
    });
    assert!(t.notes.is_empty());
    // Indices that disagree on the order are still refused.
    let e = err(quote! {
        fn h(a: &mut Array2<f64>, b: &mut Array2<f64>, steps: usize) {
            let (ny, nx) = a.dim();
            for _ in 0..steps {
                for x in 0..nx { for y in 1..ny { b[[y, x]] = a[[x, y]]; } }
                std::mem::swap(a, b);
            }
        }
    });
    assert!(e.contains("indexes axis 0"), "{e}");
}
