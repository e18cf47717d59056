//! Launch geometry and launching of the program's kernels (docs/internals.md §3), shared by the
//! pipeline executor and the benchmarks' whole-domain runs.

use super::device::Module;
use super::driver::{self, Function, Stream};
use crate::error::Error;
use crate::invocation::ScalarValue;
pub(crate) use crate::march::MarchTuning;
use crate::options::KernelForm;
use crate::program::{
    fused_tile, FusedWork, KernelDecl, Launch, PLAIN_SUFFIX, REDUCTION_SLOTS, VECTOR_SUFFIX,
    VECTOR_WIDTH,
};
use crate::report::KernelStats;
use std::ffi::c_void;

/// Largest grid extent along y and z.
const MAX_GRID_YZ: usize = 65535;

/// A launch-argument arena: every argument is at most 8 bytes, stored in its own u64 slot
/// (little-endian, so a pointer to the slot points at the value's bytes).
pub(crate) struct Args {
    slots: Vec<u64>,
}

impl Args {
    pub fn new() -> Self {
        Args {
            slots: Vec::with_capacity(64),
        }
    }
    pub fn i64(&mut self, v: i64) {
        self.slots.push(v as u64);
    }
    pub fn ptr(&mut self, p: u64) {
        self.slots.push(p);
    }
    pub fn scalar(&mut self, s: &ScalarValue) {
        let v: u64 = match *s {
            ScalarValue::F32(x) => x.to_bits() as u64,
            ScalarValue::F64(x) => x.to_bits(),
            ScalarValue::I32(x) => x as u32 as u64,
            ScalarValue::I64(x) => x as u64,
            ScalarValue::U32(x) => x as u64,
            ScalarValue::U64(x) => x,
            ScalarValue::Usize(x) => x as u64,
            ScalarValue::Isize(x) => x as i64 as u64,
            ScalarValue::Bool(x) => x as u64,
        };
        self.slots.push(v);
    }
    /// Pointers to the slots, as the driver takes kernel parameters.
    pub fn params(&mut self) -> Vec<*mut c_void> {
        self.slots
            .iter_mut()
            .map(|s| s as *mut u64 as *mut c_void)
            .collect()
    }
}

/// How one kernel is launched in this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub func: Function,
    pub marching: bool,
    /// The vector form: each thread computes [`VECTOR_WIDTH`] points along x.
    pub vector: bool,
    /// A fused kernel: several steps per launch, the point statements' coordinates after the
    /// slices.
    pub fused: bool,
    pub bx: u32,
    pub by: u32,
    /// Thread blocks covering one plane (x, and y in 3D).
    pub gx: u32,
    pub gy: u32,
    /// Thread blocks the whole device holds at once (marching only).
    pub resident: usize,
    /// Planes a marching segment must load before its first (axis-0 read reach).
    pub reach: usize,
}

