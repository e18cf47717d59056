//! What a run did: backend, geometry, bytes moved, time per stage.

use crate::plan::{OpKind, Plan, Scheme};
use crate::program::Program;
use serde::Serialize;

/// How one kernel of a CUDA run was compiled and launched.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct KernelStats {
    /// The kernel's name in the generated CUDA source.
    pub name: String,
    /// `staged` (in-plane reads from shared memory), `l1` (through the cache) or `plain` (one
    /// thread per point).
    pub form: String,
    /// Threads per block, `[x, y]`.
    pub block: [u32; 2],
    /// Registers per thread, as compiled.
    pub registers: u32,
    /// Static shared memory per block (tiles and reduction buffers).
    pub shared_bytes: u32,
    /// Blocks one multiprocessor holds at once.
    pub blocks_per_sm: u32,
    /// A fused kernel's work per point-step it delivers, over the run's launches (`None` for
    /// single-step kernels).
    pub fused: Option<crate::program::FusedWork>,
}

impl std::fmt::Display for KernelStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} {}x{}, {} registers, {} B shared, {} blocks/SM",
            self.name,
            self.form,
            self.block[0],
            self.block[1],
            self.registers,
            self.shared_bytes,
            self.blocks_per_sm
        )?;
        if let Some(w) = &self.fused {
            write!(
                f,
                "; per point-step {:.2} evaluations ({:.2}x along z), {:.2} thread lanes",
                w.evaluations, w.planes, w.lanes
            )?;
        }
        Ok(())
    }
}

/// Seconds spent per kind of operation (summed over streams; they overlap in time).
#[derive(Clone, Debug, Default, Serialize)]
pub struct StageTimes {
    /// Host-to-device copies.
    pub htod: f64,
    /// Device-to-host copies.
    pub dtoh: f64,
    /// Copies on the device.
    pub dtod: f64,
    /// Kernels (on the CPU backend: the kernels' loops).
    pub kernel: f64,
    /// Host-side copies through staging buffers (staged-copy scheme).
    pub host_copy: f64,
    /// Page-locking the user's arrays (CUDA, direct mapping).
    pub register: f64,
    /// Planning, validation and setup.
    pub setup: f64,
    /// Compressing buffer planes (compression).
    pub encode: f64,
    /// Decompressing planes into buffers (compression).
    pub decode: f64,
    /// Halo exchanges with the neighbouring ranks that a plan carries (distributed runs
    /// resident on their devices): the exchanges' own time, hidden or not.
    pub exchange: f64,
    /// From the first computing operation's start to the last one's end (CUDA): the time
    /// steps themselves, without the set-up, the first upload and the last write-back.
    pub stepping: f64,
}

impl StageTimes {
    /// Adds `secs` to the stage an operation of `kind` counts in ([`OpKind::stage`]).
    pub fn add_op(&mut self, kind: &OpKind, secs: f64) {
        let slot = match kind.stage() {
            "htod" => &mut self.htod,
            "dtoh" => &mut self.dtoh,
            "dtod" => &mut self.dtod,
            "host_copy" => &mut self.host_copy,
            "encode" => &mut self.encode,
            "decode" => &mut self.decode,
            "exchange" => &mut self.exchange,
            _ => &mut self.kernel,
        };
        *slot += secs;
    }

    /// Adds another run's times, stage by stage.
    pub fn absorb(&mut self, other: &StageTimes) {
        for (x, y) in [
            (&mut self.htod, other.htod),
            (&mut self.dtoh, other.dtoh),
            (&mut self.dtod, other.dtod),
            (&mut self.kernel, other.kernel),
            (&mut self.host_copy, other.host_copy),
            (&mut self.register, other.register),
            (&mut self.setup, other.setup),
            (&mut self.encode, other.encode),
            (&mut self.decode, other.decode),
            (&mut self.exchange, other.exchange),
            (&mut self.stepping, other.stepping),
        ] {
            *x += y;
        }
    }
}

/// One operation on a stream's timeline (for traces).
#[derive(Clone, Debug, Serialize)]
pub struct TraceEvent {
    /// The operation, as the plan describes it.
    pub name: String,
    /// The stream it ran on.
    pub stream: usize,
    /// Its start, in microseconds after the run's first event.
    pub start_us: f64,
    /// Its duration, in microseconds.
    pub dur_us: f64,
}

