//! The programs the benchmark runs (the acoustic model and Himeno), their sizes, and the host
//! arrays of one run: allocation, initial values, the call as a generated wrapper makes it.

use crate::kernels;
use pacc_runtime::exec::CpuKernels;
use pacc_runtime::host::host_slice;
use pacc_runtime::invocation::{HostArray, Invocation, ScalarValue};
use pacc_runtime::program::{Elem, Program, Role, ScalarType};
use rayon::prelude::*;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Model {
    /// `propagate_sponge`: 4 arrays (with the absorbing layer).
    Acoustic,
    Himeno,
    /// `propagate`: 3 arrays, no absorbing layer.
    Propagate,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::Acoustic => "acoustic",
            Model::Himeno => "himeno",
            Model::Propagate => "propagate",
        }
    }
    pub fn preset(self, p: &str) -> Option<[usize; 3]> {
        Some(match (self, p) {
            (Model::Acoustic | Model::Propagate, "small") => [64, 64, 64],
            (Model::Acoustic | Model::Propagate, "incore") => [820, 820, 820],
            (Model::Acoustic, "ooc") => [1800, 1800, 1800],
            // 91.75 GB in 3 arrays, as the sponge's 1800^3 is 93 GB in 4.
            (Model::Propagate, "ooc") => [1970, 1970, 1970],
            (Model::Himeno, "small") => [64, 64, 128],
            (Model::Himeno, "incore") => [512, 512, 1024],
            (Model::Himeno, "ooc") => [1200, 1200, 1200],
            _ => return None,
        })
    }
}

/// Host arrays, by physical index (program order).
pub struct Workload {
    pub model: Model,
    pub program: Program,
    pub kernels: &'static str,
    pub shape: [usize; 3],
    pub data: Vec<Vec<f32>>,
    pub wavelet: Vec<f32>,
    pub src: [usize; 3],
}

pub const ACOUSTIC_C: [f32; 5] = [
    -205.0 / 72.0,
    8.0 / 5.0,
    -1.0 / 5.0,
    8.0 / 315.0,
    -1.0 / 560.0,
];
pub const DX2: f32 = 100.0;
pub const OMEGA: f32 = 0.8;

/// Fills `v` in parallel by planes (first touch spread over all cores), allocating it only if
/// it does not hold `shape` yet: re-initialising keeps the same memory, so page-locking done
/// once stays valid.
fn par_fill(v: &mut Vec<f32>, shape: [usize; 3], f: impl Fn(usize, usize, usize) -> f32 + Sync) {
    let n = shape.iter().product::<usize>();
    if v.len() != n {
        *v = Vec::with_capacity(n);
        // SAFETY: every element is written below before being read.
        unsafe { v.set_len(n) };
    }
    let plane = shape[1] * shape[2];
    v.par_chunks_mut(plane).enumerate().for_each(|(z, p)| {
        for y in 0..shape[1] {
            for x in 0..shape[2] {
                p[y * shape[2] + x] = f(z, y, x);
            }
        }
    });
}

/// The translator's program for the model (`#[pacc::pipeline]` on `src/models/*.rs`).
pub fn generated_program(model: Model) -> Program {
    match model {
        Model::Acoustic => pacc::models::acoustic::propagate_sponge::program().clone(),
        Model::Himeno => pacc::models::himeno::jacobi::program().clone(),
        Model::Propagate => pacc::models::acoustic::propagate::program().clone(),
    }
}

impl Workload {
    pub fn new(model: Model, shape: [usize; 3], kernels: &str, steps: usize) -> Workload {
        let (program, kernels) = model.program(kernels);
        let wavelet: Vec<f32> = (0..steps.max(1) + 1)
            .map(|n| {
                let r = std::f64::consts::PI * 0.05 * (n as f64 - 20.0);
                ((1.0 - 2.0 * r * r) * (-r * r).exp()) as f32
            })
            .collect();
        let mut w = Workload {
            model,
            program,
            kernels,
            shape,
            data: Vec::new(),
            wavelet,
            src: [shape[0] / 2, shape[1] / 2, shape[2] / 2],
        };
        w.data = (0..w.program.arrays.len()).map(|_| Vec::new()).collect();
        w.init();
        w
    }

    pub fn phys(&self, name: &str) -> usize {
        self.program
            .array_index(name)
            .unwrap_or_else(|| panic!("program has no array `{name}`"))
    }

