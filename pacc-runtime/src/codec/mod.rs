//! Compression of the arrays a pipeline keeps on the host between blocks.
//!
//! The planner and the executors see a codec only through [`Codec`]: the rates it accepts for an
//! array ([`Codec::check_rate`], the one rate rule, which the translator calls too), how many
//! axis-0 planes make a *slab* (the thinnest plane range the codec compresses on its own), how
//! many bytes a slab takes at a rate, and the CPU coder. A codec with GPU kernels offers them
//! through [`Codec::cuda`] ([`CudaCoder`]); a backend of its own would get a method beside it.
//! [`CodecKind`] names a codec in options, directives and plans.
//!
//! The codecs: [`zfp`] (fixed-rate zfp, any rate whose blocks fill whole 64-bit words) and
//! [`f16`](mod@f16) (f32 values stored as IEEE binary16). Adding one is a module here and a line in
//! [`CodecKind`].
//!
//! The stream sizes and rate rule (and the CUDA sources) are available without the `runtime`
//! feature, so the translator checks a directive's rates with the same code the runtime uses;
//! the CPU coders (rayon) need the feature.

pub mod f16;
pub mod zfp;

use serde::{Deserialize, Serialize};

pub use crate::program::Elem;

/// A compression rate in bits per value: positive and finite. Whether a codec accepts it for an
/// array (its element type and dimensions) is the codec's to say ([`Codec::slab_bytes`]).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Rate(f64);

impl Rate {
    pub fn new(bits_per_value: f64) -> Result<Rate, CodecError> {
        if bits_per_value.is_finite() && bits_per_value > 0.0 {
            Ok(Rate(bits_per_value))
        } else {
            Err(CodecError::NotARate {
                rate: bits_per_value,
            })
        }
    }

    pub const fn bits(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for Rate {
    type Error = CodecError;
    fn try_from(v: f64) -> Result<Rate, CodecError> {
        Rate::new(v)
    }
}

impl From<Rate> for f64 {
    fn from(r: Rate) -> f64 {
        r.0
    }
}

/// Shown as the bare number, as rates always were in messages and plan listings.
impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

/// `shape`'s element count times `scale` (bytes per value, or 1 for the count), or why no codec
/// can code such an array: every codec handles 1 to 3 dimensions and sizes that fit `usize`.
fn shape_size(shape: &[usize], scale: usize, what: &'static str) -> Result<usize, CodecError> {
    if !(1..=3).contains(&shape.len()) {
        return Err(CodecError::BadShape {
            shape: shape.to_vec(),
            reason: "the codec handles arrays of 1 to 3 dimensions",
        });
    }
    (shape.iter())
        .try_fold(scale, |a, &s| a.checked_mul(s))
        .ok_or(CodecError::BadShape {
            shape: shape.to_vec(),
            reason: what,
        })
}

/// Errors of the codec. Each says what was wrong and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("shape {shape:?} is not codable: {reason}")]
    BadShape {
        shape: Vec<usize>,
        reason: &'static str,
    },
    #[error(
        "{what} holds {got} {unit}, but shape {shape:?} at rate {rate} needs exactly {expected} \
         (size buffers with compressed_bytes / the element count)"
    )]
    ShapeMismatch {
        what: &'static str,
        unit: &'static str,
        shape: Vec<usize>,
        rate: f64,
        expected: usize,
        got: usize,
    },
    #[error("a rate is a positive, finite number of bits per value, not {rate}")]
    NotARate { rate: f64 },
    #[error("an {elem} value has {bits} bits, so at rate {rate} the compressed array would be no smaller (use less than {bits})", elem = elem.rust_name(), bits = 8 * elem.size())]
    NoSmaller { elem: Elem, rate: f64 },
    #[error("{codec} does not code {elem} arrays ({hint})", elem = elem.rust_name())]
    UnsupportedElem {
        codec: &'static str,
        elem: Elem,
        hint: &'static str,
    },
    /// What only zfp refuses.
    #[error(transparent)]
    Zfp(#[from] zfp::ZfpError),
    /// What only f16 refuses.
    #[error(transparent)]
    F16(#[from] f16::F16Error),
}

/// Values to compress: a whole number of slabs of an array, C-contiguous, axis 0 outermost.
#[derive(Debug)]
pub enum Values<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
}