/// The function and geometry of `kd` for arrays of `shape` whose device rows are `pitch`
/// elements apart: the marching form unless the kernel has none or `form` asks for the plain
/// one; in 3D its vector form where the module has one, `tuning` does not ask for the scalar
/// forms and every row starts on a whole vector.
pub(crate) fn geometry(
    module: &Module,
    kd: &KernelDecl,
    shape: &[usize],
    pitch: usize,
    form: KernelForm,
    sms: usize,
    tuning: &MarchTuning,
) -> Result<Geometry, Error> {
    let ndim = shape.len();
    let last = *shape.last().unwrap_or(&1);
    let plane = |bx: u32, by: u32| {
        let gx = last.div_ceil(bx as usize) as u32;
        let gy = if ndim == 3 {
            shape[1].div_ceil(by as usize) as u32
        } else {
            1
        };
        (gx, gy)
    };
    let reach = kd
        .reads
        .iter()
        .map(|r| (r.hi[0] - r.lo[0]).max(0) as usize)
        .max()
        .unwrap_or(0);
    match (kd.launch, form) {
        (launch @ Launch::Fused { .. }, _) => {
            let f = FusedForm::of(module, kd, launch, ndim, pitch, tuning)?;
            let (func, [bx, by], [tx, ty], is_vector) = (f.func, f.block, f.tile, f.vector);
            let per_sm = driver::max_active_blocks_per_sm(func, bx * by).map_or(1, |n| n.max(1));
            let (gx, gy) = plane(tx, ty);
            Ok(Geometry {
                func,
                marching: true,
                vector: is_vector,
                fused: true,
                bx,
                by,
                gx,
                gy,
                resident: per_sm * sms.max(1),
                reach,
            })
        }
        (Launch::Marching { .. }, KernelForm::Marching)
            if ndim == 3 && tuning.vector() && pitch % VECTOR_WIDTH == 0 =>
        {
            let Some(func) = module.try_function(&format!("{}{VECTOR_SUFFIX}", kd.name)) else {
                return geometry(module, kd, shape, pitch, form, sms, &tuning.scalar());
            };
            let [bx, by] = tuning.vector_block();
            let per_sm = driver::max_active_blocks_per_sm(func, bx * by).map_or(1, |n| n.max(1));
            let (gx, gy) = plane(bx * VECTOR_WIDTH as u32, by);
            Ok(Geometry {
                func,
                marching: true,
                vector: true,
                fused: false,
                bx,
                by,
                gx,
                gy,
                resident: per_sm * sms.max(1),
                reach,
            })
        }
        (Launch::Marching { block }, KernelForm::Marching) => {
            let [bx, by] = tuning.block(block);
            // A 2D marching kernel indexes threads along x only.
            let by = if ndim == 3 { by } else { 1 };
            let func = module.function(&kd.name)?;
            let per_sm = driver::max_active_blocks_per_sm(func, bx * by).map_or(1, |n| n.max(1));
            // A 3D block covers `by` rows of threads, each computing `ry` rows.
            let rows = if ndim == 3 { tuning.rows() } else { 1 };
            let (gx, gy) = plane(bx, by * rows);
            Ok(Geometry {
                func,
                marching: true,
                vector: false,
                fused: false,
                bx,
                by,
                gx,
                gy,
                resident: per_sm * sms.max(1),
                reach,
            })
        }
        (launch, _) => {
            let name = match launch {
                Launch::Marching { .. } => format!("{}{PLAIN_SUFFIX}", kd.name),
                Launch::PerPoint | Launch::Fused { .. } => kd.name.clone(),
            };
            let func = module.function(&name)?;
            let (bx, by) = per_point_block(func, ndim, last);
            let (gx, gy) = plane(bx, by);
            Ok(Geometry {
                func,
                marching: false,
                vector: false,
                fused: false,
                bx,
                by,
                gx,
                gy,
                resident: 0,
                reach,
            })
        }
    }
}

/// The form a fused kernel launches: its vector form where the module has one, the tuning asks
/// for vector forms and every row starts on a whole vector, else the one-column form.
struct FusedForm {
    func: Function,
    block: [u32; 2],
    /// The columns and rows a block writes: the block's minus its window beyond them (rounded
    /// out to whole vectors along x in the vector form).
    tile: [u32; 2],
    vector: bool,
}

impl FusedForm {
    fn of(
        module: &Module,
        kd: &KernelDecl,
        launch: Launch,
        ndim: usize,
        pitch: usize,
        tuning: &MarchTuning,
    ) -> Result<FusedForm, Error> {
        let Launch::Fused {
            block,
            halo,
            vector,
        } = launch
        else {
            return Err(Error::Internal(format!(
                "{} is not a fused kernel",
                kd.name
            )));
        };
        let vector_form = (vector.filter(|_| ndim == 3 && tuning.vector()))
            .filter(|_| pitch % VECTOR_WIDTH == 0)
            .and_then(|b| {
                let name = format!("{}{VECTOR_SUFFIX}", kd.name);
                Some((module.try_function(&name)?, b))
            });
        let (func, [bx, by], is_vector) = match vector_form {
            Some((func, b)) => (func, b, true),
            None => (module.function(&kd.name)?, block, false),
        };
        let by = if ndim == 3 { by } else { 1 };
        Ok(FusedForm {
            func,
            block: [bx, by],
            tile: fused_tile([bx, by], halo, ndim, is_vector),
            vector: is_vector,
        })
    }
}

