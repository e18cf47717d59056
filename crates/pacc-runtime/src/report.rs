//! What a run did: backend, geometry, bytes moved, time per stage.

use crate::plan::Scheme;
use serde::Serialize;

/// Seconds spent per kind of operation (summed over streams; they overlap in time).
#[derive(Clone, Debug, Default, Serialize)]
pub struct StageTimes {
    pub htod: f64,
    pub dtoh: f64,
    pub dtod: f64,
    pub kernel: f64,
    /// Host-side copies through staging buffers (staged-copy scheme).
    pub host_copy: f64,
    /// Page-locking the user's arrays (CUDA, direct mapping).
    pub register: f64,
    /// Planning, validation and setup.
    pub setup: f64,
}

/// One operation on a stream's timeline (for traces).
#[derive(Clone, Debug, Serialize)]
pub struct TraceEvent {
    pub name: String,
    pub stream: usize,
    pub start_us: f64,
    pub dur_us: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub program: String,
    /// "cpu", "shuffled", "cuda" or "serial".
    pub backend: String,
    pub device: Option<String>,
    pub scheme: Scheme,
    pub shape: Vec<usize>,
    pub steps: usize,
    pub chunks: usize,
    pub requested_chunks: usize,
    pub block_steps: usize,
    pub bytes_htod: u64,
    pub bytes_dtoh: u64,
    pub bytes_dtod: u64,
    pub device_bytes: u64,
    pub wall_seconds: f64,
    pub stages: StageTimes,
    /// Changes the runtime made to what was asked (chunk count, scheme fallback...).
    pub adjustments: Vec<String>,
    pub timeline: Vec<TraceEvent>,
}

impl Report {
    /// The report of a run of the untouched serial function.
    pub fn serial(
        program: &crate::program::Program,
        shape: &[usize],
        steps: usize,
        wall: std::time::Duration,
    ) -> Report {
        Report {
            program: program.name.clone(),
            backend: "serial".into(),
            device: None,
            scheme: Scheme::default(),
            shape: shape.to_vec(),
            steps,
            chunks: 1,
            requested_chunks: 1,
            block_steps: steps.max(1),
            bytes_htod: 0,
            bytes_dtoh: 0,
            bytes_dtod: 0,
            device_bytes: 0,
            wall_seconds: wall.as_secs_f64(),
            stages: StageTimes::default(),
            adjustments: Vec::new(),
            timeline: Vec::new(),
        }
    }

    /// Total bytes that crossed the host-device link.
    pub fn link_bytes(&self) -> u64 {
        self.bytes_htod + self.bytes_dtoh
    }

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
        for a in &self.adjustments {
            writeln!(f, "  note: {a}")?;
        }
        Ok(())
    }
}