    /// (Re)initialises every array in parallel.
    pub fn init(&mut self) {
        let s = self.shape;
        let names: Vec<String> = self.program.arrays.iter().map(|a| a.name.clone()).collect();
        for (i, name) in names.iter().enumerate() {
            let v = &mut self.data[i];
            match (self.model, name.as_str()) {
                (Model::Acoustic | Model::Propagate, "prev" | "cur") => {
                    let off = if name == "cur" { 1 } else { 0 };
                    par_fill(v, s, move |z, y, x| {
                        ((z * 7 + y * 3 + x * 11 + off) % 17) as f32 * 1e-3
                    })
                }
                (Model::Acoustic | Model::Propagate, "vel") => par_fill(v, s, move |z, _, _| {
                    0.05 + 0.1 * (z * 4 / s[0]) as f32 / 4.0
                }),
                (Model::Acoustic, "damp") => {
                    let width = 16usize;
                    par_fill(v, s, move |z, y, x| {
                        let d =
                            |i: usize, n: usize| i.saturating_sub(4).min((n - 5).saturating_sub(i));
                        let d = d(z, s[0]).min(d(y, s[1])).min(d(x, s[2]));
                        if d >= width {
                            0.0
                        } else {
                            let q = (width - d) as f32 / width as f32;
                            0.2 * q * q
                        }
                    })
                }
                (Model::Himeno, "p") => {
                    let denom = ((s[0] - 1) * (s[0] - 1)) as f32;
                    par_fill(v, s, move |i, _, _| (i * i) as f32 / denom)
                }
                (Model::Himeno, n) => {
                    let c = match n {
                        "a0" | "a1" | "a2" | "c0" | "c1" | "c2" | "bnd" => 1.0,
                        "a3" => (1.0f64 / 6.0) as f32,
                        _ => 0.0,
                    };
                    par_fill(v, s, move |_, _, _| c)
                }
                (m, n) => panic!("{m:?} has no array {n}"),
            }
        }
    }

    pub fn array_bytes(&self) -> u64 {
        self.data.iter().map(|v| v.len() as u64 * 4).sum()
    }

    /// The arrays, borrowed from the workload.
    pub fn host_arrays(&mut self) -> Vec<HostArray<'_>> {
        host_arrays(&self.program, &mut self.data, self.shape)
    }

    fn scalar(&self, name: &str, ty: ScalarType) -> ScalarValue {
        let v: f64 = match name {
            "c0" => ACOUSTIC_C[0] as f64,
            "c1" => ACOUSTIC_C[1] as f64,
            "c2" => ACOUSTIC_C[2] as f64,
            "c3" => ACOUSTIC_C[3] as f64,
            "c4" => ACOUSTIC_C[4] as f64,
            "dx2" => DX2 as f64,
            "sz" => self.src[0] as f64,
            "sy" => self.src[1] as f64,
            "sx" => self.src[2] as f64,
            "omega" => OMEGA as f64,
            "nz" | "ni" => self.shape[0] as f64,
            "ny" | "nj" => self.shape[1] as f64,
            "nx" | "nk" => self.shape[2] as f64,
            other => panic!("the benchmark does not know the scalar `{other}`"),
        };
        match ty {
            ScalarType::F32 => ScalarValue::F32(v as f32),
            ScalarType::F64 => ScalarValue::F64(v),
            ScalarType::I32 => ScalarValue::I32(v as i32),
            ScalarType::I64 => ScalarValue::I64(v as i64),
            ScalarType::U32 => ScalarValue::U32(v as u32),
            ScalarType::U64 => ScalarValue::U64(v as u64),
            ScalarType::Usize => ScalarValue::Usize(v as usize),
            ScalarType::Isize => ScalarValue::Isize(v as isize),
            ScalarType::Bool => ScalarValue::Bool(v != 0.0),
        }
    }

    /// The call as a generated wrapper would make it (CPU closures are placeholders: the CPU
    /// configuration is hand-written: cpu.rs).
    pub fn invocation(&mut self, steps: usize) -> Invocation<'_> {
        let scalars = (self.program.scalars.iter())
            .map(|s| self.scalar(&s.name, s.ty))
            .collect();
        let arrays = host_arrays(&self.program, &mut self.data, self.shape);
        let p = &self.program;
        let slices = p.slices.iter().map(|_| host_slice(&self.wavelet)).collect();
        let points = p
            .points
            .iter()
            .map(|_| self.src.iter().map(|&i| i as i64).collect())
            .collect();
        Invocation {
            arrays,
            scalars,
            slices,
            points,
            t0: 0,
            steps,
            reduction_init: vec![0.0; p.reductions.len()],
            reset_values: vec![0.0; p.resets.len()],
            // SAFETY: the closures never run (the benchmark runs on the device; they panic if
            // called); the program is the translator's for the model, or the hand-written
            // kernels the benchmark compares it with, declared with the accesses they make.
            cpu: unsafe { CpuKernels::new(inert_kernels(p), inert_points(p)) },
        }
    }

    /// Sum and sum of squares over the arrays the caller gets back (InOut), in f64.
    pub fn checksum(&self) -> f64 {
        self.program
            .arrays
            .iter()
            .zip(&self.data)
            .filter(|(d, _)| d.role == Role::InOut)
            .map(|(_, v)| {
                v.par_chunks(1 << 20)
                    .map(|c| {
                        c.iter()
                            .map(|&x| x as f64 + (x as f64) * (x as f64))
                            .sum::<f64>()
                    })
                    .sum::<f64>()
            })
            .sum()
    }

    /// Bytes of the arrays whose results the caller needs (InOut).
    pub fn output_bytes(&self) -> u64 {
        self.program
            .arrays
            .iter()
            .zip(&self.data)
            .filter(|(d, _)| d.role == Role::InOut)
            .map(|(_, v)| v.len() as u64 * 4)
            .sum()
    }
}

