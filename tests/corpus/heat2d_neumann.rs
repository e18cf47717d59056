//! Explicit heat with zero-flux (Neumann) edges by ghost copies, as finite-difference codes
//! apply boundary conditions after each update (Morton & Mayers 2005, §2.13; LeVeque 2007,
//! §2.12): the interior update into `un`, then each edge row and column copied from its
//! neighbour, then the swap.
//!
//! Forms: boundary loops of one `for` over 2D arrays (`un[[0, x]] = un[[1, x]]`), each copy
//! reading the array it writes one row or column inside; both rows in one loop, the columns in
//! one loop each; rows before columns, so the corners take the copied rows; the extents from
//! `.dim()`, f32.

use crate::harness::{f2, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array2;

#[pacc::pipeline]
pub fn heat_neumann(u: &mut Array2<f32>, un: &mut Array2<f32>, alpha: f32, steps: usize) {
    let (ny, nx) = u.dim();
    for _step in 0..steps {
        for y in 1..ny - 1 {
            for x in 1..nx - 1 {
                let lap =
                    u[[y - 1, x]] + u[[y + 1, x]] + u[[y, x - 1]] + u[[y, x + 1]] - 4.0 * u[[y, x]];
                un[[y, x]] = u[[y, x]] + alpha * lap;
            }
        }
        for x in 0..nx {
            un[[0, x]] = un[[1, x]];
            un[[ny - 1, x]] = un[[ny - 2, x]];
        }
        for y in 0..ny {
            un[[y, 0]] = un[[y, 1]];
        }
        for y in 0..ny {
            un[[y, nx - 1]] = un[[y, nx - 2]];
        }
        std::mem::swap(u, un);
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let (ny, nx) = if wide { (150, 130) } else { (21, 17) };
    let (mut u, mut un) = (f2::<f32>((ny, nx), 2.0), f2::<f32>((ny, nx), 0.5));
    let ((), rep) = call!(heat_neumann(&mut u, &mut un, 0.2, STEPS), o);
    Ok((Outcome::new().array("u", &u).array("un", &un), rep))
}

pub fn case() -> Case {
    Case {
        name: "heat2d_neumann",
        program: heat_neumann::program,
        go,
    }
}