/// What a call ran and what it cost: the backend, the plan as it ran (with every adjustment to
/// what was asked), bytes moved and time per stage. `f::run` returns it; `Display` prints the
/// summary the examples show, [`Report::to_json`] the whole of it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// The pipelined function's name.
    pub program: String,
    /// "cpu", "shuffled", "cuda" or "serial".
    pub backend: String,
    /// The device that ran the call, when the backend names one (the GPU model on CUDA).
    pub device: Option<String>,
    /// The scheme that ran.
    pub scheme: Scheme,
    /// The arrays' shape, outermost axis first.
    pub shape: Vec<usize>,
    /// Time steps run.
    pub steps: usize,
    /// Chunks of the outermost axis, as run.
    pub chunks: usize,
    /// Chunks asked for (by the options, the clause or the tuner).
    pub requested_chunks: usize,
    /// Time steps per block, as run.
    pub block_steps: usize,
    /// Bytes copied from the host to the device (compressed size where compressed).
    pub bytes_htod: u64,
    /// Bytes copied from the device to the host.
    pub bytes_dtoh: u64,
    /// Bytes copied on the device (shared planes, staircases).
    pub bytes_dtod: u64,
    /// What `bytes_htod` would be without compression (equal to it when nothing is compressed).
    pub bytes_htod_raw: u64,
    /// What `bytes_dtoh` would be without compression.
    pub bytes_dtoh_raw: u64,
    /// Peak device memory the plan's buffers took, in bytes.
    pub device_bytes: u64,
    /// Wall-clock time of the call, in seconds.
    pub wall_seconds: f64,
    /// Time per stage (transfers, kernels, set-up), in seconds.
    pub stages: StageTimes,
    /// Changes the runtime made to what was asked (chunk count, scheme fallback...).
    pub adjustments: Vec<String>,
    /// The CUDA backend's operations on their streams, for traces (empty on the other
    /// backends).
    pub timeline: Vec<TraceEvent>,
    /// The CUDA kernels' form and resources (empty on the other backends).
    pub kernels: Vec<KernelStats>,
    /// Where `stages.setup` went, in seconds per part (the tuner, compiling, allocating...), in
    /// the order they ran; parts of later segments add to those of the same name.
    pub setup_parts: Vec<(String, f64)>,
}

impl Report {
    /// Adds the report of a later part of the same run (a checkpoint segment, a distributed
    /// block): bytes, times and trace events add up, device memory is the peak, and each note is
    /// kept once.
    pub fn absorb(&mut self, later: Report) {
        if self.device.is_none() {
            self.device = later.device;
        }
        self.bytes_htod += later.bytes_htod;
        self.bytes_dtoh += later.bytes_dtoh;
        self.bytes_dtod += later.bytes_dtod;
        self.bytes_htod_raw += later.bytes_htod_raw;
        self.bytes_dtoh_raw += later.bytes_dtoh_raw;
        self.device_bytes = self.device_bytes.max(later.device_bytes);
        self.wall_seconds += later.wall_seconds;
        self.stages.absorb(&later.stages);
        for note in later.adjustments {
            if !self.adjustments.contains(&note) {
                self.adjustments.push(note);
            }
        }
        self.timeline.extend(later.timeline);
        for (name, secs) in later.setup_parts {
            self.add_setup(&name, secs);
        }
    }

    /// Adds `secs` to the set-up part `name` (a new part goes last).
    pub fn add_setup(&mut self, name: &str, secs: f64) {
        match self.setup_parts.iter_mut().find(|(n, _)| n == name) {
            Some((_, s)) => *s += secs,
            None => self.setup_parts.push((name.to_string(), secs)),
        }
    }

    /// Puts `earlier` (parts that ran before those already reported) first.
    pub fn prepend_setup(&mut self, earlier: Vec<(String, f64)>) {
        let later = std::mem::replace(&mut self.setup_parts, earlier);
        for (name, secs) in later {
            self.add_setup(&name, secs);
        }
    }

    /// A report that names the program and where it ran, every figure zero: what the other
    /// constructors start from.
    pub fn named(program: &Program, backend: &str, device: Option<String>) -> Report {
        Report {
            program: program.name.clone(),
            backend: backend.into(),
            device,
            ..Report::default()
        }
    }

    /// The report of running `plan` on `backend`, before any time is spent: its geometry and the
    /// bytes it moves (the executors fill in the times).
    pub fn of_plan(
        program: &Program,
        backend: &str,
        device: Option<String>,
        plan: &Plan,
    ) -> Report {
        Report {
            scheme: plan.scheme,
            shape: plan.shape.clone(),
            steps: plan.steps,
            chunks: plan.chunks,
            requested_chunks: plan.requested_chunks,
            block_steps: plan.block_steps,
            bytes_htod: plan.bytes_htod(),
            bytes_dtoh: plan.bytes_dtoh(),
            bytes_dtod: plan.bytes_dtod(),
            bytes_htod_raw: plan.bytes_htod_raw(),
            bytes_dtoh_raw: plan.bytes_dtoh_raw(),
            device_bytes: plan.device_bytes(),
            adjustments: plan.adjustments.clone(),
            ..Report::named(program, backend, device)
        }
    }

