//! Printing a plan: what crosses the link per array and block, memory, operations per stream.

use super::{OpKind, Plan};
use crate::program::Program;
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