/// The occupancy guard: when nobody set `minb` (blocks per SM the compiler must fit) and a
/// marching kernel of `module` compiled with `tuning` fits only one block per SM, its registers
/// leave half or more of the SM's threads unused, and the memory-bound kernel cannot keep enough
/// loads in flight. Returns the tuning with room for two blocks (the compiler caps registers)
/// and a note for the report; `None` when nothing needs to change. On the H100 this took
/// `propagate_sponge` 1400³ from 74.4 to 91.9 Gpt/s (staged form, 69 -> 64 registers) and
/// Himeno's L1 kernel from 41.6 to 42.8 (`benches/results/2026-11-25-h100-staged-kernels/`).
pub(crate) fn occupancy_guard(
    module: &Module,
    program: &crate::program::Program,
    tuning: &MarchTuning,
) -> Result<Option<(MarchTuning, String)>, Error> {
    // Several rows per thread take registers by design (four rows of `propagate`: 128, one
    // block per SM, the fastest shape at 512³); capping them would spill.
    if tuning.minb.is_some() || tuning.rows() > 1 {
        return Ok(None);
    }
    for kd in &program.kernels {
        let Launch::Marching { block } = kd.launch else {
            continue;
        };
        // A vector form asks for two blocks per SM itself (`PACC_VMINB`).
        let vec_name = format!("{}{VECTOR_SUFFIX}", kd.name);
        if tuning.vector() && module.try_function(&vec_name).is_some() {
            continue;
        }
        let [bx, by] = tuning.block(block);
        let threads = bx * by;
        if 2 * threads > 2048 {
            continue;
        }
        let func = module.function(&kd.name)?;
        if driver::max_active_blocks_per_sm(func, threads) == Some(1) {
            let (regs, _) = driver::function_resources(func);
            let t = MarchTuning {
                minb: Some(2),
                ..*tuning
            };
            let why = format!(
                "kernel shape: minb=2, since `{}` fitted one block of {threads} threads per SM \
                 ({regs} registers per thread); set minb (PACC_MARCH=minb=1) to keep it",
                kd.name
            );
            return Ok(Some((t, why)));
        }
    }
    Ok(None)
}

/// The per-point block: the occupancy API's suggestion capped at 256 threads; 3D: 32 x (n/32),
/// 2D: n x 1 (halved while wider than twice the row).
fn per_point_block(f: Function, ndim: usize, last: usize) -> (u32, u32) {
    let bs = match driver::suggested_block_size(f) {
        Some(bs) if bs >= 32 => bs.min(256) / 32 * 32,
        _ => 256,
    };
    if ndim == 3 {
        (32, (bs / 32).max(1))
    } else {
        let mut bx = bs;
        while bx > 32 && (bx / 2) as usize >= last {
            bx /= 2;
        }
        (bx, 1)
    }
}

impl Geometry {
    /// The form and resources of kernel `kd` as compiled: a marching kernel declaring more
    /// shared memory than its reduction buffers ([`REDUCTION_SLOTS`] elements each) is the
    /// staged form.
    ///
    /// `launches`: the planes of each of the kernel's launches in the run, over which a fused
    /// kernel's work per point-step is averaged (its segments differ with the planes).
    pub fn stats(
        &self,
        kd: &KernelDecl,
        program: &crate::program::Program,
        launches: &[usize],
    ) -> KernelStats {
        let (registers, shared_bytes) = driver::function_resources(self.func);
        let reduction_bytes: usize = kd
            .reductions
            .iter()
            .map(|&r| REDUCTION_SLOTS * program.reductions[r].elem.size())
            .sum();
        let form = match (self.marching, shared_bytes as usize > reduction_bytes) {
            (false, _) => "plain",
            _ if self.fused && self.vector => "fused-vector",
            _ if self.fused => "fused",
            _ if self.vector => "vector",
            (true, true) => "staged",
            (true, false) => "l1",
        };
        let per_sm = driver::max_active_blocks_per_sm(self.func, self.bx * self.by).unwrap_or(0);
        KernelStats {
            name: kd.name.clone(),
            form: form.into(),
            block: [self.bx, self.by],
            registers,
            shared_bytes,
            blocks_per_sm: per_sm as u32,
            fused: self.fused_work(program, launches),
        }
    }

    /// A fused kernel's work per point-step ([`crate::program::FusedDecl::work`]) over
    /// launches of `launches` planes, each weighted by its planes; `None` for other kernels, or
    /// where the program does not say where its invocations compute.
    fn fused_work(
        &self,
        program: &crate::program::Program,
        launches: &[usize],
    ) -> Option<FusedWork> {
        let decl = &program.fusion.active.as_ref().filter(|_| self.fused)?.decl;
        let total = launches.iter().sum::<usize>() as f64;
        let mut sum = FusedWork {
            evaluations: 0.0,
            lanes: 0.0,
            planes: 0.0,
        };
        for &n in launches.iter().filter(|&&n| n > 0) {
            let w = decl.work(
                [self.bx, self.by],
                self.vector,
                program.ndim,
                self.segment(n),
            )?;
            let share = n as f64 / total;
            sum.evaluations += w.evaluations * share;
            sum.lanes += w.lanes * share;
            sum.planes += w.planes * share;
        }
        (total > 0.0).then_some(sum)
    }

