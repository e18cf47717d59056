//! Printing a plan: what crosses the link per array and block, memory, operations per stream.

use super::{HostSide, OpKind, Plan};
use crate::program::{Program, Stage};
use serde::{Deserialize, Serialize};
use std::fmt::Write;

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

impl Plan {
    /// A human-readable summary, as `pacc plan` prints it.
    pub fn summary(&self, program: &Program) -> String {
        let mut s = String::new();
        // A fused program's plan counts launches of `per` steps (`crate::fuse`).
        let per = program.fusion.active.as_ref().map(|a| a.decl.steps);
        self.header_summary(program, per, &mut s);
        self.ring_summary(program, &mut s);
        self.link_summary(program, &mut s);
        self.launch_summary(program, per, &mut s);
        self.compression_summary(program, &mut s);
        self.stream_summary(&mut s);
        s
    }

    /// The plan's shape, scheme, chunks and blocks, its adjustments and device memory.
    fn header_summary(&self, program: &Program, per: Option<usize>, s: &mut String) {
        let (steps, block_steps) = match per {
            None => (
                format!("{} steps", self.steps),
                format!("{} block steps", self.block_steps),
            ),
            Some(p) => (
                format!("{} steps ({} launches of {p})", self.steps * p, self.steps),
                format!(
                    "{} block steps ({} launches)",
                    self.block_steps * p,
                    self.block_steps
                ),
            ),
        };
        let _ = writeln!(
            s,
            "plan for `{}`: shape {:?}, {steps}, scheme {}, {} chunks{}, {block_steps} ({} blocks)",
            program.name,
            self.shape,
            self.scheme,
            self.chunks,
            if self.chunks != self.requested_chunks {
                format!(" (asked {})", self.requested_chunks)
            } else {
                String::new()
            },
            self.blocks.len()
        );
        for a in &self.adjustments {
            let _ = writeln!(s, "  adjusted: {a}");
        }
        let ring = match &self.ring {
            Some(r) => format!(
                " + read-only ring {} ({} planes)",
                mib(self.ring_bytes()),
                r.planes
            ),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "device memory: {} buffer sets x {}{ring} = {} ({} planes per buffer, {} elements per \
             plane)",
            self.buffer_sets,
            mib(self.set_bytes()),
            mib(self.device_bytes()),
            self.buffer_planes,
            self.plane_len
        );
    }

