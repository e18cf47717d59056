//! Chrome/Perfetto trace export of a run's per-stream timeline.

use crate::report::TraceEvent;
use std::path::Path;

/// `{"traceEvents":[{"name","ph":"X","ts","dur","pid","tid"}...]}` with one thread per stream
/// (tid = stream index), times in microseconds from the start of the run. Open it in
/// <https://ui.perfetto.dev> or `chrome://tracing`.
pub fn trace_json(program: &str, timeline: &[TraceEvent]) -> String {
    let mut ev: Vec<serde_json::Value> = Vec::with_capacity(timeline.len() + 8);
    let streams = timeline.iter().map(|e| e.stream + 1).max().unwrap_or(0);
    ev.push(
        serde_json::json!({"name": "process_name", "ph": "M", "pid": 0,
        "args": {"name": format!("pacc {program} (CUDA)")}}),
    );
    for s in 0..streams {
        ev.push(
            serde_json::json!({"name": "thread_name", "ph": "M", "pid": 0, "tid": s,
            "args": {"name": format!("stream {s}")}}),
        );
    }
    for e in timeline {
        ev.push(
            serde_json::json!({"name": e.name, "cat": e.name.split(' ').next().unwrap_or(""),
            "ph": "X", "ts": e.start_us, "dur": e.dur_us, "pid": 0, "tid": e.stream}),
        );
    }
    serde_json::json!({"traceEvents": ev, "displayTimeUnit": "ms"}).to_string()
}

pub fn write_trace(path: &Path, program: &str, timeline: &[TraceEvent]) -> std::io::Result<()> {
    std::fs::write(path, trace_json(program, timeline))
}
