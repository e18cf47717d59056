//! The device and its link, measured once at the start of a run: every GPU configuration is
//! shown against the floor these rates give for the bytes it moved.

use crate::gpu;
use crate::results::{Link, Output};
use pacc_runtime::tune::LinkRates;

/// Finds the GPU and measures the link (pinned buffers, each direction and both at once),
/// recording both in `out`; `None` (with the reason in `out.note`) when there is no GPU or the
/// measurement failed: then only the CPU configuration runs.
pub fn measure(gpu: &Result<String, String>, out: &mut Output) -> Option<LinkRates> {
    let name = match gpu {
        Ok(name) => name,
        Err(reason) => {
            out.note = format!("no CUDA device ({reason}): only the CPU configuration ran");
            println!("{}", out.note);
            return None;
        }
    };
    println!("GPU: {name}");
    match gpu::link() {
        Ok(l) => {
            println!(
                "link: HtoD {:.1} GB/s, DtoH {:.1} GB/s, both at once {:.1} GB/s",
                l.htod / 1e9,
                l.dtoh / 1e9,
                l.both / 1e9
            );
            out.link = Some(Link {
                htod_gbps: l.htod / 1e9,
                dtoh_gbps: l.dtoh / 1e9,
                both_gbps: l.both / 1e9,
                buffer_bytes: l.bytes,
            });
            Some(l)
        }
        Err(e) => {
            println!("measuring the link failed ({e}); GPU configurations skipped");
            out.note = format!("link measurement failed: {e}");
            None
        }
    }
}
