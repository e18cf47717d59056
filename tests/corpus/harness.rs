//! What every corpus program hands the comparison: a [`Case`] that runs the program once with
//! given options (or serially), returning the bits of every array it changes and its returned
//! values; and [`check`], which runs a case on every scheme, fused step count and backend asked
//! for and wants the serial bits back.

// Some helpers (1D fields, sums) serve only the programs waiting in `pending/`.
#![allow(dead_code)]

use ndarray::{Array, Array1, Array2, Array3, Dimension};
pub use pacc::runtime::Options;
use pacc::runtime::{BackendChoice, Error, Program, Report, Scheme};

/// Runs the annotated function `$f` with the arguments given: serially (`$o` is `None`) or
/// through `$f::run` with the options in `$o`. Gives the function's value and, for a run, its
/// report; a run's error returns from the enclosing function.
macro_rules! call {
    ($f:ident($($a:expr),* $(,)?), $o:expr) => {
        match $o {
            None => ($f::serial($($a),*), None),
            Some(o) => {
                let (r, rep) = $f::run($($a,)* o)?;
                (r, Some(rep))
            }
        }
    };
}

/// One value a program leaves: an array's bits, a value that must match bit for bit (a
/// minimum, a maximum, an element), or a sum (added plane by plane by a pipelined run, so
/// equal to rounding).
#[derive(Debug, Clone)]
pub enum Value {
    Bits(Vec<u64>),
    Sum(f64),
}

