//! What the tuner asks a backend's device: the model's inputs timed on a slab of the call's
//! arrays, and each candidate kernel shape's rates. A backend that can be tuned implements
//! [`Probe`] in its own module (the CUDA backend: `exec::cuda::CudaProbe`) and hands it out
//! through `exec::backend::Backend::probe`; the tuner's decisions in this module's parent are
//! the same for every backend.

use super::compression::CodecSpeed;
use super::measure::slab_planes;
use super::model::TuneInputs;
use crate::codec::CodecKind;
use crate::error::Error;
use crate::invocation::Invocation;
use crate::march::MarchTuning;
use crate::program::{Elem, Program};
use crate::settled::Settled;

/// A device the tuner can time kernels and transfers on.
pub trait Probe: Sync {
    /// The model's inputs for a call (link and kernel rates, the memory a plan may use, the
    /// call's point planes), with the kernels timed on a slab of `planes` planes of the call's
    /// arrays. `program` may be a fused run's program with `inv` the call's own invocation.
    fn inputs_at(
        &self,
        program: &Program,
        inv: &Invocation<'_>,
        settled: &Settled,
        planes: usize,
    ) -> Result<TuneInputs, Error>;

    /// Each candidate compile-time shape with every kernel's points per second; candidates that
    /// fail to compile or run are left out.
    fn march_candidates(
        &self,
        program: &Program,
        inv: &Invocation<'_>,
        settled: &Settled,
        candidates: &[MarchTuning],
    ) -> Vec<(MarchTuning, Vec<f64>)>;

    /// Starts compiling, side by side, what timing each `(program, settings)` pair will load
    /// (the march candidates, the fused forms), and returns: timing a form waits for its own
    /// compile only, so the tuner pays for about the longest compile instead of the sum of
    /// compiles and timings. [`release`](Probe::release) waits for any compile still going.
    /// A backend that compiles nothing does nothing.
    fn compile_ahead(&self, _forms: &[(&Program, &Settled)]) {}

    /// Frees what the measurements keep for the next one (the CUDA probe's page-locked slab
    /// buffers); called once the tuner is done with a call.
    fn release(&self) {}

    /// A codec's encode and decode rates on the whole device at `rate` for `elem` arrays
    /// (uncompressed bytes per second), for the compression decision.
    fn codec_rates(&self, codec: CodecKind, elem: Elem, rate: f64) -> Result<CodecSpeed, Error>;

    /// [`Probe::inputs_at`] on the default slab ([`slab_planes`]).
    fn inputs(
        &self,
        program: &Program,
        inv: &Invocation<'_>,
        settled: &Settled,
    ) -> Result<TuneInputs, Error> {
        let planes = slab_planes(program, inv.arrays[0].shape()[0]);
        self.inputs_at(program, inv, settled, planes)
    }
}