    /// Planes crossing the link per array and block, and the totals. Runs of equal blocks share
    /// a column in long plans ([`block_runs`]).
    fn link_summary(&self, program: &Program, s: &mut String) {
        let _ = writeln!(
            s,
            "planes crossing the link per block (to device / from device):"
        );
        let per_block = self.link_planes();
        let runs = block_runs(&per_block);
        let cells: Vec<Vec<String>> = (runs.iter())
            .map(|r| {
                (per_block[r.start].iter())
                    .map(|[h, d]| format!("{h} / {d}"))
                    .collect()
            })
            .collect();
        let _ = write!(s, "  {:<12}", "array");
        for r in &runs {
            let _ = write!(s, " {:>13}", blocks_label(r));
        }
        let _ = writeln!(s);
        // A fused run's output buffers live on the device only (`crate::fuse`): no rows.
        let host_arrays =
            program.arrays.len() - (program.fusion.active.as_ref()).map_or(0, |a| a.twins.len());
        for (a, decl) in program.arrays.iter().enumerate().take(host_arrays) {
            let _ = write!(s, "  {:<12}", decl.name);
            for column in &cells {
                let _ = write!(s, " {:>13}", column.get(a).map_or("", String::as_str));
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(
            s,
            "total: {} to device, {} from device, {} device-to-device",
            mib(self.bytes_htod()),
            mib(self.bytes_dtoh()),
            mib(self.bytes_dtod())
        );
    }

    /// Per block, per array of the program: the planes moved host -> device and device -> host
    /// ([`Plan::planes_htod`], [`Plan::planes_dtoh`] of every block, in one pass).
    pub fn link_planes(&self) -> Vec<Vec<[usize; 2]>> {
        let mut out = vec![vec![[0, 0]; self.elem_sizes.len()]; self.blocks.len()];
        for op in &self.ops {
            let (array, planes, way) = match &op.kind {
                OpKind::HtoD { array, planes, .. } => (array, planes, 0),
                OpKind::DtoH { array, planes, .. } => (array, planes, 1),
                _ => continue,
            };
            if let Some(cell) = out.get_mut(op.block).and_then(|b| b.get_mut(*array)) {
                cell[way] += planes.len();
            }
        }
        out
    }

    /// Points computed against the serial loop's, and kernel launches per block.
    fn launch_summary(&self, program: &Program, per: Option<usize>, s: &mut String) {
        let t = self.totals(program);
        let _ = writeln!(
            s,
            "kernel points: {} computed, {} in the serial loop (redundancy {:.3})",
            t.kernel_points, t.serial_points, t.redundancy
        );
        let launches = self
            .ops
            .iter()
            .filter(|o| matches!(o.kind, OpKind::Kernel { .. }))
            .count();
        let launches = launches.div_ceil(self.blocks.len().max(1));
        let _ = match per {
            None => writeln!(
                s,
                "kernel launches: {launches} per block on average ({} nest(s) x {} chunks x up to \
                 {} steps; one time step per launch)",
                program.kernels.len(),
                self.chunks,
                self.block_steps
            ),
            Some(p) => writeln!(
                s,
                "kernel launches: {launches} per block on average (1 fused kernel x {} chunks x up \
                 to {} launches; {p} time steps per launch)",
                self.chunks, self.block_steps
            ),
        };
    }

    /// Operations and event waits per stream.
    fn stream_summary(&self, s: &mut String) {
        let _ = writeln!(s, "operations per stream:");
        for stream in 0..self.streams {
            let mut counts = [0usize; OpKind::LABELS.len()];
            let mut events = 0;
            for op in self.ops.iter().filter(|o| o.stream == stream) {
                counts[op.kind.index()] += 1;
                events += op.deps.len();
            }
            let parts: Vec<String> = OpKind::LABELS
                .iter()
                .zip(counts)
                .filter(|(_, c)| *c > 0)
                .map(|(n, c)| format!("{c} {n}"))
                .collect();
            let _ = writeln!(
                s,
                "  stream {stream} (set {}, {}): {}; waits on {events} events",
                self.role_of(stream).1,
                self.role_of(stream).0.label(),
                if parts.is_empty() {
                    "idle".to_string()
                } else {
                    parts.join(", ")
                }
            );
        }
    }
}

impl OpKind {
    /// The name of each kind of operation, in the order plans list them: the one home of the
    /// labels that plan summaries, executor errors and traces print.
    pub const LABELS: [&'static str; 10] = [
        "HtoD", "DtoH", "StageIn", "StageOut", "DtoD", "Kernel", "Point", "Encode", "Decode",
        "Exchange",
    ];

    /// The position of this kind in [`OpKind::LABELS`].
    pub fn index(&self) -> usize {
        match self {
            OpKind::HtoD { .. } => 0,
            OpKind::DtoH { .. } => 1,
            OpKind::StageIn { .. } => 2,
            OpKind::StageOut { .. } => 3,
            OpKind::DtoD { .. } => 4,
            OpKind::Kernel { .. } => 5,
            OpKind::Point { .. } => 6,
            OpKind::Encode { .. } => 7,
            OpKind::Decode { .. } => 8,
            OpKind::Exchange { .. } => 9,
        }
    }

    /// The kind's name: `HtoD`, `DtoH`, `StageIn`, `StageOut`, `DtoD`, `Kernel`, `Point`,
    /// `Encode`, `Decode` or `Exchange`.
    pub fn label(&self) -> &'static str {
        Self::LABELS[self.index()]
    }

    /// The stage of a run's report this operation's time counts in (the field of
    /// `crate::report::StageTimes`, and a trace's category).
    pub fn stage(&self) -> &'static str {
        match self {
            OpKind::HtoD { .. } => "htod",
            OpKind::DtoH { .. } => "dtoh",
            OpKind::DtoD { .. } => "dtod",
            OpKind::StageIn { .. } | OpKind::StageOut { .. } => "host_copy",
            OpKind::Encode { .. } => "encode",
            OpKind::Decode { .. } => "decode",
            OpKind::Exchange { .. } => "exchange",
            OpKind::Kernel { .. } | OpKind::Point { .. } => "kernel",
        }
    }

