//! Rodinia's HotSpot3D (the 3D, multi-layer extension of HotSpot; Che et al., "Rodinia",
//! IISWC 2009): a 7-point thermal update of a stack of `nz` layers of `ny` x `nx` cells with
//! coefficients for the centre (cc), the four in-layer neighbours (cw, ce, cn, cs), the layers
//! above and below (ct, cb), the power input and the ambient temperature; a cell on a face of
//! the block takes its own temperature for the missing neighbour. The grid extents are the
//! benchmark's parameters, not read from the arrays.
//!
//! Forms: loop bounds from `usize` parameters (`0..nz`, `0..ny`, `0..nx`), a whole-grid nest
//! with every neighbour guarded (`if x > 0 { .. } else { c }`, `if x + 1 < nx { .. }`), a
//! time-loop helper taking the two grids, f32.

use crate::harness::{f3, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array3;

#[allow(clippy::too_many_arguments)]
#[pacc::pipeline]
pub fn hotspot3d(
    t_in: &mut Array3<f32>,
    t_out: &mut Array3<f32>,
    p_in: &Array3<f32>,
    nx: usize,
    ny: usize,
    nz: usize,
    coef: (f32, f32, f32, f32),
    step_div_cap: f32,
    amb_temp: f32,
    iterations: usize,
) {
    #[allow(clippy::too_many_arguments)]
    fn compute_tran_temp(
        t_out: &mut Array3<f32>,
        t_in: &Array3<f32>,
        p_in: &Array3<f32>,
        nx: usize,
        ny: usize,
        nz: usize,
        cc: f32,
        cn: f32,
        ce: f32,
        ct: f32,
        step_div_cap: f32,
        amb_temp: f32,
    ) {
        let (cs, cw, cb) = (cn, ce, ct);
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    let c = t_in[[z, y, x]];
                    let w = if x > 0 { t_in[[z, y, x - 1]] } else { c };
                    let e = if x + 1 < nx { t_in[[z, y, x + 1]] } else { c };
                    let n = if y > 0 { t_in[[z, y - 1, x]] } else { c };
                    let s = if y + 1 < ny { t_in[[z, y + 1, x]] } else { c };
                    let b = if z > 0 { t_in[[z - 1, y, x]] } else { c };
                    let t = if z + 1 < nz { t_in[[z + 1, y, x]] } else { c };
                    t_out[[z, y, x]] = cc * c
                        + cw * w
                        + ce * e
                        + cs * s
                        + cn * n
                        + cb * b
                        + ct * t
                        + step_div_cap * p_in[[z, y, x]]
                        + ct * amb_temp;
                }
            }
        }
    }

    let (cc, cn, ce, ct) = coef;
    for _i in 0..iterations {
        compute_tran_temp(
            t_out,
            t_in,
            p_in,
            nx,
            ny,
            nz,
            cc,
            cn,
            ce,
            ct,
            step_div_cap,
            amb_temp,
        );
        std::mem::swap(t_in, t_out);
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { (12, 16, 136) } else { (13, 9, 10) };
    let (mut t_in, mut t_out) = (f3::<f32>(n, 320.0), f3::<f32>(n, 0.0));
    let p = f3::<f32>(n, 0.002);
    let (nz, ny, nx) = n;
    let coef = (0.4, 0.1, 0.1, 0.05);
    let ((), rep) = call!(
        hotspot3d(&mut t_in, &mut t_out, &p, nx, ny, nz, coef, 0.5, 80.0, STEPS),
        o
    );
    Ok((
        Outcome::new().array("t_in", &t_in).array("t_out", &t_out),
        rep,
    ))
}

pub fn case() -> Case {
    Case {
        name: "hotspot3d",
        program: hotspot3d::program,
        go,
    }
}
