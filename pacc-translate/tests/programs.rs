//! The example programs the snapshot and CUDA syntax tests translate.

use std::sync::OnceLock;

pub const LAPLACE2D: &str = r#"
use ndarray::Array2;

#[pacc::pipeline(block_steps = 4)]
pub fn laplace(a: &mut Array2<f32>, b: &mut Array2<f32>, iters: usize) -> f32 {
    let (ny, nx) = a.dim();
    let mut sum = 0.0f32;
    for _t in 0..iters {
        sum = 0.0;
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                let v = 0.25 * (a[[y - 1, x]] + a[[y + 1, x]] + a[[y, x - 1]] + a[[y, x + 1]]);
                b[[y, x]] = v;
                sum += v;
            }
        }
        std::mem::swap(a, b);
    }
    sum / ((ny - 2) * (nx - 2)) as f32
}
"#;

pub const ACOUSTIC3D: &str = r#"
use ndarray::{Array3, ArrayView3};

#[pacc::pipeline(halo = 4, chunks = 8)]
pub fn acoustic(
    prev: &mut Array3<f32>,
    cur: &mut Array3<f32>,
    vel: ArrayView3<f32>,
    wavelet: &[f32],
    src: (usize, usize, usize),
    dt: f32,
    dx: f32,
    steps: usize,
) {
    let (nz, ny, nx) = cur.dim();
    let (sz, sy, sx) = src;
    let c0: f32 = -205.0 / 72.0;
    let c1: f32 = 8.0 / 5.0;
    let c2: f32 = -1.0 / 5.0;
    let c3: f32 = 8.0 / 315.0;
    let c4: f32 = -1.0 / 560.0;
    let r = dt * dt / (dx * dx);
    for t in 0..steps {
        for z in 4..nz - 4 {
            for y in 4..ny - 4 {
                for x in 4..nx - 4 {
                    let lap = 3.0 * c0 * cur[[z, y, x]]
                        + c1 * (cur[[z + 1, y, x]] + cur[[z - 1, y, x]] + cur[[z, y + 1, x]] + cur[[z, y - 1, x]] + cur[[z, y, x + 1]] + cur[[z, y, x - 1]])
                        + c2 * (cur[[z + 2, y, x]] + cur[[z - 2, y, x]] + cur[[z, y + 2, x]] + cur[[z, y - 2, x]] + cur[[z, y, x + 2]] + cur[[z, y, x - 2]])
                        + c3 * (cur[[z + 3, y, x]] + cur[[z - 3, y, x]] + cur[[z, y + 3, x]] + cur[[z, y - 3, x]] + cur[[z, y, x + 3]] + cur[[z, y, x - 3]])
                        + c4 * (cur[[z + 4, y, x]] + cur[[z - 4, y, x]] + cur[[z, y + 4, x]] + cur[[z, y - 4, x]] + cur[[z, y, x + 4]] + cur[[z, y, x - 4]]);
                    let v = vel[[z, y, x]];
                    prev[[z, y, x]] = 2.0 * cur[[z, y, x]] - prev[[z, y, x]] + v * v * r * lap;
                }
            }
        }
        prev[[sz, sy, sx]] += vel[[sz, sy, sx]] * vel[[sz, sy, sx]] * dt * dt * wavelet[t];
        std::mem::swap(prev, cur);
    }
}
"#;

/// Himeno's Jacobi sweep as the examples run it: the `jacobi` function of
/// `src/models/himeno.rs` (with the file's imports), taken from the model's own source so that
/// the two cannot drift apart.
pub fn himeno() -> &'static str {
    static SRC: OnceLock<String> = OnceLock::new();
    SRC.get_or_init(|| model_function(include_str!("../../src/models/himeno.rs"), "jacobi"))
}

/// The `use` items of a model's source and its function `name`, printed back as source.
fn model_function(source: &str, name: &str) -> String {
    let file = syn::parse_file(source).expect("the model parses");
    let items: Vec<syn::Item> = (file.items.into_iter())
        .filter(|item| match item {
            syn::Item::Use(_) => true,
            syn::Item::Fn(f) => f.sig.ident == name,
            _ => false,
        })
        .collect();
    assert!(
        items.iter().any(|i| matches!(i, syn::Item::Fn(_))),
        "the model has no function `{name}`"
    );
    prettyplease::unparse(&syn::File {
        shebang: None,
        attrs: Vec::new(),
        items,
    })
}