impl Model {
    /// `--program`: acoustic, himeno or all.
    pub fn parse_list(p: &str) -> Result<Vec<Model>, String> {
        match p {
            "acoustic" => Ok(vec![Model::Acoustic]),
            "himeno" => Ok(vec![Model::Himeno]),
            "propagate" => Ok(vec![Model::Propagate]),
            "all" => Ok(vec![Model::Acoustic, Model::Propagate, Model::Himeno]),
            p => Err(format!(
                "unknown program `{p}`: acoustic (propagate_sponge), propagate, himeno or all"
            )),
        }
    }

    /// A preset (`small`, `incore`, `ooc`) or `NZxNYxNX`.
    pub fn shape(self, size: &str) -> Result<[usize; 3], String> {
        if let Some(s) = self.preset(size) {
            return Ok(s);
        }
        let v: Vec<usize> = size.split('x').filter_map(|x| x.parse().ok()).collect();
        match v[..] {
            [z, y, x] => Ok([z, y, x]),
            _ => Err(format!(
                "unknown size `{size}`: small, incore, ooc or NZxNYxNX"
            )),
        }
    }

    /// Arrays of the program (to size a run before allocating it).
    pub fn arrays(self) -> u64 {
        match self {
            Model::Acoustic => 4,
            Model::Himeno => 14,
            Model::Propagate => 3,
        }
    }

    /// The hand-written kernels (`--kernels hand`), where there are some (`propagate` has none).
    pub fn hand_program(self) -> Option<Program> {
        match self {
            Model::Acoustic => Some(kernels::acoustic()),
            Model::Himeno => Some(kernels::himeno()),
            Model::Propagate => None,
        }
    }

    /// The program `--kernels` asks for, with its label: the hand-written kernels for `hand`
    /// where there are some, else the translator's.
    pub fn program(self, kernels: &str) -> (Program, &'static str) {
        match (kernels == "hand").then(|| self.hand_program()).flatten() {
            Some(p) => (p, "hand-written"),
            None => (generated_program(self), "generated"),
        }
    }

    pub fn default_steps(self, size: &str, quick: bool) -> usize {
        let s = match (self, size) {
            (Model::Acoustic | Model::Propagate, _) => 16,
            (Model::Himeno, _) => 32,
        };
        if quick {
            s / 2
        } else {
            s
        }
    }

    /// The grid search's chunk counts and block steps.
    pub fn grid_defaults(self, size: &str, quick: bool) -> (Vec<usize>, Vec<usize>) {
        match (size, quick) {
            ("ooc", false) => match self {
                Model::Acoustic | Model::Propagate => (vec![4, 8, 16], vec![4, 8, 16]),
                Model::Himeno => (vec![8, 16, 32], vec![8, 16, 32]),
            },
            ("ooc", true) => match self {
                Model::Acoustic | Model::Propagate => (vec![8, 16], vec![4, 8]),
                Model::Himeno => (vec![8, 16], vec![8, 16]),
            },
            (_, false) => (vec![2, 4, 8, 16], vec![2, 4, 8, 16]),
            (_, true) => (vec![4, 8], vec![4, 8]),
        }
    }
}

/// `data` as the arrays of `program`, borrowed.
fn inert_kernels(p: &Program) -> Vec<Box<pacc_runtime::exec::CpuKernelFn<'static>>> {
    (p.kernels.iter())
        .map(|_| {
            Box::new(
                |_: &pacc_runtime::exec::KernelFrame<'_>, _: usize, _: &mut [f64]| {
                    unreachable!("the benchmark never runs pacc's CPU backend")
                },
            ) as Box<pacc_runtime::exec::CpuKernelFn<'static>>
        })
        .collect()
}

fn inert_points(p: &Program) -> Vec<Box<pacc_runtime::exec::CpuPointFn<'static>>> {
    (p.points.iter())
        .map(|_| {
            Box::new(|_: &pacc_runtime::exec::KernelFrame<'_>| {
                unreachable!("the benchmark never runs pacc's CPU backend")
            }) as Box<pacc_runtime::exec::CpuPointFn<'static>>
        })
        .collect()
}

fn host_arrays<'a>(
    program: &Program,
    data: &'a mut [Vec<f32>],
    shape: [usize; 3],
) -> Vec<HostArray<'a>> {
    (program.arrays.iter())
        .zip(data.iter_mut())
        .map(|(d, v)| {
            assert_eq!(v.len(), shape.iter().product::<usize>());
            let writable = d.role != Role::Input;
            // SAFETY: `v` holds the whole shape and stays borrowed for `'a`.
            unsafe {
                HostArray::from_raw_parts(v.as_mut_ptr() as *mut u8, Elem::F32, &shape, writable)
            }
            .expect("three axes")
        })
        .collect()
}
