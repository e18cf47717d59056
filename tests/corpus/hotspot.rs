//! Rodinia's HotSpot (Huang et al., "HotSpot: a compact thermal modeling methodology",
//! IEEE TVLSI 2006; Che et al., "Rodinia", IISWC 2009): the transient temperature of a chip
//! on a 2D grid of cells, each cell's change the dissipated power plus the heat exchanged
//! with its four neighbours (lateral resistances Rx, Ry) and with the ambient through the
//! package (Rz), scaled by step / capacitance. Edge cells see themselves in place of a missing
//! neighbour. Written as the benchmark's description lays it out: a `single_iteration` routine
//! computing `result` from `temp`, called from the time loop, and the two grids exchanged.
//!
//! Forms: a time-loop helper `fn single_iteration(&mut result, &temp, ...)` nested in the
//! annotated function, a whole-grid nest (`0..rows`, `0..cols`) with edges handled by a guard
//! (`if r > 0 { temp[[r - 1, c]] } else { temp[[r, c]] }`) and by clamps
//! (`temp[[(r + 1).min(rows - 1), c]]`), a `let` of scalars derived before the time loop, f32.

use crate::harness::{f2, Case, Options, Outcome, Ran, STEPS};
use ndarray::Array2;

#[allow(clippy::too_many_arguments)]
#[pacc::pipeline]
pub fn hotspot(
    temp: &mut Array2<f32>,
    result: &mut Array2<f32>,
    power: &Array2<f32>,
    cap: f32,
    rx: f32,
    ry: f32,
    rz: f32,
    amb_temp: f32,
    step: f32,
    num_iterations: usize,
) {
    #[allow(clippy::too_many_arguments)]
    fn single_iteration(
        result: &mut Array2<f32>,
        temp: &Array2<f32>,
        power: &Array2<f32>,
        rows: usize,
        cols: usize,
        step_div_cap: f32,
        rx_1: f32,
        ry_1: f32,
        rz_1: f32,
        amb_temp: f32,
    ) {
        for r in 0..rows {
            for c in 0..cols {
                let t = temp[[r, c]];
                let north = if r > 0 { temp[[r - 1, c]] } else { t };
                let south = temp[[(r + 1).min(rows - 1), c]];
                let west = if c > 0 { temp[[r, c - 1]] } else { t };
                let east = temp[[r, (c + 1).min(cols - 1)]];
                let delta = step_div_cap
                    * (power[[r, c]]
                        + (south + north - 2.0 * t) * ry_1
                        + (east + west - 2.0 * t) * rx_1
                        + (amb_temp - t) * rz_1);
                result[[r, c]] = t + delta;
            }
        }
    }

    let (rows, cols) = temp.dim();
    let step_div_cap = step / cap;
    let (rx_1, ry_1, rz_1) = (1.0 / rx, 1.0 / ry, 1.0 / rz);
    for _i in 0..num_iterations {
        single_iteration(
            result,
            temp,
            power,
            rows,
            cols,
            step_div_cap,
            rx_1,
            ry_1,
            rz_1,
            amb_temp,
        );
        std::mem::swap(temp, result);
    }
}

fn go(o: Option<&Options>, wide: bool) -> Ran {
    let n = if wide { (32, 140) } else { (24, 18) };
    let (mut temp, mut result) = (f2::<f32>(n, 320.0), f2::<f32>(n, 0.0));
    let power = f2::<f32>(n, 0.001);
    let ((), rep) = call!(
        hotspot(
            &mut temp,
            &mut result,
            &power,
            0.5,
            2.0,
            2.0,
            40.0,
            300.0,
            0.1,
            STEPS
        ),
        o
    );
    Ok((
        Outcome::new().array("temp", &temp).array("result", &result),
        rep,
    ))
}

pub fn case() -> Case {
    Case {
        name: "hotspot",
        program: hotspot::program,
        go,
    }
}