/// Where decompressed values go.
#[derive(Debug)]
pub enum ValuesMut<'a> {
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
}

impl ValuesMut<'_> {
    /// The same values, read only.
    pub fn as_values(&self) -> Values<'_> {
        match self {
            ValuesMut::F32(v) => Values::F32(v),
            ValuesMut::F64(v) => Values::F64(v),
        }
    }
}

/// Values a codec's CPU coder takes: f32 and f64.
#[cfg(feature = "runtime")]
pub trait Value: Copy + Into<f64> + Send + Sync + 'static {
    /// The element type tag pacc uses for this type.
    const ELEM: Elem;
    /// The slice as the coders take it.
    fn values(v: &[Self]) -> Values<'_>;
    /// The slice as the decoders fill it.
    fn values_mut(v: &mut [Self]) -> ValuesMut<'_>;
}

#[cfg(feature = "runtime")]
impl Value for f32 {
    const ELEM: Elem = Elem::F32;
    fn values(v: &[f32]) -> Values<'_> {
        Values::F32(v)
    }
    fn values_mut(v: &mut [f32]) -> ValuesMut<'_> {
        ValuesMut::F32(v)
    }
}

#[cfg(feature = "runtime")]
impl Value for f64 {
    const ELEM: Elem = Elem::F64;
    fn values(v: &[f64]) -> Values<'_> {
        Values::F64(v)
    }
    fn values_mut(v: &mut [f64]) -> ValuesMut<'_> {
        ValuesMut::F64(v)
    }
}

/// How a codec's CUDA kernels are launched on a run of slabs. The kernels' ABI: encode
/// `(const T* values, long long n0, long long n1[, long long n2], unsigned long long* bytes,
/// unsigned int param, unsigned int* err)` (setting `*err` to nonzero on values it cannot code),
/// decode `(const unsigned long long* bytes, n0, n1[, n2], T* values, unsigned int param)`; one
/// thread per unit, units numbered slab by slab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CudaLaunch {
    /// Threads (independent units of the stream) per slab.
    pub threads_per_slab: usize,
    /// The kernels' `param`, derived from the rate.
    pub param: u32,
}

/// A lossy codec whose streams can be cut at slab boundaries: planes `s * slab_planes ..
/// (s + m) * slab_planes` of an array compress on their own to bytes `s * slab_bytes ..
/// (s + m) * slab_bytes` of the whole array's stream, so the pipeline moves and codes any run of
/// slabs independently (the last slab of an array may be partial).
pub trait Codec: Sync {
    /// The codec's name in messages.
    fn name(&self) -> &'static str;

    /// Axis-0 planes per slab.
    fn slab_planes(&self) -> usize;

    /// Whether the codec takes `rate` for arrays of `elem` with `dims` axes, or why not: the rate
    /// rule, which the translator checks a directive's clause with and the runtime every call's
    /// settings with. A rate it accepts is smaller than raw and codes on every backend the codec
    /// has (the CPU and GPU coders then write the same stream).
    fn check_rate(&self, elem: Elem, dims: usize, rate: Rate) -> Result<(), CodecError>;

    /// [`Codec::check_rate`] for an array of `shape`, then the bytes of one of its slabs.
    fn accepts(&self, elem: Elem, shape: &[usize], rate: Rate) -> Result<usize, CodecError> {
        self.check_rate(elem, shape.len(), rate)?;
        self.slab_bytes(shape.get(1..).unwrap_or(&[]), rate)
    }

    /// Bytes of one slab of an array whose planes have shape `plane` (the axes after axis 0), or
    /// why the codec cannot cut such arrays at slab boundaries at this rate.
    fn slab_bytes(&self, plane: &[usize], rate: Rate) -> Result<usize, CodecError>;

