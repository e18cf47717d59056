//! A device for the tuner's unit tests: it records what the tuner asks of it, in order, and
//! answers with rates of its own.

use super::compression::CodecSpeed;
use super::model::{LinkRates, TuneInputs};
use super::Probe;
use crate::error::Error;
use crate::invocation::Invocation;
use crate::march::MarchTuning;
use crate::options::Options;
use crate::program::{Elem, Program};
use std::sync::Mutex;

/// Kernels at `rate` points per second on any slab; march candidate `i` at `i + 1` Gpt/s.
pub(crate) struct FakeDevice {
    rate: f64,
    asked: Mutex<Vec<String>>,
}

impl FakeDevice {
    pub(crate) fn new(rate: f64) -> Self {
        FakeDevice {
            rate,
            asked: Mutex::new(Vec::new()),
        }
    }

    /// What the tuner asked, in order: `inputs PLANES`, `time N` (candidates), `compile
    /// MARCHES` (the forms' march options).
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
        _: &Program,
        _: &Invocation<'_>,
        _: &Options,
        planes: usize,
    ) -> Result<TuneInputs, Error> {
        self.note(format!("inputs {planes}"));
        Ok(TuneInputs::new(LinkRates::H100, vec![self.rate], 64 << 30))
    }

    fn march_candidates(
        &self,
        _: &Program,
        _: &Invocation<'_>,
        _: &Options,
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

    fn compile_ahead(&self, forms: &[(&Program, &Options)]) {
        let marches: Vec<_> = forms.iter().map(|(_, o)| o.cuda.march).collect();
        self.note(format!("compile {marches:?}"));
    }
}