    /// The operation in one line with the program's names, as traces show it: the label, the
    /// array, the buffer set(s), the planes, and where the host end is (kernels and point
    /// statements go by their own name, with the step).
    pub fn describe(&self, program: &Program) -> String {
        let an = |a: &usize| {
            program
                .arrays
                .get(*a)
                .map(|d| d.name.as_str())
                .unwrap_or("?")
        };
        let host = |side: &HostSide| match side {
            HostSide::Staging => " (staging)",
            HostSide::Compressed => " (compressed)",
            HostSide::User => "",
        };
        let l = self.label();
        match self {
            OpKind::HtoD {
                array,
                set,
                planes,
                from: side,
                ..
            }
            | OpKind::DtoH {
                array,
                set,
                planes,
                to: side,
                ..
            } => format!("{l} {} s{set} {planes:?}{}", an(array), host(side)),
            OpKind::StageIn {
                array, set, planes, ..
            }
            | OpKind::StageOut {
                array, set, planes, ..
            }
            | OpKind::Encode {
                array, set, planes, ..
            }
            | OpKind::Decode {
                array, set, planes, ..
            } => format!("{l} {} s{set} {planes:?}", an(array)),
            OpKind::DtoD {
                array,
                from_set,
                to_set,
                planes,
                ..
            } => format!("{l} {} s{from_set}->s{to_set} {planes:?}", an(array)),
            OpKind::Kernel {
                kernel,
                set,
                step,
                planes,
                ..
            } => {
                let name = program.kernels.get(*kernel).map(|k| k.name.as_str());
                format!("{} s{set} t{step} {planes:?}", name.unwrap_or("?"))
            }
            OpKind::Point {
                point,
                set,
                step,
                plane,
                ..
            } => {
                let name = program.points.get(*point).map(|p| p.name.as_str());
                format!("{} s{set} t{step} @{plane}", name.unwrap_or("?"))
            }
            OpKind::Exchange {
                set,
                step,
                arrays,
                links,
                ..
            } => {
                let names: Vec<&str> = arrays.iter().map(an).collect();
                let peers: Vec<String> = (links.iter())
                    .map(|k| format!("r{} send {:?} recv {:?}", k.peer, k.send, k.recv))
                    .collect();
                format!(
                    "{l} {} s{set} t{step} {}",
                    names.join(","),
                    peers.join("; ")
                )
            }
        }
    }
}