    /// Planes per segment for a launch over `planes` planes (marching), 1 (per point).
    ///
    /// A marching block pays `reach` extra plane loads per segment, so long segments are
    /// cheaper; but the grid should fill whole waves of resident blocks. Pick the segment count
    /// (up to 64) that maximises wave efficiency discounted by the refill cost.
    pub fn segment(&self, planes: usize) -> usize {
        if !self.marching || planes == 0 {
            return 1;
        }
        let per_slice = (self.gx as usize * self.gy as usize).max(1);
        let mut best = (f64::MIN, planes);
        for nseg in 1..=64usize.min(planes) {
            let seg = planes.div_ceil(nseg);
            let nseg = planes.div_ceil(seg);
            let blocks = per_slice * nseg;
            let waves = blocks.div_ceil(self.resident.max(1));
            let fill = blocks as f64 / (waves * self.resident.max(1)) as f64;
            let refill = 1.0 + self.reach as f64 / (4.0 * seg as f64);
            let score = fill / refill;
            if score > best.0 + 1e-9 {
                best = (score, seg);
            }
        }
        best.1
    }

    /// Grid slices (segments or planes) of a launch over `planes` planes.
    pub fn slices(&self, planes: usize) -> usize {
        planes.div_ceil(self.segment(planes))
    }

    /// Thread blocks of a launch over `planes` planes: the number of reduction partials.
    pub fn blocks(&self, planes: usize) -> usize {
        self.gx as usize * self.gy as usize * self.slices(planes)
    }
}

/// Everything a kernel launch passes besides the planes (docs/internals.md §3).
pub(crate) struct KernelArgs<'a> {
    pub owned: (usize, usize),
    pub base: usize,
    pub n: [i64; 3],
    /// `pacc_rp`, the row pitch in elements, for programs whose kernels take it
    /// ([`Program::row_pitch`](crate::program::Program::row_pitch)).
    pub rp: Option<i64>,
    pub t: i64,
    pub arrays: &'a [u64],
    pub scalars: &'a [ScalarValue],
    pub slices: &'a [u64],
    /// The point statements' coordinates a fused kernel applies (after the slices; empty for
    /// other kernels).
    pub points: &'a [i64],
    /// Start of the reduction partials of this op (one run of `blocks(planes)` doubles per
    /// reduction); 0 when the kernel has none.
    pub partials: u64,
    pub reductions: usize,
}

/// Launches `g` over planes `z0..z1` on `stream` (several launches for per-point kernels
/// spanning more planes than a grid dimension allows).
///
/// # Safety
/// Every pointer in `a` must be a device allocation of the size the program's ABI implies for
/// `n` and the plan's buffers, and stay alive until the stream has run the launch.
pub(crate) unsafe fn launch(
    g: &Geometry,
    name: &str,
    z0: usize,
    z1: usize,
    a: &KernelArgs<'_>,
    stream: Stream,
    ndim: usize,
) -> Result<(), Error> {
    let planes = z1 - z0;
    let total = g.blocks(planes);
    let (seg, step) = if g.marching {
        let seg = g.segment(planes);
        (seg, planes)
    } else {
        (1, MAX_GRID_YZ)
    };
    let mut z = z0;
    while z < z1 {
        let end = (z + step).min(z1);
        let prefix = g.gx as usize * g.gy as usize * (z - z0).div_ceil(seg);
        let mut args = Args::new();
        for v in [
            z as i64,
            end as i64,
            a.owned.0 as i64,
            a.owned.1 as i64,
            a.base as i64,
            a.n[0],
            a.n[1],
            a.n[2],
        ]
        .into_iter()
        .chain(a.rp)
        .chain([a.t])
        {
            args.i64(v);
        }
        if g.marching {
            args.i64(seg as i64);
        }
        for &p in a.arrays {
            args.ptr(p);
        }
        for s in a.scalars {
            args.scalar(s);
        }
        for &p in a.slices {
            args.ptr(p);
        }
        for &c in a.points {
            args.i64(c);
        }
        for j in 0..a.reductions {
            args.ptr(a.partials + (8 * (j * total + prefix)) as u64);
        }
        let slices = (end - z).div_ceil(seg) as u32;
        let grid = if ndim == 3 {
            (g.gx, g.gy, slices)
        } else {
            (g.gx, slices, 1)
        };
        let mut params = args.params();
        driver::launch(
            g.func,
            grid,
            (g.bx, g.by, 1),
            stream,
            &mut params,
            format_args!("launching `{name}`"),
        )?;
        z = end;
    }
    Ok(())
}

