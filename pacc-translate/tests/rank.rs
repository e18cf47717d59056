//! Nests of fewer loops than the arrays have axes (`lower/rank.rs`): each axis without a loop
//! becomes a one-index loop over the accesses' fixed index, and other fixed indices read at
//! literal offsets from it; indices that are no such offset are refused.

use pacc_runtime::program::Bound;
use pacc_translate::translate;
use quote::quote;

fn tr(item: proc_macro2::TokenStream) -> pacc_translate::Translation {
    translate(quote!(), item).unwrap_or_else(|e| panic!("{e}"))
}

fn err(item: proc_macro2::TokenStream) -> String {
    match translate(quote!(), item) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e
            .into_iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[test]
fn a_row_nest_over_2d_arrays_is_a_one_row_full_nest() {
    let t = tr(quote! {
        fn f(a: &mut Array2<f64>, b: &mut Array2<f64>, src: &[f64], steps: usize) {
            let (n, m) = a.dim();
            for t in 0..steps {
                for j in 0..m {
                    a[[0, j]] = src[t] + b[[1, j]];
                }
                for i in 1..n {
                    for j in 0..m {
                        b[[i, j]] = a[[i - 1, j]];
                    }
                }
            }
        }
    });
    let r = &t.program.kernels[0].ranges;
    assert_eq!((r[0].lo, r[0].hi), (Bound::start(0), Bound::start(1)));
    assert_eq!((r[1].lo, r[1].hi), (Bound::start(0), Bound::end(0)));
    // The read one row below the write reads one past the new loop variable.
    assert!(t.host.to_string().contains("__pacc_a0 + 1"), "{}", t.host);
}

#[test]
fn a_boundary_plane_of_a_3d_grid_is_a_one_plane_nest() {
    let t = tr(quote! {
        fn f(u: &mut Array3<f32>, v: &mut Array3<f32>, steps: usize) {
            let (nz, ny, nx) = u.dim();
            for _t in 0..steps {
                for z in 0..nz {
                    for x in 0..nx {
                        u[[z, ny - 1, x]] = v[[z, ny - 2, x]];
                    }
                }
                for z in 1..nz - 1 {
                    for y in 1..ny - 1 {
                        for x in 1..nx - 1 {
                            v[[z, y, x]] = u[[z, y - 1, x]] + u[[z, y + 1, x]];
                        }
                    }
                }
                std::mem::swap(u, v);
            }
        }
    });
    let r = &t.program.kernels[0].ranges;
    assert_eq!((r[0].lo, r[0].hi), (Bound::start(0), Bound::end(0)));
    assert_eq!((r[1].lo, r[1].hi), (Bound::end(-1), Bound::end(0)));
    assert_eq!((r[2].lo, r[2].hi), (Bound::start(0), Bound::end(0)));
    assert!(t.host.to_string().contains("__pacc_a1 - 1"), "{}", t.host);
}

#[test]
fn fixed_indices_that_are_no_literal_offset_are_refused() {
    let e = err(quote! {
        fn f(a: &mut Array2<f64>, k: usize, steps: usize) {
            let (_n, m) = a.dim();
            for _t in 0..steps {
                for j in 0..m {
                    a[[0, j]] = a[[k, j]];
                }
            }
        }
    });
    assert!(e.contains("by more than a literal offset"), "{e}");
    assert!(e.contains("`u[[0, j]]`"), "{e}");
}

/// A boundary nest may read the array it writes where the read leaves the nest's range: a row
/// copying the row inside it (width 1, offset 1). A read that can land on a point the nest
/// writes stays refused: two rows reading one row up, or the row read along its own axis.
#[test]
fn a_boundary_copy_from_the_array_it_writes_is_accepted_where_the_read_leaves_the_range() {
    let t = tr(quote! {
        fn f(u: &mut Array3<f32>, v: &mut Array3<f32>, steps: usize) {
            let (nz, ny, nx) = u.dim();
            for _t in 0..steps {
                for z in 1..nz - 1 {
                    for y in 0..ny {
                        for x in 0..nx {
                            v[[z, y, x]] = u[[z - 1, y, x]] + u[[z + 1, y, x]];
                        }
                    }
                }
                for y in 0..ny {
                    for x in 0..nx {
                        v[[0, y, x]] = v[[1, y, x]];
                    }
                }
                for z in 0..nz {
                    for y in 0..ny {
                        v[[z, y, nx - 1]] = v[[z, y, nx - 3]];
                    }
                }
                std::mem::swap(u, v);
            }
        }
    });
    assert_eq!(t.program.kernels.len(), 3);
    for rows in [
        quote!(for y in 0..2 {
            for x in 0..nx {
                v[[y, x]] = v[[y + 1, x]];
            }
        }),
        quote!(for x in 0..nx - 1 {
            v[[0, x]] = v[[0, x + 1]];
        }),
    ] {
        let e = err(quote! {
            fn f(u: &mut Array2<f32>, v: &mut Array2<f32>, steps: usize) {
                let (ny, nx) = u.dim();
                for _t in 0..steps {
                    #rows
                    std::mem::swap(u, v);
                }
            }
        });
        assert!(
            e.contains("`v` is written in this loop nest and read here ahead of the point"),
            "{e}"
        );
    }
}

/// A boundary loop writing two rows is one nest per row; a split that would let a statement see
/// a value serial computes after it is refused with the fixed-index message.
#[test]
fn a_loop_writing_two_boundary_rows_is_split_where_serial_values_hold() {
    let t = tr(quote! {
        fn f(u: &mut Array2<f32>, v: &mut Array2<f32>, steps: usize) {
            let (ny, nx) = u.dim();
            for _t in 0..steps {
                for y in 1..ny - 1 {
                    for x in 0..nx {
                        v[[y, x]] = u[[y - 1, x]] + u[[y + 1, x]];
                    }
                }
                for x in 0..nx {
                    v[[0, x]] = v[[1, x]];
                    v[[ny - 1, x]] = v[[ny - 2, x]];
                }
                std::mem::swap(u, v);
            }
        }
    });
    let k = &t.program.kernels;
    assert_eq!(k.len(), 3);
    assert_eq!(
        (k[1].ranges[0].lo, k[1].ranges[0].hi),
        (Bound::start(0), Bound::start(1))
    );
    assert_eq!(
        (k[2].ranges[0].lo, k[2].ranges[0].hi),
        (Bound::end(-1), Bound::end(0))
    );
    // The first row reads the second's array behind the point: serial reads the second row's
    // new value at x - 1, which the split would not have written yet.
    let e = err(quote! {
        fn f(u: &mut Array2<f32>, v: &mut Array2<f32>, steps: usize) {
            let (ny, nx) = u.dim();
            for _t in 0..steps {
                for x in 1..nx {
                    v[[0, x]] = v[[ny - 1, x - 1]] + u[[0, x]];
                    v[[ny - 1, x]] = u[[1, x]];
                }
                std::mem::swap(u, v);
            }
        }
    });
    assert!(e.contains("by more than a literal offset"), "{e}");
}