impl std::fmt::Display for OpKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Plans of up to this many blocks list every block; longer ones (a run of 10^5 steps is 10^5
/// blocks at one step per block) list runs of equal blocks once ([`block_runs`]).
pub const SPELLED_OUT_BLOCKS: usize = 8;

/// The blocks in runs whose `figures` (one per block) are equal, as ranges of block indices:
/// one range per block in plans of at most [`SPELLED_OUT_BLOCKS`] blocks.
pub fn block_runs<T: PartialEq>(figures: &[T]) -> Vec<std::ops::Range<usize>> {
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for (b, f) in figures.iter().enumerate() {
        match runs.last_mut() {
            Some(r) if figures.len() > SPELLED_OUT_BLOCKS && figures[r.start] == *f => {
                r.end = b + 1
            }
            _ => runs.push(b..b + 1),
        }
    }
    runs
}

/// `block 3` or `blocks 1-9998` (inclusive).
pub fn blocks_label(run: &std::ops::Range<usize>) -> String {
    match run.len() {
        1 => format!("block {}", run.start),
        _ => format!("blocks {}-{}", run.start, run.end - 1),
    }
}

/// Redundancy above which [`Plan::warnings`] calls a configuration wasteful.
pub const WASTEFUL_REDUNDANCY: f64 = 2.0;

impl Plan {
    /// Settings the plan honours but that waste work or transfers, one sentence each with what
    /// to change: a redundancy above [`WASTEFUL_REDUNDANCY`] (the kernels compute more than
    /// twice the serial loop's points), and chunks that hold more halo planes than planes of
    /// their own. Empty when nothing looks wasteful.
    pub fn warnings(&self, program: &Program) -> Vec<String> {
        let mut w = Vec::new();
        let t = self.totals(program);
        if t.redundancy > WASTEFUL_REDUNDANCY {
            let once = super::Scheme::names_where(|s| !s.tiling().recomputes_halos());
            w.push(format!(
                "redundancy {:.1}: the kernels compute {:.1} times the points of the serial loop, \
                 because every chunk recomputes a halo that grows with the block steps ({}); use \
                 fewer chunks or fewer block steps, or the {once} scheme, which computes every \
                 point once",
                t.redundancy, t.redundancy, self.block_steps
            ));
        }
        let Some(block) = self.blocks.first() else {
            return w;
        };
        let (owned, halo) = block.chunks.iter().fold((0, 0), |(o, h), c| {
            (o + c.owned.len(), h + c.window.len() - c.owned.len())
        });
        // Overlapped tiling recomputes a halo on each side of a chunk; once one side's halo is
        // wider than the chunk's own planes, further chunks mostly add recomputation. (The
        // wavefront's buffers hold the staircase instead, computed once.)
        let n = block.chunks.len();
        let side = halo as f64 / (2 * n) as f64;
        let mean_owned = owned as f64 / n as f64;
        if self.scheme.tiling().recomputes_halos() && n > 1 && side > mean_owned {
            let sensible = ((self.shape[0] as f64 / side.max(1.0)) as usize).max(1);
            w.push(format!(
                "more chunks than make sense: {n} chunks own {mean_owned:.1} planes each on \
                 average, but each recomputes a halo of about {side:.1} planes on either side for \
                 its {} block steps; use at most about {sensible} chunks, or fewer block steps",
                self.block_steps
            ));
        }
        w
    }
}

impl Plan {
    /// The ring's arrays, its length and memory, and how much it moves on the device.
    fn ring_summary(&self, program: &Program, s: &mut String) {
        let Some(r) = &self.ring else { return };
        let names: Vec<&str> = (program.arrays.iter().enumerate())
            .filter(|&(a, _)| self.in_ring(a))
            .map(|(_, d)| d.name.as_str())
            .collect();
        let moves = self.ops.iter().filter_map(|op| match &op.kind {
            OpKind::DtoD {
                array,
                to_set,
                planes,
                ..
            } if *to_set == r.set => Some(self.raw_bytes(*array, planes)),
            _ => None,
        });
        let (copies, bytes) = moves.fold((0, 0), |(n, b), x| (n + 1, b + x));
        let _ = writeln!(
            s,
            "read-only ring: {} in one device buffer each of {} planes ({}), read by every \
             chunk; {copies} device-to-device copies of {} move their planes back to slot 0",
            names.join(", "),
            r.planes,
            mib(self.ring_bytes()),
            mib(bytes)
        );
    }

    /// The compressed arrays, their rates and host copies, and the link bytes against raw.
    fn compression_summary(&self, program: &Program, s: &mut String) {
        let names: Vec<String> = program
            .arrays
            .iter()
            .enumerate()
            .filter_map(|(a, d)| {
                let c = self.compressed(a)?;
                let kind = if c.written { "state" } else { "input" };
                Some(format!("{} at {} bits/value ({kind})", d.name, c.rate))
            })
            .collect();
        if names.is_empty() {
            return;
        }
        let _ = writeln!(s, "compressed: {}", names.join(", "));
        if !self.compresses() {
            let _ = writeln!(s, "  (a single block: nothing is compressed)");
            return;
        }
        let host: u64 = (0..program.arrays.len())
            .map(|a| self.host_compressed_bytes(a))
            .sum();
        let (raw, link) = (
            self.bytes_htod_raw() + self.bytes_dtoh_raw(),
            self.bytes_htod() + self.bytes_dtoh(),
        );
        let _ = writeln!(
            s,
            "  link bytes {} instead of {} raw (ratio {:.2}); host compressed copies {}; \
             encode on the write-back streams, decode on the load streams",
            mib(link),
            mib(raw),
            raw as f64 / link.max(1) as f64,
            mib(host)
        );
    }
}

/// The plan's totals: points computed against the serial loop's, and bytes moved (what
/// `pacc plan --json` reports as `summary`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Points the plan's kernel operations compute (halo recomputation included).
    pub kernel_points: u64,
    /// Points the serial loop computes: steps x the points of every nest of one step.
    pub serial_points: u64,
    /// `kernel_points / serial_points` (1 when nothing is computed twice).
    pub redundancy: f64,
    pub bytes_htod: u64,
    pub bytes_dtoh: u64,
    pub bytes_dtod: u64,
    pub device_bytes: u64,
    pub operations: usize,
}

