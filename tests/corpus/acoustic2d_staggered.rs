//! Linear acoustics (pressure and particle velocity) on a 2D staggered grid, the
//! velocity-pressure form of Virieux ("P-SV wave propagation in heterogeneous media:
//! velocity-stress finite-difference method", Geophysics 1986) reduced to a fluid: each step
//! first updates both velocity components from the pressure gradient, then the pressure from
//! the velocity divergence, with a density and a bulk modulus per cell.
//!
//! Forms: two nests per step (velocity, then pressure) and no swap, a nest writing two arrays,
//! forward and backward one-sided differences, read-only material arrays, f32 scalars.

use crate::harness::{f2, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array2;

#[allow(clippy::too_many_arguments)]
#[pacc::pipeline]
pub fn acoustic_step(
    p: &mut Array2<f32>,
    vx: &mut Array2<f32>,
    vy: &mut Array2<f32>,
    buoyancy: &Array2<f32>,
    kappa: &Array2<f32>,
    dt_dx: f32,
    steps: usize,
) {
    let (ny, nx) = p.dim();
    for _it in 0..steps {
        // velocities at the half-cell faces, from the pressure gradient
        for j in 1..ny - 1 {
            for i in 1..nx - 1 {
                let b = buoyancy[[j, i]];
                vx[[j, i]] = vx[[j, i]] - dt_dx * b * (p[[j, i + 1]] - p[[j, i]]);
                vy[[j, i]] = vy[[j, i]] - dt_dx * b * (p[[j + 1, i]] - p[[j, i]]);
            }
        }
        // pressure at the cell centres, from the velocity divergence
        for j in 1..ny - 1 {
            for i in 1..nx - 1 {
                let div = (vx[[j, i]] - vx[[j, i - 1]]) + (vy[[j, i]] - vy[[j - 1, i]]);
                p[[j, i]] = p[[j, i]] - dt_dx * kappa[[j, i]] * div;
            }
        }
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { (31, 133) } else { (24, 19) };
    let (mut p, mut vx, mut vy) = (f2::<f32>(n, 0.0), f2::<f32>(n, 0.05), f2::<f32>(n, -0.1));
    let (b, k) = (f2::<f32>(n, 0.5), f2::<f32>(n, 1.0));
    let ((), rep) = call!(
        acoustic_step(&mut p, &mut vx, &mut vy, &b, &k, 0.2, STEPS),
        o
    );
    let out = Outcome::new().array("p", &p).array("vx", &vx);
    Ok((out.array("vy", &vy), rep))
}

pub fn case() -> Case {
    Case {
        name: "acoustic2d_staggered",
        program: acoustic_step::program,
        go,
    }
}
