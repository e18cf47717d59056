//! Printing a plan: what crosses the link per array and block, memory, operations per stream.

use super::{OpKind, Plan};
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
        let _ = writeln!(
            s,
            "plan for `{}`: shape {:?}, {} steps, scheme {}, {} chunks{}, {} block steps ({} blocks)",
            program.name,
            self.shape,
            self.steps,
            self.scheme,
            self.chunks,
            if self.chunks != self.requested_chunks {
                format!(" (asked {})", self.requested_chunks)
            } else {
                String::new()
            },
            self.block_steps,
            self.blocks.len()
        );
        for a in &self.adjustments {
            let _ = writeln!(s, "  adjusted: {a}");
        }
        let _ = writeln!(
            s,
            "device memory: {} buffer sets x {} = {} ({} planes per buffer, {} elements per plane)",
            self.buffer_sets,
            mib(self.set_bytes()),
            mib(self.device_bytes()),
            self.buffer_planes,
            self.plane_len
        );
        let _ = writeln!(
            s,
            "planes crossing the link per block (to device / from device):"
        );
        let _ = write!(s, "  {:<12}", "array");
        for b in 0..self.blocks.len() {
            let _ = write!(s, " {:>13}", format!("block {b}"));
        }
        let _ = writeln!(s);
        for (a, decl) in program.arrays.iter().enumerate() {
            let _ = write!(s, "  {:<12}", decl.name);
            for b in 0..self.blocks.len() {
                let cell = format!("{} / {}", self.planes_htod(b, a), self.planes_dtoh(b, a));
                let _ = write!(s, " {cell:>13}");
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
        let t = self.totals(program);
        let _ = writeln!(
            s,
            "kernel points: {} computed, {} in the serial loop (redundancy {:.3})",
            t.kernel_points, t.serial_points, t.redundancy
        );
        self.compression_summary(program, &mut s);
        let _ = writeln!(s, "operations per stream:");
        for stream in 0..self.streams {
            let mut counts = [0usize; 9];
            let mut events = 0;
            for op in self.ops.iter().filter(|o| o.stream == stream) {
                counts[kind_index(&op.kind)] += 1;
                events += op.deps.len();
            }
            let names = [
                "HtoD", "DtoH", "StageIn", "StageOut", "DtoD", "kernel", "point", "encode",
                "decode",
            ];
            let parts: Vec<String> = names
                .iter()
                .zip(counts)
                .filter(|(_, c)| *c > 0)
                .map(|(n, c)| format!("{c} {n}"))
                .collect();
            let _ = writeln!(
                s,
                "  stream {stream} ({}): {}; waits on {events} events",
                if stream % 2 == 0 {
                    "transfers in"
                } else {
                    "kernels + out"
                },
                if parts.is_empty() {
                    "idle".to_string()
                } else {
                    parts.join(", ")
                }
            );
        }
        s
    }
}

fn kind_index(k: &OpKind) -> usize {
    match k {
        OpKind::HtoD { .. } => 0,
        OpKind::DtoH { .. } => 1,
        OpKind::StageIn { .. } => 2,
        OpKind::StageOut { .. } => 3,
        OpKind::DtoD { .. } => 4,
        OpKind::Kernel { .. } => 5,
        OpKind::Point { .. } => 6,
        OpKind::Encode { .. } => 7,
        OpKind::Decode { .. } => 8,
    }
}

impl Plan {
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
             encode/decode on the kernel/transfer streams",
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
    let kd = &program.kernels[k];
    kd.ranges[1..]
        .iter()
        .zip(&shape[1..])
        .map(|(r, &n)| (r.hi.eval(n) - r.lo.eval(n)).max(0) as u64)
        .product()
}

impl Plan {
    pub fn totals(&self, program: &Program) -> Totals {
        let kernel_points: u64 = self
            .ops
            .iter()
            .map(|op| match &op.kind {
                OpKind::Kernel { kernel, planes, .. } => {
                    planes.len() as u64 * points_per_plane(program, &self.shape, *kernel)
                }
                _ => 0,
            })
            .sum();
        let n0 = self.shape[0];
        let per_step: u64 = program
            .step
            .iter()
            .filter_map(|st| match *st {
                Stage::Kernel(k) => {
                    let r = &program.kernels[k].ranges[0];
                    let planes = (r.hi.eval(n0) - r.lo.eval(n0)).max(0) as u64;
                    Some(planes * points_per_plane(program, &self.shape, k))
                }
                _ => None,
            })
            .sum();
        let serial_points = per_step * self.steps as u64;
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
            let mut moved: Vec<String> = Vec::new();
            for op in ops.clone() {
                match &op.kind {
                    OpKind::DtoD { array, planes, .. } => {
                        moved.push(format!("{} {planes:?} from chunk {}", name(*array), i - 1))
                    }
                    OpKind::HtoD { array, planes, .. } => {
                        moved.push(format!("{} {planes:?} from host", name(*array)))
                    }
                    _ => {}
                }
            }
            let _ = writeln!(s, "    receives: {}", list(&moved));
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