/// Everything a run leaves, named.
#[derive(Debug, Clone, Default)]
pub struct Outcome(pub Vec<(&'static str, Value)>);

impl Outcome {
    pub fn new() -> Outcome {
        Outcome::default()
    }

    /// An array's bits.
    pub fn array<T: Bits, D: Dimension>(mut self, name: &'static str, a: &Array<T, D>) -> Self {
        self.0
            .push((name, Value::Bits(a.iter().map(|v| v.bits()).collect())));
        self
    }

    /// A returned value compared bit for bit.
    pub fn exact<T: Bits>(mut self, name: &'static str, v: T) -> Self {
        self.0.push((name, Value::Bits(vec![v.bits()])));
        self
    }

    /// A returned sum.
    pub fn sum(mut self, name: &'static str, v: f64) -> Self {
        self.0.push((name, Value::Sum(v)));
        self
    }
}

/// What one run of a case gives: its values and, unless it ran serially, its report.
pub type Ran = Result<(Outcome, Option<Report>), Error>;

/// One corpus program: how to run it at the small size (`wide`: wider rows, for a device's
/// thread blocks) with options, or serially when they are `None`.
pub struct Case {
    pub name: &'static str,
    pub program: fn() -> &'static Program,
    pub go: fn(Option<&Options>, bool) -> Ran,
}

/// The time steps every corpus program runs: a multiple of every fused step count.
pub const STEPS: usize = 6;

/// An element type whose bits the comparison reads.
pub trait Bits: Copy {
    fn bits(self) -> u64;
}

impl Bits for f32 {
    fn bits(self) -> u64 {
        self.to_bits().into()
    }
}

impl Bits for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// Smooth, deterministic, non-constant initial fields in `k..k + 0.9`.
pub fn f1<T: From<f32>>(n: usize, k: f32) -> Array1<T> {
    Array1::from_shape_fn(n, |i| T::from(((i * 7) % 31) as f32 * 0.03 + k))
}

pub fn f2<T: From<f32>>(n: (usize, usize), k: f32) -> Array2<T> {
    Array2::from_shape_fn(n, |(y, x)| {
        T::from(((y * 13 + x * 7) % 31) as f32 * 0.03 + k)
    })
}

pub fn f3<T: From<f32>>(n: (usize, usize, usize), k: f32) -> Array3<T> {
    Array3::from_shape_fn(n, |(z, y, x)| {
        T::from(((z * 7 + y * 13 + x * 3) % 29) as f32 * 0.03 + k)
    })
}

/// Where a comparison runs: the CPU backend and the shuffled executor, or a CUDA device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Cpu,
    Cuda,
}

/// The options of one run: `scheme`, `s` steps per launch, and per target two chunkings (three
/// chunks in one block of every step; two chunks in blocks of one launch, which on the shuffled
/// executor run their operations in any order the plan allows).
fn settings(target: Target, scheme: Scheme, s: usize, seed: u64) -> Vec<Options> {
    let (first, second) = match target {
        Target::Cpu => (BackendChoice::Cpu, BackendChoice::Shuffled(seed)),
        Target::Cuda => (BackendChoice::Cuda, BackendChoice::Cuda),
    };
    [(first, 3, STEPS), (second, 2, s)]
        .into_iter()
        .map(|(b, chunks, k)| {
            let o = (Options::new().backend(b).chunks(chunks))
                .block_steps(k)
                .scheme(scheme);
            if s > 1 {
                o.fuse(s)
            } else {
                o
            }
        })
        .collect()
}

/// Runs `case` on every scheme with 1, 2 and 3 steps per launch on `target` and wants the
/// serial function's bits for every array and bit-returned value, and its sums within `SUM_TOLERANCE`
/// (relative). A step count the program has no fused kernel for must be refused as a `fuse`
/// setting, saying so, before the run. Returns how many runs compared.
pub fn check(case: &Case, target: Target) -> usize {
    let wide = target == Target::Cuda;
    let (want, _) = (case.go)(None, wide).unwrap_or_else(|e| panic!("{}: serial: {e}", case.name));
    let mut runs = 0;
    for (i, scheme) in Scheme::ALL.into_iter().enumerate() {
        for s in [1, 2, 3] {
            let fuses = s == 1 || (case.program)().fusion.get(s).is_ok();
            for o in settings(target, scheme, s, (7 * i + s) as u64) {
                let at = format!("{}: {scheme}, {s} steps a launch, {o:?}", case.name);
                match ((case.go)(Some(&o), wide), fuses) {
                    (Ok((got, report)), true) => {
                        compare(&got, &want, &at);
                        let report = report.expect("a run's report");
                        if s > 1 && target == Target::Cpu {
                            let note = format!("fused: {s} steps per launch");
                            assert!(
                                report.adjustments.iter().any(|a| a.contains(&note)),
                                "{at}: the fused form did not run: {:?}",
                                report.adjustments
                            );
                        }
                        runs += 1;
                    }
                    (
                        Err(
                            e @ Error::Setting {
                                setting: "fuse", ..
                            },
                        ),
                        false,
                    ) => {
                        // The program says why (the translator's refusal), and so does the run.
                        let why = (case.program)().fusion.get(s).unwrap_err().to_string();
                        assert!(!why.is_empty() && !e.to_string().is_empty(), "{at}");
                    }
                    (Ok(_), false) => panic!("{at}: ran with no fused kernel for {s} steps"),
                    (Err(e), _) => panic!("{at}: {e}"),
                }
            }
        }
    }
    assert!(runs > 0, "{}: nothing compared", case.name);
    let fused: Vec<usize> = [2, 3]
        .into_iter()
        .filter(|&s| (case.program)().fusion.get(s).is_ok())
        .collect();
    eprintln!(
        "{}: {runs} runs equal serial (fused forms: {fused:?})",
        case.name
    );
    runs
}

/// Relative difference allowed between a sum and the serial one: pacc adds plane by plane (and
/// on CUDA block by block), so an f32 sum of a few thousand terms moves in its 5th digit
/// (`himeno_like` on the H200: 1.1e-5).
const SUM_TOLERANCE: f64 = 1e-4;

/// Every value of `got` equals `want`'s: arrays and exact values bit for bit, sums within
/// [`SUM_TOLERANCE`].
fn compare(got: &Outcome, want: &Outcome, at: &str) {
    assert_eq!(got.0.len(), want.0.len(), "{at}");
    for ((name, g), (_, w)) in got.0.iter().zip(&want.0) {
        match (g, w) {
            (Value::Bits(g), Value::Bits(w)) => {
                let differ = g.iter().zip(w).filter(|(a, b)| a != b).count();
                assert_eq!(
                    differ,
                    0,
                    "{at}: {differ} of {} values of `{name}` differ",
                    w.len()
                );
            }
            (Value::Sum(g), Value::Sum(w)) => assert!(
                (g - w).abs() <= SUM_TOLERANCE * w.abs().max(1e-30),
                "{at}: `{name}` {g} against {w}"
            ),
            _ => panic!("{at}: `{name}` changed kind"),
        }
    }
}