/// Points of kernel `k`'s nest in one plane (every axis but the outermost).
pub fn points_per_plane(program: &Program, shape: &[usize], k: usize) -> u64 {
    nest_points_per_plane(&program.kernels[k], shape)
}

/// Points of one plane a nest computes (its inner-axis ranges over `shape`).
fn nest_points_per_plane(kd: &crate::program::KernelDecl, shape: &[usize]) -> u64 {
    kd.ranges[1..]
        .iter()
        .zip(&shape[1..])
        .map(|(r, &n)| (r.hi.eval(n) - r.lo.eval(n)).max(0) as u64)
        .product()
}

impl Plan {
    /// Points computed and those the serial loop computes. A fused program's plan counts
    /// launches of several steps: each launch counts the original nests' points of the planes
    /// it covers once per step it advances (an upper bound: a launch's later steps cover fewer
    /// planes), and the serial loop counts every step.
    pub fn totals(&self, program: &Program) -> Totals {
        // The step the kernels advance per launch: the original nests of a fused program.
        let (nests, step, per) = match &program.fusion.active {
            Some(a) => (&a.nests, &a.step, a.decl.steps as u64),
            None => (&program.kernels, &program.step, 1),
        };
        let shape = &self.shape;
        let plane_points = |k: usize| match &program.fusion.active {
            Some(_) => (step.iter())
                .filter_map(|st| match *st {
                    Stage::Kernel(j) => Some(nest_points_per_plane(&nests[j], shape)),
                    _ => None,
                })
                .sum::<u64>(),
            None => points_per_plane(program, shape, k),
        };
        let kernel_points: u64 = self
            .ops
            .iter()
            .map(|op| match &op.kind {
                OpKind::Kernel { kernel, planes, .. } => {
                    planes.len() as u64 * plane_points(*kernel) * per
                }
                _ => 0,
            })
            .sum();
        let n0 = self.shape[0];
        let per_step: u64 = step
            .iter()
            .filter_map(|st| match *st {
                Stage::Kernel(k) => {
                    let r = &nests[k].ranges[0];
                    let planes = (r.hi.eval(n0) - r.lo.eval(n0)).max(0) as u64;
                    Some(planes * nest_points_per_plane(&nests[k], shape))
                }
                _ => None,
            })
            .sum();
        let serial_points = per_step * self.steps as u64 * per;
        Totals {
            kernel_points,
            serial_points,
            redundancy: kernel_points as f64 / serial_points.max(1) as f64,
            bytes_htod: self.bytes_htod(),
            bytes_dtoh: self.bytes_dtoh(),
            bytes_dtod: self.bytes_dtod(),
            device_bytes: self.device_bytes(),
            operations: self.ops.len(),
        }
    }