    /// Bytes of the stream of an array of `shape` (axis 0 outermost).
    fn compressed_bytes(&self, shape: &[usize], rate: Rate) -> Result<usize, CodecError>;

    /// Compresses `src` (of `shape`) into `out`, exactly [`Codec::compressed_bytes`] long.
    #[cfg(feature = "runtime")]
    fn encode(
        &self,
        src: Values<'_>,
        shape: &[usize],
        rate: Rate,
        out: &mut [u8],
    ) -> Result<(), CodecError>;

    /// Decompresses a stream written by [`Codec::encode`] with the same shape and rate.
    #[cfg(feature = "runtime")]
    fn decode(
        &self,
        src: &[u8],
        shape: &[usize],
        rate: Rate,
        out: ValuesMut<'_>,
    ) -> Result<(), CodecError>;

    /// The codec's CUDA kernels, if it has them (the CUDA executor refuses a codec without).
    fn cuda(&self) -> Option<&dyn CudaCoder>;
}

/// A codec's coder on CUDA devices: kernels that write the same stream as its CPU coder.
pub trait CudaCoder: Sync {
    /// CUDA C source (NVRTC, no includes) of the encode and decode kernels.
    fn source(&self) -> &'static str;

    /// The name of the encode or decode kernel in [`CudaCoder::source`] for arrays of `elem`
    /// with `dims` axes.
    fn kernel(&self, encode: bool, elem: Elem, dims: usize) -> String;

    /// The kernels' launch for arrays of `shape` at `rate`, or why the GPU cannot code them (the
    /// run then stops before touching data).
    fn launch(&self, shape: &[usize], rate: Rate) -> Result<CudaLaunch, CodecError>;

    /// What an encode kernel's raised `*err` means, for the run's error.
    fn refusal(&self) -> &'static str;
}

/// The codecs options, directives and plans can name (plans are data, so they name a codec
/// rather than hold one). One line per codec here and in [`CodecKind::get`] registers it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CodecKind {
    /// Fixed-rate zfp ([`zfp::Zfp`]).
    #[default]
    Zfp,
    /// f32 values as IEEE binary16 ([`f16::F16`]).
    F16,
}

impl CodecKind {
    /// Every codec, in the order messages list them.
    pub const ALL: [CodecKind; 2] = [CodecKind::Zfp, CodecKind::F16];

    pub fn get(self) -> &'static dyn Codec {
        match self {
            CodecKind::Zfp => &zfp::Zfp,
            CodecKind::F16 => &f16::F16,
        }
    }

    /// The codec's name in options, directives and messages (`zfp`, `f16`).
    pub fn name(self) -> &'static str {
        self.get().name()
    }

    /// The names [`CodecKind::from_str`](std::str::FromStr) takes, for messages: `zfp or f16`.
    pub fn names() -> String {
        crate::words::sentence_list(CodecKind::ALL.iter().map(|k| k.name()))
    }
}

