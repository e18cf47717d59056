//! The `cpu` configuration: hand-written rayon loops over planes on all cores (the OpenMP
//! baseline), and `--check-serial`, which holds them to the models' serial functions.

use crate::cli::Args;
use crate::kernels;
use crate::programs::{Model, Workload, ACOUSTIC_C, DX2, OMEGA};
use rayon::prelude::*;

impl Workload {
    pub fn cpu_steps(&mut self, steps: usize) {
        match self.model {
            Model::Acoustic | Model::Propagate => self.cpu_acoustic(steps),
            Model::Himeno => {
                for _ in 0..steps {
                    self.cpu_himeno_sweep();
                }
            }
        }
    }

    fn cpu_acoustic(&mut self, steps: usize) {
        let [nz, ny, nx] = self.shape;
        let plane = ny * nx;
        let (ip, ic, iv) = (self.phys("prev"), self.phys("cur"), self.phys("vel"));
        // `propagate` has no absorbing layer.
        let id = self.program.array_index("damp");
        let mut bind = [ip, ic];
        let c = ACOUSTIC_C;
        for t in 0..steps {
            let (wp, rc) = (bind[0], bind[1]);
            let cur_ptr = self.data[rc].as_ptr() as usize;
            let vel: &[f32] = &self.data[iv];
            let vel_ptr = vel.as_ptr() as usize;
            let damp_ptr = id.map(|d| self.data[d].as_ptr() as usize);
            let total = nz * plane;
            let prev = &mut self.data[wp];
            prev.par_chunks_mut(plane).enumerate().for_each(|(z, pp)| {
                if z < 4 || z >= nz - 4 {
                    return;
                }
                // SAFETY: cur, vel and damp are other arrays than prev, read only here.
                let cur = unsafe { std::slice::from_raw_parts(cur_ptr as *const f32, total) };
                let vel = unsafe { std::slice::from_raw_parts(vel_ptr as *const f32, total) };
                let damp =
                    damp_ptr.map(|p| unsafe { std::slice::from_raw_parts(p as *const f32, total) });
                for y in 4..ny - 4 {
                    let row = z * plane + y * nx;
                    for x in 4..nx - 4 {
                        let i = row + x;
                        let u = cur[i];
                        let mut lap = 3.0 * c[0] * u;
                        for (m, cm) in c.iter().enumerate().skip(1) {
                            let dz = m * plane;
                            let dy = m * nx;
                            lap += cm
                                * (cur[i - dz]
                                    + cur[i + dz]
                                    + cur[i - dy]
                                    + cur[i + dy]
                                    + cur[i - m]
                                    + cur[i + m]);
                        }
                        let o = i - z * plane;
                        pp[o] = match damp {
                            Some(d) => {
                                let e = d[i];
                                (2.0 * u - (1.0 - e) * pp[o] + vel[i] * lap) / (1.0 + e)
                            }
                            None => 2.0 * u - pp[o] + vel[i] * lap,
                        };
                    }
                }
            });
            let [sz, sy, sx] = self.src;
            let si = (sz * ny + sy) * nx + sx;
            let add = self.data[iv][si] * DX2 * self.wavelet[t.min(self.wavelet.len() - 1)];
            self.data[wp][si] += add;
            bind.swap(0, 1);
        }
    }

    fn cpu_himeno_sweep(&mut self) -> f32 {
        let [ni, nj, nk] = self.shape;
        let plane = nj * nk;
        let total = ni * plane;
        let ptr = |s: &Self, n: &str| s.data[s.phys(n)].as_ptr() as usize;
        let names = kernels::HIMENO_ARRAYS;
        let ptrs: Vec<usize> = names[..13].iter().map(|n| ptr(self, n)).collect();
        let iw = self.phys("wrk2");
        let omega = OMEGA;
        let gosa: f32 = self.data[iw]
            .par_chunks_mut(plane)
            .enumerate()
            .map(|(i, w2)| {
                if i < 1 || i >= ni - 1 {
                    return 0.0f32;
                }
                // SAFETY: the 13 arrays read here are distinct from wrk2, the one written.
                let g =
                    |a: usize| unsafe { std::slice::from_raw_parts(ptrs[a] as *const f32, total) };
                let (p, a0, a1, a2, a3) = (g(0), g(1), g(2), g(3), g(4));
                let (b0, b1, b2, c0, c1, c2) = (g(5), g(6), g(7), g(8), g(9), g(10));
                let (bnd, wrk1) = (g(11), g(12));
                let mut gosa = 0.0f32;
                for j in 1..nj - 1 {
                    for k in 1..nk - 1 {
                        let c = (i * nj + j) * nk + k;
                        let (di, dj) = (plane, nk);
                        let s0 = a0[c] * p[c + di]
                            + a1[c] * p[c + dj]
                            + a2[c] * p[c + 1]
                            + b0[c]
                                * (p[c + di + dj] - p[c + di - dj] - p[c - di + dj]
                                    + p[c - di - dj])
                            + b1[c]
                                * (p[c + dj + 1] - p[c - dj + 1] - p[c + dj - 1] + p[c - dj - 1])
                            + b2[c]
                                * (p[c + di + 1] - p[c - di + 1] - p[c + di - 1] + p[c - di - 1])
                            + c0[c] * p[c - di]
                            + c1[c] * p[c - dj]
                            + c2[c] * p[c - 1]
                            + wrk1[c];
                        let ss = (s0 * a3[c] - p[c]) * bnd[c];
                        gosa += ss * ss;
                        w2[c - i * plane] = p[c] + omega * ss;
                    }
                }
                gosa
            })
            .sum();
        let w2p = self.data[iw].as_ptr() as usize;
        let ip = self.phys("p");
        self.data[ip]
            .par_chunks_mut(plane)
            .enumerate()
            .for_each(|(i, pp)| {
                if i < 1 || i >= ni - 1 {
                    return;
                }
                // SAFETY: wrk2 is another array than p.
                let w2 = unsafe { std::slice::from_raw_parts(w2p as *const f32, total) };
                for j in 1..nj - 1 {
                    let o = j * nk;
                    pp[o + 1..o + nk - 1]
                        .copy_from_slice(&w2[i * plane + o + 1..i * plane + o + nk - 1]);
                }
            });
        gosa
    }
}