    /// Per chunk of the first block: the planes it receives from the previous chunk (the
    /// staircase), loads and writes back, and the planes each invocation computes (`pacc plan`
    /// prints this for the wavefront, whose windows are skewed per invocation).
    pub fn windows(&self, program: &Program) -> String {
        let mut s = String::new();
        let Some(block) = self.blocks.first() else {
            return s;
        };
        let _ = writeln!(
            s,
            "windows of block 0 ({} steps; later blocks alike, shifted in time):",
            block.steps
        );
        let name = |a: usize| program.arrays[a].name.as_str();
        for (i, c) in block.chunks.iter().enumerate() {
            let _ = writeln!(
                s,
                "  chunk {i} (set {}): buffer planes {:?}, writes back {:?}",
                c.set, c.window, c.owned
            );
            let ops = self.ops.iter().filter(|o| o.block == 0 && o.chunk == i);
            let ring = self.ring.as_ref().map(|r| r.set);
            let mut moved: Vec<String> = Vec::new();
            let mut ring_base = None;
            for op in ops.clone() {
                match &op.kind {
                    OpKind::DtoD {
                        array,
                        planes,
                        to_set,
                        from_base,
                        ..
                    } if Some(*to_set) == ring => moved.push(format!(
                        "{} {planes:?} moved down the ring (from base {from_base})",
                        name(*array)
                    )),
                    OpKind::DtoD { array, planes, .. } => {
                        moved.push(format!("{} {planes:?} from chunk {}", name(*array), i - 1))
                    }
                    OpKind::HtoD {
                        array, planes, set, ..
                    } => {
                        let into = if Some(*set) == ring {
                            " into the ring"
                        } else {
                            ""
                        };
                        moved.push(format!("{} {planes:?} from host{into}", name(*array)))
                    }
                    OpKind::Kernel { ring_base: rb, .. } | OpKind::Point { ring_base: rb, .. } => {
                        ring_base = ring_base.or(*rb)
                    }
                    _ => {}
                }
            }
            let _ = writeln!(s, "    receives: {}", list(&moved));
            if let Some(rb) = ring_base {
                let _ = writeln!(
                    s,
                    "    reads the ring at base {rb}: planes {:?} in slots {:?}",
                    c.window,
                    c.window.start - rb..c.window.end - rb
                );
            }
            for op in ops {
                match &op.kind {
                    OpKind::Kernel {
                        kernel,
                        step,
                        planes,
                        ..
                    } => {
                        let k = &program.kernels[*kernel].name;
                        let _ = writeln!(s, "    step {step} {k}: planes {planes:?}");
                    }
                    OpKind::Point {
                        point, step, plane, ..
                    } => {
                        let p = &program.points[*point].name;
                        let _ = writeln!(s, "    step {step} {p}: plane {plane}");
                    }
                    _ => {}
                }
            }
        }
        s
    }
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "nothing".into()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_label_and_stage() {
        let planes = 0..4;
        let kinds = [
            OpKind::HtoD {
                array: 0,
                set: 0,
                base: 0,
                planes: planes.clone(),
                from: HostSide::Staging,
            },
            OpKind::DtoH {
                array: 0,
                set: 1,
                base: 0,
                planes: planes.clone(),
                to: HostSide::User,
            },
            OpKind::StageIn {
                array: 0,
                set: 0,
                base: 0,
                planes: planes.clone(),
            },
            OpKind::StageOut {
                array: 0,
                set: 0,
                base: 0,
                planes: planes.clone(),
            },
            OpKind::DtoD {
                array: 0,
                from_set: 0,
                from_base: 0,
                to_set: 1,
                to_base: 0,
                planes: planes.clone(),
            },
            OpKind::Kernel {
                kernel: 0,
                set: 0,
                base: 0,
                step: 2,
                planes: planes.clone(),
                owned: planes.clone(),
                args: vec![0],
                ring_base: None,
            },
            OpKind::Point {
                point: 0,
                set: 0,
                base: 0,
                step: 1,
                plane: 3,
                args: vec![0],
                ring_base: None,
            },
            OpKind::Encode {
                array: 0,
                set: 0,
                base: 0,
                planes: planes.clone(),
            },
            OpKind::Decode {
                array: 0,
                set: 0,
                base: 0,
                planes: planes.clone(),
            },
            OpKind::Exchange {
                set: 0,
                base: 0,
                step: 1,
                arrays: vec![0],
                links: vec![crate::plan::HaloLink {
                    peer: 1,
                    send: planes.clone(),
                    recv: planes,
                }],
            },
        ];
        for (i, k) in kinds.iter().enumerate() {
            assert_eq!(k.index(), i);
            assert_eq!(k.to_string(), OpKind::LABELS[i]);
        }
        let stages: Vec<&str> = kinds.iter().map(OpKind::stage).collect();
        assert_eq!(
            stages,
            [
                "htod",
                "dtoh",
                "host_copy",
                "host_copy",
                "dtod",
                "kernel",
                "kernel",
                "encode",
                "decode",
                "exchange"
            ]
        );
        let mut t = crate::report::StageTimes::default();
        for k in &kinds {
            t.add_op(k, 1.0);
        }
        assert_eq!(
            (
                t.htod,
                t.dtoh,
                t.host_copy,
                t.dtod,
                t.kernel,
                t.encode,
                t.decode,
                t.exchange
            ),
            (1.0, 1.0, 2.0, 1.0, 2.0, 1.0, 1.0, 1.0)
        );
    }
}