impl std::fmt::Display for CodecKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for CodecKind {
    type Err = String;
    /// A codec by its name (`zfp`, `f16`), or a message listing the names.
    fn from_str(s: &str) -> Result<CodecKind, String> {
        CodecKind::ALL
            .into_iter()
            .find(|k| k.name() == s.trim())
            .ok_or_else(|| format!("unknown codec `{s}`; expected {}", CodecKind::names()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_positive_and_finite() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(
                matches!(Rate::new(bad), Err(CodecError::NotARate { .. })),
                "{bad}"
            );
        }
        let r = Rate::new(12.5).unwrap();
        assert_eq!((r.bits(), r.to_string()), (12.5, "12.5".to_string()));
        assert_eq!(serde_json::to_string(&r).unwrap(), "12.5");
        assert_eq!(serde_json::from_str::<Rate>("12.5").unwrap(), r);
        assert!(serde_json::from_str::<Rate>("-3").is_err());
    }

    #[test]
    fn zfp_through_the_trait_matches_the_functions() {
        let codec = CodecKind::Zfp.get();
        assert_eq!((codec.name(), codec.slab_planes()), ("zfp", 4));
        let shape = [9usize, 6, 10];
        let rate = Rate::new(8.0).unwrap();
        let values: Vec<f32> = (0..shape.iter().product::<usize>())
            .map(|i| (i as f32 * 0.37).sin())
            .collect();
        let n = codec.compressed_bytes(&shape, rate).unwrap();
        assert_eq!(n, zfp::compressed_bytes(&shape, 8.0).unwrap());
        assert_eq!(
            codec.slab_bytes(&shape[1..], rate).unwrap(),
            zfp::slab_bytes(&shape[1..], 8.0).unwrap()
        );
        let (mut ours, mut theirs) = (vec![0u8; n], vec![0u8; n]);
        codec
            .encode(Values::F32(&values), &shape, rate, &mut ours)
            .unwrap();
        zfp::encode(&values, &shape, 8.0, &mut theirs).unwrap();
        assert_eq!(ours, theirs);
        let mut back = vec![0f32; values.len()];
        codec
            .decode(&ours, &shape, rate, ValuesMut::F32(&mut back))
            .unwrap();
        let mut want = vec![0f32; values.len()];
        zfp::decode(&theirs, &shape, 8.0, &mut want).unwrap();
        assert_eq!(back, want);
    }

    #[test]
    fn zfp_cuda_launch_needs_whole_words_per_block() {
        let codec = CodecKind::Zfp.get().cuda().unwrap();
        // 3-D, rate 2: 128-bit blocks; a plane of 6 x 10 is 2 x 3 blocks.
        let l = codec.launch(&[9, 6, 10], Rate::new(2.0).unwrap()).unwrap();
        assert_eq!((l.threads_per_slab, l.param), (6, 128));
        // 2-D, rate 5: 80-bit blocks, which threads would share words of.
        let e = codec.launch(&[9, 10], Rate::new(5.0).unwrap()).unwrap_err();
        assert!(
            matches!(
                e,
                CodecError::Zfp(zfp::ZfpError::GpuUnaligned { bits: 80, .. })
            ),
            "{e}"
        );
        assert!(codec.source().contains(&codec.kernel(true, Elem::F64, 3)));
    }

    #[test]
    fn the_rate_rule_is_the_codecs() {
        let r = |v: f64| Rate::new(v).unwrap();
        let zfp = CodecKind::Zfp.get();
        assert!(zfp.check_rate(Elem::F32, 3, r(16.0)).is_ok());
        assert!(zfp.check_rate(Elem::F32, 2, r(8.0)).is_ok());
        assert!(matches!(
            zfp.check_rate(Elem::F32, 3, r(32.0)),
            Err(CodecError::NoSmaller { .. })
        ));
        assert!(matches!(
            zfp.check_rate(Elem::F32, 2, r(10.0)),
            Err(CodecError::Zfp(zfp::ZfpError::UnalignedBlock {
                bits: 160,
                ..
            }))
        ));
        assert_eq!(zfp.accepts(Elem::F64, &[9, 6, 10], r(16.0)).unwrap(), 768);
        let f16 = CodecKind::F16.get();
        assert!(f16.check_rate(Elem::F32, 3, r(16.0)).is_ok());
        assert!(matches!(
            f16.check_rate(Elem::F32, 3, r(8.0)),
            Err(CodecError::F16(f16::F16Error::FixedRate { bits: 16, .. }))
        ));
        assert!(matches!(
            f16.check_rate(Elem::F64, 3, r(16.0)),
            Err(CodecError::UnsupportedElem { .. })
        ));
        assert_eq!(f16.accepts(Elem::F32, &[9, 6, 10], r(16.0)).unwrap(), 120);
    }

    #[test]
    fn codecs_by_name() {
        for k in CodecKind::ALL {
            assert_eq!(k.name().parse::<CodecKind>().unwrap(), k);
            assert_eq!(k.get().name(), k.to_string());
        }
        let e = "lz4".parse::<CodecKind>().unwrap_err();
        assert_eq!(e, "unknown codec `lz4`; expected zfp or f16");
    }
}