/// Launches point statement `func` (one thread) at point `at` (missing axes 0) on `stream`:
/// `(base, n0, n1, n2, [rp,] t, i0, i1, i2, arrays, scalars, slices)`, docs/internals.md §3; the
/// owned planes and reductions of `a` do not apply.
///
/// # Safety
/// As [`launch`].
pub(crate) unsafe fn launch_point(
    func: Function,
    name: &str,
    at: &[i64],
    a: &KernelArgs<'_>,
    stream: Stream,
) -> Result<(), Error> {
    let mut args = Args::new();
    for v in [a.base as i64, a.n[0], a.n[1], a.n[2]]
        .into_iter()
        .chain(a.rp)
        .chain([a.t])
    {
        args.i64(v);
    }
    for d in 0..3 {
        args.i64(at.get(d).copied().unwrap_or(0));
    }
    for &p in a.arrays {
        args.ptr(p);
    }
    for s in a.scalars {
        args.scalar(s);
    }
    for &p in a.slices {
        args.ptr(p);
    }
    let mut params = args.params();
    driver::launch(
        func,
        (1, 1, 1),
        (1, 1, 1),
        stream,
        &mut params,
        format_args!("launching `{name}`"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn march_tuning_parses_and_refuses_clearly() {
        let t = MarchTuning::parse("bx=64, by=4,unroll=2").unwrap();
        assert_eq!((t.bx, t.by, t.unroll), (Some(64), Some(4), Some(2)));
        assert_eq!(MarchTuning::parse("").unwrap(), MarchTuning::default());
        for (bad, why) in [
            ("bx", "lacks `=`"),
            ("bx=x", "not a number"),
            ("tiles=1", "unknown key"),
            ("unroll=9", "out of range"),
            ("bx=0", "out of range"),
            ("bx=64,by=32", "more than 1024 threads"),
        ] {
            match MarchTuning::parse(bad) {
                Err(Error::Option(m)) => {
                    assert!(m.contains(why), "{bad}: {m}");
                    assert!(m.contains("expected comma-separated"), "{bad}: {m}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    /// A fused kernel's work in the report: per launch at the segment its planes get, weighted
    /// by the planes; nothing for other kernels.
    #[test]
    fn fused_stats_average_the_work_over_the_launches() {
        let decl = crate::program::fixtures::radius4(2);
        let mut program = crate::program::Program {
            ndim: 3,
            ..Default::default()
        };
        program.fusion.active = Some(crate::program::Active {
            decl: decl.clone(),
            twins: vec![],
            nests: vec![],
            step: vec![],
        });
        // `propagate` fused 2 at 512^3 in core on an H200: 22 x 13 blocks of 8x48 a plane, one
        // per SM on 132, the group reaching 8 planes; one launch over the nest's 504 planes.
        let g = Geometry {
            func: std::ptr::null_mut(),
            marching: true,
            vector: true,
            fused: true,
            bx: 8,
            by: 48,
            gx: 22,
            gy: 13,
            resident: 132,
            reach: 8,
        };
        let seg = g.segment(504);
        assert_eq!(seg, 84, "6 segments fill 13 whole waves");
        let w = g.fused_work(&program, &[504]).unwrap();
        assert_eq!(Some(w), decl.work([8, 48], true, 3, seg));
        // (32x48 x 92 + 24x40 x 84) / (2 x 24x40 x 84): 1.30 in the plane, 1.38 with the
        // first step's 8 more planes a segment.
        assert!((w.evaluations - 1.3762).abs() < 1e-4, "{w:?}");
        // Two launches: each at its own segment, weighted by its planes.
        let two = g.fused_work(&program, &[504, 8]).unwrap();
        let short = decl.work([8, 48], true, 3, g.segment(8)).unwrap();
        let mix = (w.evaluations * 504.0 + short.evaluations * 8.0) / 512.0;
        assert!((two.evaluations - mix).abs() < 1e-12 && two.evaluations > w.evaluations);
        let single = Geometry { fused: false, ..g };
        assert!(single.fused_work(&program, &[504]).is_none());
        assert!(g.fused_work(&program, &[]).is_none());
    }

    #[test]
    fn marching_source_gets_the_overrides_first() {
        let t = MarchTuning::parse("by=4").unwrap();
        let s = t.source("#ifndef PACC_BY\n#define PACC_BY 8\n#endif\n");
        // The scalar and the vector forms' macros alike.
        assert!(
            s.starts_with("#define PACC_BY 4\n#define PACC_VBY 4\n#ifndef PACC_BY"),
            "{s}"
        );
        assert_eq!(MarchTuning::default().source("x"), "x");
    }
}
