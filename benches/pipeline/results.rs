//! What a run measured: the JSON the benchmark writes (and `--from-json` reads back), and the
//! figures derived from the measurements (efficiency, speedups, the targets).

use pacc_runtime::report::StageTimes;
use pacc_runtime::tune::LinkRates;
use serde::Serialize;
use std::collections::BTreeMap;

/// Bytes in GB (10^9), the unit every size and rate is given in.
pub fn gb(b: u64) -> f64 {
    b as f64 / 1e9
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Stages {
    pub htod: f64,
    pub dtoh: f64,
    pub dtod: f64,
    pub kernel: f64,
    pub host_copy: f64,
    #[serde(default)]
    pub encode: f64,
    #[serde(default)]
    pub decode: f64,
}

impl From<&StageTimes> for Stages {
    fn from(s: &StageTimes) -> Self {
        Stages {
            htod: s.htod,
            dtoh: s.dtoh,
            dtod: s.dtod,
            kernel: s.kernel,
            encode: s.encode,
            decode: s.decode,
            host_copy: s.host_copy,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Measurement {
    pub config: String,
    /// The scheme of the plan that ran (empty where there is no plan: unified memory, CPU).
    #[serde(default)]
    pub scheme: String,
    pub chunks: usize,
    pub block_steps: usize,
    pub steps: usize,
    /// Measured seconds of the run (GPU: first op to last op, from events; excludes planning,
    /// allocation and page-locking, reported separately).
    pub seconds: f64,
    pub per_step: f64,
    pub bytes_htod: u64,
    pub bytes_dtoh: u64,
    pub bytes_dtod: u64,
    /// Bytes over the link per second of the run.
    pub link_gbps: f64,
    /// Bytes over the link / measured link rates (s).
    pub floor_seconds: f64,
    /// floor / time.
    pub efficiency: f64,
    /// Busy time per stage, summed over streams (they overlap).
    pub stages: Stages,
    /// Tuner's prediction for this configuration (s), if any.
    pub predicted_seconds: Option<f64>,
    /// The model's link time (bytes / measured rates) and kernel time (points computed /
    /// slab-measured rate) of the plan that ran, in seconds for the whole run.
    #[serde(default)]
    pub model_link_seconds: f64,
    #[serde(default)]
    pub model_kernel_seconds: f64,
    /// Kernel points computed / points the serial loop computes (redundant halo work).
    #[serde(default)]
    pub redundancy: f64,
    pub device_bytes: u64,
    pub setup_seconds: f64,
    pub checksum: Option<f64>,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct GridPoint {
    /// The scheme (`in-core` for the whole run resident).
    #[serde(default)]
    pub scheme: String,
    pub chunks: usize,
    pub block_steps: usize,
    pub per_step: f64,
    pub predicted_per_step: f64,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct TunerResult {
    /// The configuration judged: `default` (the library's choice with no options) or
    /// `region-sharing` (the tuned chunks and depth of that scheme).
    #[serde(default)]
    pub config: String,
    #[serde(default)]
    pub scheme: String,
    pub chunks: usize,
    pub block_steps: usize,
    pub predicted_per_step: f64,
    pub measured_per_step: f64,
    #[serde(default)]
    pub grid_best_scheme: String,
    pub grid_best_chunks: usize,
    pub grid_best_steps: usize,
    pub grid_best_per_step: f64,
    /// measured(tuned) / measured(grid best).
    pub ratio_to_best: f64,
    pub within_10_percent: bool,
    #[serde(default)]
    pub within_5_percent: bool,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Target {
    pub what: String,
    pub want: String,
    pub got: String,
    pub met: bool,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct RunResult {
    pub program: String,
    pub kernels: String,
    pub size: String,
    pub shape: Vec<usize>,
    pub arrays: usize,
    pub array_bytes: u64,
    pub steps: usize,
    pub init_seconds: f64,
    pub register_seconds: Option<f64>,
    pub kernel_rates: Vec<f64>,
    /// The tuner's note on the marching kernels' compile-time shape, every configuration's.
    #[serde(default)]
    pub kernel_shape: Option<String>,
    #[serde(default)]
    pub host_copy_gbps: f64,
    pub configs: Vec<Measurement>,
    pub grid: Vec<GridPoint>,
    pub tuner: Option<TunerResult>,
    /// speedup[a][b] = time per step of b / time per step of a.
    pub speedups: BTreeMap<String, BTreeMap<String, f64>>,
    pub targets: Vec<Target>,
    pub skipped: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Link {
    pub htod_gbps: f64,
    pub dtoh_gbps: f64,
    pub both_gbps: f64,
    pub buffer_bytes: usize,
}

#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Output {
    pub device: String,
    pub date: String,
    pub command: String,
    pub host_threads: usize,
    pub gpu: bool,
    pub note: String,
    pub link: Option<Link>,
    pub runs: Vec<RunResult>,
}

pub fn finish(m: &mut Measurement, link: Option<&LinkRates>) {
    m.per_step = m.seconds / m.steps.max(1) as f64;
    let bytes = (m.bytes_htod + m.bytes_dtoh) as f64;
    if m.seconds > 0.0 {
        m.link_gbps = bytes / m.seconds / 1e9;
    }
    if let Some(l) = link {
        if bytes > 0.0 {
            m.floor_seconds = l.seconds(m.bytes_htod, m.bytes_dtoh);
            m.efficiency = m.floor_seconds / m.seconds;
        }
    }
}

/// Speedups and the targets.
pub fn analyse(res: &mut RunResult) {
    let per: BTreeMap<String, f64> = res
        .configs
        .iter()
        .map(|m| (m.config.clone(), m.per_step))
        .collect();
    res.speedups = per
        .iter()
        .map(|(a, ta)| {
            (
                a.clone(),
                per.iter()
                    .map(|(b, tb)| (b.clone(), tb / ta))
                    .collect::<BTreeMap<_, _>>(),
            )
        })
        .collect();
    let Some(rs) = res.configs.iter().find(|m| m.config == "region-sharing") else {
        return;
    };
    let mut t = Vec::new();
    let sp = |b: &str| per.get(b).map(|tb| tb / rs.per_step);
    if res.size == "ooc" || !res.configs.iter().any(|m| m.config == "in-core") {
        let ratio = rs.seconds / rs.floor_seconds;
        t.push(Target {
            what: "region-sharing time / floor".into(),
            want: "<= 1.25".into(),
            got: format!("{ratio:.2}"),
            met: ratio <= 1.25,
        });
        for (b, want) in [("direct-map", 1.3), ("staged-copy", 3.0), ("cpu", 20.0)] {
            if let Some(s) = sp(b) {
                t.push(Target {
                    what: format!("speedup over {b}"),
                    want: format!(">= {want}"),
                    got: format!("{s:.2}"),
                    met: s >= want,
                });
            }
        }
    } else {
        if let Some(s) = sp("in-core") {
            t.push(Target {
                what: "speedup over in-core CUDA (upload + download counted)".into(),
                want: ">= 1.0".into(),
                got: format!("{s:.2}"),
                met: s >= 1.0,
            });
        }
        if let Some(s) = sp("um-prefetch") {
            t.push(Target {
                what: "speedup over unified memory with prefetch".into(),
                want: "> 1.0".into(),
                got: format!("{s:.2}"),
                met: s > 1.0,
            });
        }
    }
    if let Some(tu) = &res.tuner {
        t.push(Target {
            what: "tuned / grid best".into(),
            want: "<= 1.10".into(),
            got: format!("{:.3}", tu.ratio_to_best),
            met: tu.within_10_percent,
        });
    }
    res.targets = t;
}
