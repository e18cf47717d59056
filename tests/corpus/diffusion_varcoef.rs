//! Explicit 2D diffusion with a variable coefficient, `u_t = div(k grad u)`, in conservative
//! (flux) form: the coefficient at each cell face is the mean of the two cells it separates,
//! the change the difference of the fluxes through opposite faces (e.g. Morton & Mayers,
//! "Numerical Solution of Partial Differential Equations", 2005, §2.15; LeVeque 2007, §9.1).
//! The interior is `lo..hi` locals derived from the grid size, as codes that keep a ghost
//! layer of configurable width write it; face means come from a small kernel helper.
//!
//! Forms: a kernel helper `fn avg(a: f64, b: f64) -> f64` nested in the annotated function,
//! loop bounds from `let` locals (`let (lo, hi_y, hi_x) = (1, ny - 1, nx - 1)`;
//! `for y in lo..hi_y`), a read-only coefficient array read at offsets, f64, a swap.

use crate::harness::{f2, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array2;

#[pacc::pipeline]
pub fn diffuse(
    u: &mut Array2<f64>,
    u_new: &mut Array2<f64>,
    k: &Array2<f64>,
    dt_dx2: f64,
    steps: usize,
) {
    fn avg(a: f64, b: f64) -> f64 {
        0.5 * (a + b)
    }

    let (ny, nx) = u.dim();
    let (lo, hi_y, hi_x) = (1, ny - 1, nx - 1);
    for _step in 0..steps {
        for y in lo..hi_y {
            for x in lo..hi_x {
                let ke = avg(k[[y, x]], k[[y, x + 1]]);
                let kw = avg(k[[y, x]], k[[y, x - 1]]);
                let kn = avg(k[[y, x]], k[[y - 1, x]]);
                let ks = avg(k[[y, x]], k[[y + 1, x]]);
                let flux = ke * (u[[y, x + 1]] - u[[y, x]]) - kw * (u[[y, x]] - u[[y, x - 1]])
                    + ks * (u[[y + 1, x]] - u[[y, x]])
                    - kn * (u[[y, x]] - u[[y - 1, x]]);
                u_new[[y, x]] = u[[y, x]] + dt_dx2 * flux;
            }
        }
        std::mem::swap(u, u_new);
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { (31, 141) } else { (25, 20) };
    let (mut u, mut v) = (f2::<f64>(n, 0.0), f2::<f64>(n, 0.0));
    let k = f2::<f64>(n, 0.5);
    let ((), rep) = call!(diffuse(&mut u, &mut v, &k, 0.1, STEPS), o);
    Ok((Outcome::new().array("u", &u).array("u_new", &v), rep))
}

pub fn case() -> Case {
    Case {
        name: "diffusion_varcoef",
        program: diffuse::program,
        go,
    }
}
