//! A device for the tuner's unit tests: it records what the tuner asks of it, in order, and
//! answers with rates of its own.

use super::compression::CodecSpeed;
use super::model::{LinkRates, TuneInputs};
use super::Probe;
use crate::error::Error;
use crate::invocation::Invocation;
use crate::march::MarchTuning;
use crate::program::{Elem, Program};
use crate::settled::Settled;
use std::sync::Mutex;

/// Kernels at `rate` points per second on any slab; march candidate `i` at `i + 1` Gpt/s; a
/// fused run's vector form at `rate` times its block's factor (`with_block_rates`).
pub(crate) struct FakeDevice {
    rate: f64,
    blocks: Vec<([u32; 2], f64)>,
    asked: Mutex<Vec<String>>,
}

impl FakeDevice {
    pub(crate) fn new(rate: f64) -> Self {
        FakeDevice {
            rate,
            blocks: Vec::new(),
            asked: Mutex::new(Vec::new()),
        }
    }

    /// The same device running a fused vector form with block `b` at `factor` times `rate`.
    pub(crate) fn with_block_rates(self, blocks: &[([u32; 2], f64)]) -> Self {
        FakeDevice {
            blocks: blocks.to_vec(),
            ..self
        }
    }

    /// What the tuner asked, in order: `inputs PLANES` (and `block BXxBY` after it for a fused
    /// vector form), `time N` (candidates), `compile MARCHES` (the forms' march options).
    pub(crate) fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }

    fn note(&self, what: String) {
        self.asked.lock().unwrap().push(what);
    }
}

impl Probe for FakeDevice {
    fn inputs_at(
        &self,
        program: &Program,
        _: &Invocation<'_>,
        _: &Settled,
        planes: usize,
    ) -> Result<TuneInputs, Error> {
        self.note(format!("inputs {planes}"));
        let block = (program.fusion.active.as_ref()).and_then(|a| a.decl.vector_block());
        let factor = match block {
            Some(b @ [bx, by]) => {
                self.note(format!("block {bx}x{by}"));
                (self.blocks.iter())
                    .find(|(k, _)| *k == b)
                    .map_or(1.0, |(_, f)| *f)
            }
            None => 1.0,
        };
        Ok(TuneInputs::new(
            LinkRates::H100,
            vec![self.rate * factor],
            64 << 30,
        ))
    }

    fn march_candidates(
        &self,
        _: &Program,
        _: &Invocation<'_>,
        _: &Settled,
        candidates: &[MarchTuning],
    ) -> Vec<(MarchTuning, Vec<f64>)> {
        self.note(format!("time {}", candidates.len()));
        (candidates.iter().enumerate())
            .map(|(i, &c)| (c, vec![1e9 * (i + 1) as f64]))
            .collect()
    }

    fn codec_rates(
        &self,
        _: crate::codec::CodecKind,
        _: Elem,
        _: f64,
    ) -> Result<CodecSpeed, Error> {
        Err(Error::Internal("the fake device has no codecs".into()))
    }

    fn compile_ahead(&self, forms: &[(&Program, &Settled)]) {
        let marches: Vec<_> = forms.iter().map(|(_, s)| s.cuda.march.get().ok()).collect();
        self.note(format!("compile {marches:?}"));
    }
}
