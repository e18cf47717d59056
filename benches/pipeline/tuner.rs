//! The tuner's side of the benchmark: `--plan-only`, its choices from assumed rates without
//! running anything.

use crate::cli::Args;
use crate::programs::Model;
use crate::results::gb;
use pacc_runtime::plan::Scheme;
use pacc_runtime::tune::{self, LinkRates, TuneInputs};
use std::time::Instant;

pub fn plan_only(args: &Args) {
    let link = LinkRates {
        htod: 54e9,
        dtoh: 54e9,
        both: 80e9,
        bytes: 0,
    };
    for size in args.size.as_deref().unwrap_or("incore,ooc").split(',') {
        for m in [Model::Acoustic, Model::Himeno] {
            let shape = m.preset(size).expect("preset size");
            let (prog, _) = m.program(&args.kernels);
            let steps = args
                .steps
                .unwrap_or_else(|| m.default_steps(size, args.quick));
            for scheme in Scheme::ALL {
                let mut i = TuneInputs::new(link, vec![50e9], 78_000_000_000);
                i.scheme = scheme;
                i.point_planes = prog.points.iter().map(|_| shape[0] / 2).collect();
                if scheme.transfers().stages_through_pinned_buffers() {
                    i.host_memory = Some(24 << 30);
                }
                let t = Instant::now();
                match tune::choose(&prog, &shape, steps, &i) {
                    Ok(c) => println!(
                        "{} {size} {scheme}: {} ({} candidates, {:.2} s to tune); bytes in {:.1} GB out {:.1} GB per block",
                        m.name(),
                        c.summary(),
                        c.candidates.len(),
                        t.elapsed().as_secs_f64(),
                        gb(c.block.bytes_htod),
                        gb(c.block.bytes_dtoh)
                    ),
                    Err(e) => println!("{} {size} {scheme}: {e}", m.name()),
                }
            }
        }
    }
}