pub fn check_serial(args: &Args) {
    use ndarray::Array3;
    let steps = args.steps.unwrap_or(6);
    let mut all_ok = true;
    for m in [Model::Acoustic, Model::Propagate, Model::Himeno] {
        let shape = match m {
            Model::Acoustic | Model::Propagate => [48, 40, 44],
            Model::Himeno => [40, 40, 72],
        };
        let mut w = Workload::new(m, shape, "generated", steps);
        let arr = |w: &Workload, n: &str| {
            Array3::from_shape_vec((shape[0], shape[1], shape[2]), w.data[w.phys(n)].clone())
                .unwrap()
        };
        let mut serial: Vec<Vec<f32>> = Vec::new();
        match m {
            Model::Acoustic => {
                let (mut prev, mut cur) = (arr(&w, "prev"), arr(&w, "cur"));
                let (vel, damp) = (arr(&w, "vel"), arr(&w, "damp"));
                pacc::models::acoustic::propagate_sponge::serial(
                    &mut prev, &mut cur, &vel, &damp, &w.wavelet, w.src[0], w.src[1], w.src[2],
                    DX2, steps,
                );
                // After `steps` swaps the names refer to the other buffer when steps is odd.
                if steps % 2 == 1 {
                    std::mem::swap(&mut prev, &mut cur);
                }
                serial.push(prev.into_raw_vec_and_offset().0);
                serial.push(cur.into_raw_vec_and_offset().0);
            }
            Model::Propagate => {
                let (mut prev, mut cur) = (arr(&w, "prev"), arr(&w, "cur"));
                let vel = arr(&w, "vel");
                pacc::models::acoustic::propagate::serial(
                    &mut prev, &mut cur, &vel, &w.wavelet, w.src[0], w.src[1], w.src[2], DX2, steps,
                );
                if steps % 2 == 1 {
                    std::mem::swap(&mut prev, &mut cur);
                }
                serial.push(prev.into_raw_vec_and_offset().0);
                serial.push(cur.into_raw_vec_and_offset().0);
            }
            Model::Himeno => {
                let a: Vec<Array3<f32>> =
                    kernels::HIMENO_ARRAYS.iter().map(|n| arr(&w, n)).collect();
                let mut p = a[0].clone();
                let mut wrk2 = a[13].clone();
                pacc::models::himeno::jacobi::serial(
                    &mut p, &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &a[7], &a[8], &a[9], &a[10],
                    &a[11], &a[12], &mut wrk2, OMEGA, steps,
                );
                serial.push(p.into_raw_vec_and_offset().0);
            }
        }
        w.cpu_steps(steps);
        let mine: Vec<&Vec<f32>> = match m {
            Model::Acoustic | Model::Propagate => {
                vec![&w.data[w.phys("prev")], &w.data[w.phys("cur")]]
            }
            Model::Himeno => vec![&w.data[w.phys("p")]],
        };
        let same = serial.iter().zip(&mine).all(|(a, b)| {
            a.iter()
                .zip(b.iter())
                .all(|(x, y)| x.to_bits() == y.to_bits())
        });
        all_ok &= same;
        println!(
            "{} {:?}, {steps} steps: hand-written CPU loops {} the serial function bit for bit",
            m.name(),
            shape,
            if same { "equal" } else { "DIFFER FROM" }
        );
    }
    if !all_ok {
        std::process::exit(1);
    }
}