    /// The report of a run of the untouched serial function.
    pub fn serial(
        program: &Program,
        shape: &[usize],
        steps: usize,
        wall: std::time::Duration,
    ) -> Report {
        Report {
            shape: shape.to_vec(),
            steps,
            chunks: 1,
            requested_chunks: 1,
            block_steps: steps.max(1),
            wall_seconds: wall.as_secs_f64(),
            ..Report::named(program, "serial", None)
        }
    }

    /// Total bytes that crossed the host-device link.
    pub fn link_bytes(&self) -> u64 {
        self.bytes_htod + self.bytes_dtoh
    }

    /// What would have crossed the link without compression.
    pub fn link_bytes_raw(&self) -> u64 {
        self.bytes_htod_raw + self.bytes_dtoh_raw
    }

    /// Raw-equivalent link bytes over the bytes that crossed (1 without compression).
    pub fn compression_ratio(&self) -> f64 {
        match self.link_bytes() {
            0 => 1.0,
            n => self.link_bytes_raw() as f64 / n as f64,
        }
    }

    /// The link floor in seconds: the bytes that crossed (compressed where compressed) at
    /// `htod` and `dtoh` bytes per second. `raw: true` gives the floor without compression.
    pub fn floor_seconds(&self, htod: f64, dtoh: f64, raw: bool) -> f64 {
        let (h, d) = if raw {
            (self.bytes_htod_raw, self.bytes_dtoh_raw)
        } else {
            (self.bytes_htod, self.bytes_dtoh)
        };
        h as f64 / htod + d as f64 / dtoh
    }

    /// The whole report as one line of JSON (what the examples' `--json` prints).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} on {}{}: shape {:?}, {} steps, {} chunks (asked {}), {} block steps, {}",
            self.program,
            self.backend,
            self.device
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default(),
            self.shape,
            self.steps,
            self.chunks,
            self.requested_chunks,
            self.block_steps,
            self.scheme
        )?;
        writeln!(
            f,
            "  bytes: {} to device, {} from device, {} device-to-device; {} device memory",
            self.bytes_htod, self.bytes_dtoh, self.bytes_dtod, self.device_bytes
        )?;
        let s = &self.stages;
        writeln!(
            f,
            "  wall {:.4} s; stages (s): htod {:.4}, dtoh {:.4}, dtod {:.4}, kernel {:.4}, host copy {:.4}, register {:.4}, setup {:.4}",
            self.wall_seconds, s.htod, s.dtoh, s.dtod, s.kernel, s.host_copy, s.register, s.setup
        )?;
        if s.exchange > 0.0 {
            writeln!(f, "  halo exchanges (s): {:.4}", s.exchange)?;
        }
        if !self.setup_parts.is_empty() {
            let parts: Vec<String> = (self.setup_parts.iter())
                .map(|(n, s)| format!("{n} {s:.4}"))
                .collect();
            writeln!(f, "  setup (s): {}", parts.join(", "))?;
        }
        if self.link_bytes_raw() != self.link_bytes() {
            writeln!(
                f,
                "  compression: {} bytes crossed the link instead of {} raw (ratio {:.2}); encode {:.4} s, decode {:.4} s",
                self.link_bytes(),
                self.link_bytes_raw(),
                self.compression_ratio(),
                s.encode,
                s.decode
            )?;
        }
        for k in &self.kernels {
            writeln!(f, "  kernel: {k}")?;
        }
        for a in &self.adjustments {
            writeln!(f, "  note: {a}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_up_parts_keep_their_order_and_add_up_by_name() {
        let p = Program::default();
        let mut r = Report::serial(&p, &[4, 4], 1, std::time::Duration::ZERO);
        r.add_setup("allocation", 0.5);
        r.prepend_setup(vec![("tuner".into(), 1.0), ("compile".into(), 0.25)]);
        let mut later = Report::serial(&p, &[4, 4], 1, std::time::Duration::ZERO);
        later.add_setup("compile", 0.125);
        later.add_setup("planning", 2.0);
        r.absorb(later);
        let want = [
            ("tuner", 1.0),
            ("compile", 0.375),
            ("allocation", 0.5),
            ("planning", 2.0),
        ];
        let got: Vec<(&str, f64)> = r
            .setup_parts
            .iter()
            .map(|(n, s)| (n.as_str(), *s))
            .collect();
        assert_eq!(got, want);
        assert!(
            r.to_string()
                .contains("setup (s): tuner 1.0000, compile 0.3750"),
            "{r}"
        );
    }
}
