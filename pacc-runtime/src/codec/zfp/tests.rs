//! The codec against zfp-rs (an independent pure-Rust zfp that matches zfp's C output byte for
//! byte), plus the stream-layout properties the pipeline relies on.

use super::*;
use zfp_rs::{
    ZfpBitStream, ZfpConfig, ZfpDimensionality, ZfpField, ZfpFieldMut, ZfpScalar,
    ZfpStreamAlignment,
};

// A seeded generator (xorshift64*), so failures reproduce.
use crate::rng::XorShift64Star as Rng;

trait TestFloat: CodecFloat + ZfpScalar + PartialEq + std::fmt::Debug {
    fn from_f64(v: f64) -> Self;
    fn bits(self) -> u64;
    /// A value that is denormal in this type.
    const DENORMAL: f64;
    const HUGE: f64;
}
impl TestFloat for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    const DENORMAL: f64 = 1e-40;
    const HUGE: f64 = 1e38;
}
impl TestFloat for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
    const DENORMAL: f64 = 1e-310;
    const HUGE: f64 = 1e300;
}

/// Test data of `kind` for `shape` (C order, last axis fastest).
fn data<T: TestFloat>(kind: &str, shape: &[usize], seed: u64) -> Vec<T> {
    let n: usize = shape.iter().product();
    let mut rng = Rng(seed.wrapping_mul(crate::rng::GOLDEN) | 1);
    let mut idx = vec![0usize; shape.len()];
    (0..n)
        .map(|i| {
            let mut r = i;
            for d in (0..shape.len()).rev() {
                idx[d] = r % shape[d];
                r /= shape[d];
            }
            let smooth = idx
                .iter()
                .enumerate()
                .map(|(d, &x)| (0.37 * x as f64 + 0.5 * d as f64).sin())
                .sum::<f64>()
                + 0.1 * idx.iter().sum::<usize>() as f64;
            let v = match kind {
                "smooth" => smooth,
                "rough" => rng.unit() * 2.0 - 1.0,
                "zeros" => 0.0,
                "tiny" => (rng.unit() - 0.5) * 1e-30,
                "denormal" => (rng.unit() - 0.5) * T::DENORMAL,
                "huge" => (rng.unit() - 0.5) * T::HUGE,
                "mixed" => {
                    // Signs, magnitudes spanning many octaves, some zero blocks and exact zeros.
                    let s = if rng.unit() < 0.5 { -1.0 } else { 1.0 };
                    let m = if i % 37 < 9 {
                        0.0
                    } else {
                        10f64.powf(rng.unit() * 12.0 - 6.0)
                    };
                    s * m * smooth
                }
                _ => unreachable!(),
            };
            T::from_f64(v)
        })
        .collect()
}

fn zfp_dims(shape: &[usize]) -> ([usize; 4], ZfpDimensionality) {
    let mut d = [0usize; 4];
    for (i, &s) in shape.iter().rev().enumerate() {
        d[i] = s;
    }
    let dim = match shape.len() {
        1 => ZfpDimensionality::D1,
        2 => ZfpDimensionality::D2,
        _ => ZfpDimensionality::D3,
    };
    (d, dim)
}

fn config<T: TestFloat>(shape: &[usize], rate: f64) -> ZfpConfig {
    let (_, dim) = zfp_dims(shape);
    ZfpConfig::fixed_rate(rate, T::SCALAR_TYPE, dim, ZfpStreamAlignment::Unaligned).unwrap()
}

/// zfp-rs's headerless fixed-rate stream.
fn reference_encode<T: TestFloat>(src: &[T], shape: &[usize], rate: f64) -> Vec<u8> {
    let (dims, _) = zfp_dims(shape);
    let cfg = config::<T>(shape, rate);
    let field = ZfpField::new(src, dims).unwrap();
    let cap = cfg.maximum_size(T::SCALAR_TYPE, dims).unwrap();
    let mut bs = ZfpBitStream::new(cap).unwrap();
    let n = bs.compress(&cfg, &field).unwrap();
    bs.as_bytes()[..n].to_vec()
}

fn reference_decode<T: TestFloat>(stream: &[u8], shape: &[usize], rate: f64) -> Vec<T> {
    let (dims, _) = zfp_dims(shape);
    let cfg = config::<T>(shape, rate);
    let mut out = vec![T::default(); shape.iter().product()];
    let mut bs = ZfpBitStream::from_bytes(stream).unwrap();
    {
        let mut field = ZfpFieldMut::new(&mut out, dims).unwrap();
        bs.decompress(&cfg, &mut field).unwrap();
    }
    out
}

fn check_against_reference<T: TestFloat>(shape: &[usize], rate: f64, kind: &str, seed: u64) {
    let src = data::<T>(kind, shape, seed);
    let what = format!("{:?} {shape:?} rate {rate} {kind}", T::ELEM);
    let theirs = reference_encode(&src, shape, rate);
    let len = compressed_bytes(shape, rate).unwrap();
    assert_eq!(len, theirs.len(), "{what}: stream size");
    let mut ours = vec![0xa5u8; len];
    encode(&src, shape, rate, &mut ours).unwrap();
    if let Some(at) = ours.iter().zip(&theirs).position(|(a, b)| a != b) {
        panic!(
            "{what}: streams differ first at byte {at} (block {} of {} bits)",
            at * 8 / block_bits(rate, shape.len()).unwrap(),
            block_bits(rate, shape.len()).unwrap()
        );
    }
    let expect: Vec<T> = reference_decode(&theirs, shape, rate);
    let mut got = vec![T::default(); src.len()];
    decode(&theirs, shape, rate, &mut got).unwrap();
    for (i, (a, b)) in got.iter().zip(&expect).enumerate() {
        assert_eq!(
            a.bits(),
            b.bits(),
            "{what}: decoded value {i}: {a:?} vs {b:?}"
        );
    }
}

const SHAPES: &[&[usize]] = &[
    &[7],
    &[16],
    &[1],
    &[13, 6],
    &[8, 8],
    &[2, 9],
    &[9, 5, 11],
    &[8, 4, 8],
    &[1, 2, 3],
];
const KINDS: &[&str] = &[
    "smooth", "rough", "zeros", "tiny", "denormal", "huge", "mixed",
];

#[test]
fn codec_matches_zfp_rs_byte_for_byte() {
    let mut seed = 1;
    for &shape in SHAPES {
        for rate in [8.0, 12.0, 16.0, 24.0] {
            for &kind in KINDS {
                seed += 1;
                check_against_reference::<f32>(shape, rate, kind, seed);
                check_against_reference::<f64>(shape, rate, kind, seed);
            }
        }
    }
}

#[test]
fn codec_matches_zfp_rs_at_odd_and_extreme_rates() {
    // Rates that are not word multiples, the lowest budgets, and budgets past lossless.
    for (shape, rate) in [
        (&[13usize][..], 3.0),
        (&[13], 5.3),
        (&[10, 7], 0.75),
        (&[10, 7], 2.6),
        (&[5, 6, 7], 0.1875),
        (&[5, 6, 7], 1.0),
        (&[5, 6, 7], 64.0),
        (&[9, 9], 64.0),
    ] {
        for &kind in KINDS {
            check_against_reference::<f32>(shape, rate, kind, 99);
            check_against_reference::<f64>(shape, rate, kind, 99);
        }
    }
}

#[test]
fn codec_tiny_f64_blocks_use_zfps_reduced_precision() {
    // Below about 2^-1014 zfp's precision() gives fewer than 64 planes; and below 2^-961 C's
    // scale overflows (we, like zfp-rs, scale exactly).
    let shape = [6usize, 7, 5];
    for scale in [1e-300, 1e-305, 2.2e-308, 1e-310, 5e-324] {
        let src: Vec<f64> = data::<f64>("rough", &shape, 3)
            .into_iter()
            .map(|v| v * scale / 1e-308 * 1e-308)
            .collect();
        for rate in [8.0, 64.0] {
            let theirs = reference_encode(&src, &shape, rate);
            let mut ours = vec![0u8; theirs.len()];
            encode(&src, &shape, rate, &mut ours).unwrap();
            assert_eq!(ours, theirs, "scale {scale} rate {rate}");
        }
    }
}

fn encode_vec<T: CodecFloat>(src: &[T], shape: &[usize], rate: f64) -> Vec<u8> {
    let mut out = vec![0u8; compressed_bytes(shape, rate).unwrap()];
    encode(src, shape, rate, &mut out).unwrap();
    out
}

#[test]
fn codec_slabs_are_independent_byte_ranges() {
    for (shape, rate) in [
        (&[13usize, 6, 9][..], 8.0),
        (&[13, 6, 9], 13.0),
        (&[16, 5, 4], 24.0),
        (&[11, 10], 8.0),
        (&[11, 9], 4.0),
    ] {
        let src = data::<f32>("mixed", shape, 5);
        let whole = encode_vec(&src, shape, rate);
        let slab = slab_bytes(&shape[1..], rate).unwrap();
        let plane: usize = shape[1..].iter().product();
        let n0 = shape[0];
        for j in 0..n0.div_ceil(4) {
            for m in 1..=n0.div_ceil(4) - j {
                let (p0, p1) = (4 * j, (4 * j + 4 * m).min(n0));
                let mut sub_shape = shape.to_vec();
                sub_shape[0] = p1 - p0;
                let part = encode_vec(&src[p0 * plane..p1 * plane], &sub_shape, rate);
                let at = slab * j;
                assert_eq!(
                    part[..],
                    whole[at..at + part.len()],
                    "{shape:?} rate {rate}: planes {p0}..{p1}"
                );
                // And the byte range decodes on its own to the planes of the whole decode.
                let mut back = vec![0f32; (p1 - p0) * plane];
                decode(&whole[at..at + part.len()], &sub_shape, rate, &mut back).unwrap();
                let mut all = vec![0f32; src.len()];
                decode(&whole, shape, rate, &mut all).unwrap();
                assert_eq!(back[..], all[p0 * plane..p1 * plane]);
            }
        }
    }
    // Slab sizes: 3-D integer rates always align; 2-D rate 10 (160-bit blocks) with an odd block
    // count per row does not.
    assert_eq!(slab_bytes(&[6, 9], 8.0).unwrap(), 6 * 512 / 8);
    assert_eq!(slab_bytes(&[], 16.0).unwrap(), 8);
    assert!(matches!(
        slab_bytes(&[9], 10.0),
        Err(CodecError::Zfp(ZfpError::UnalignedSlab { bits: 480, .. }))
    ));
    assert_eq!(slab_bytes(&[8], 10.0).unwrap(), 2 * 160 / 8);
}

#[test]
fn codec_parallel_units_match_one_serial_pass() {
    // Big enough for several parallel units; rates whose slabs are and are not word multiples.
    for (shape, rate) in [
        (&[40usize, 64, 64][..], 16.0),
        (&[40, 64, 60], 9.5),
        (&[300, 700], 6.3),
        (&[300_001], 12.5),
    ] {
        let src = data::<f32>("smooth", shape, 7);
        let g = Grid::from_shape(shape);
        let maxbits = block_bits(rate, shape.len()).unwrap();
        let (planes, _) = split_units(&g, maxbits);
        assert!(planes < shape[0], "{shape:?}: expected several units");
        let par = encode_vec(&src, shape, rate);
        let mut serial = vec![0u8; par.len()];
        encode_serial(&src, &g, maxbits, &mut serial);
        assert_eq!(par, serial, "{shape:?} rate {rate}");
        let mut a = vec![0f32; src.len()];
        decode(&par, shape, rate, &mut a).unwrap();
        let mut b = vec![0f32; src.len()];
        decode_serial(&par, &g, maxbits, &mut b);
        assert_eq!(a, b);
    }
}

#[test]
fn codec_rejects_non_finite_values_before_writing() {
    let shape = [5usize, 6, 7];
    for (at, bad) in [
        (0usize, f64::NAN),
        (17, f64::INFINITY),
        (209, f64::NEG_INFINITY),
    ] {
        let mut src = data::<f64>("smooth", &shape, 1);
        src[at] = bad;
        src[at + 1 - (at == 209) as usize * 2] = f64::NAN;
        let mut out = vec![0x5au8; compressed_bytes(&shape, 8.0).unwrap()];
        let err = encode(&src, &shape, 8.0, &mut out).unwrap_err();
        let first = if at == 209 { 208 } else { at };
        assert!(
            matches!(err, CodecError::Zfp(ZfpError::NonFinite { index }) if index == first),
            "{err}"
        );
        assert!(err.to_string().contains("NaN or infinite"));
        assert!(out.iter().all(|&b| b == 0x5a), "wrote before rejecting");
    }
    let src = [1.0f32, f32::NAN, 2.0];
    let mut out = vec![0u8; compressed_bytes(&[3], 16.0).unwrap()];
    assert!(matches!(
        encode(&src, &[3], 16.0, &mut out),
        Err(CodecError::Zfp(ZfpError::NonFinite { index: 1 }))
    ));
}

#[test]
fn codec_validates_rates_shapes_and_buffers() {
    assert_eq!(block_bits(8.0, 3).unwrap(), 512);
    assert_eq!(block_bits(12.0, 2).unwrap(), 192);
    assert_eq!(block_bits(5.3, 1).unwrap(), 21); // floor(21.2 + 0.5)
    assert_eq!(block_bits(0.1875, 3).unwrap(), 12);
    assert_eq!(block_bits(2.6, 2).unwrap(), 42); // floor(41.6 + 0.5)
    for (rate, dims) in [
        (0.0, 3),
        (-1.0, 2),
        (f64::NAN, 3),
        (f64::INFINITY, 1),
        (2.5, 1), // 10 bits: below the 12-bit f64 header
        (1e6, 3),
    ] {
        let err = block_bits(rate, dims).unwrap_err();
        assert!(
            matches!(err, CodecError::Zfp(ZfpError::BadRate { .. })),
            "{rate}: {err}"
        );
        assert!(err.to_string().contains("bits per block"), "{err}");
    }
    assert!(matches!(
        block_bits(8.0, 4),
        Err(CodecError::BadShape { .. })
    ));
    assert!(matches!(
        compressed_bytes(&[2, 2, 2, 2], 8.0),
        Err(CodecError::BadShape { .. })
    ));
    assert!(matches!(
        compressed_bytes(&[], 8.0),
        Err(CodecError::BadShape { .. })
    ));
    assert!(matches!(
        compressed_bytes(&[usize::MAX, usize::MAX], 8.0),
        Err(CodecError::BadShape { .. })
    ));
    // Whole words: 7 values in 1-D at rate 3 are 2 blocks of 12 bits, one word.
    assert_eq!(compressed_bytes(&[7], 3.0).unwrap(), 8);
    assert_eq!(compressed_bytes(&[9, 5, 11], 8.0).unwrap(), 3 * 2 * 3 * 64);
    assert_eq!(compressed_bytes(&[0, 5], 8.0).unwrap(), 0);
    let src = vec![1.0f32; 12];
    let mut out = vec![0u8; 64];
    assert!(matches!(
        encode(&src, &[3, 5], 8.0, &mut out),
        Err(CodecError::ShapeMismatch {
            what: "the array",
            ..
        })
    ));
    assert!(matches!(
        encode(&src, &[3, 4], 8.0, &mut out),
        Err(CodecError::ShapeMismatch {
            what: "the stream buffer",
            ..
        })
    ));
    let mut back = vec![0f32; 12];
    assert!(matches!(
        decode(&out[..8], &[3, 4], 8.0, &mut back),
        Err(CodecError::ShapeMismatch { .. })
    ));
    // Empty arrays are a no-op.
    encode::<f64>(&[], &[0, 3], 8.0, &mut []).unwrap();
    decode::<f64>(&[], &[4, 0, 3], 8.0, &mut []).unwrap();
}

#[test]
fn codec_decodes_arbitrary_bytes_without_panicking() {
    let mut rng = Rng(12345);
    for shape in [&[13usize][..], &[6, 7], &[5, 6, 7]] {
        for rate in [3.0, 8.0, 16.0, 64.0] {
            let len = compressed_bytes(shape, rate).unwrap();
            let junk: Vec<u8> = (0..len).map(|_| (rng.unit() * 256.0) as u8).collect();
            let n: usize = shape.iter().product();
            let mut a = vec![0f32; n];
            decode(&junk, shape, rate, &mut a).unwrap();
            let mut b = vec![0f64; n];
            decode(&junk, shape, rate, &mut b).unwrap();
        }
    }
}

#[test]
fn codec_round_trip_error_at_rate_16_is_small() {
    // Smooth 3-D f32 field at 16 bits/value (2x compression): measured relative L2 error
    // 1.3e-7 with waves of 6 to 8 points per wavelength (the bound asserted is 1e-3).
    let shape = [32usize, 48, 40];
    let src: Vec<f32> = (0..shape.iter().product::<usize>())
        .map(|i| {
            let (z, y, x) = (i / (48 * 40), i / 40 % 48, i % 40);
            let (z, y, x) = (z as f32 / 32.0, y as f32 / 48.0, x as f32 / 40.0);
            (40.0 * x).sin() * (25.0 * y).cos() + (3.0 * z + x * y).exp() * 0.25 + (30.0 * z).sin()
        })
        .collect();
    let stream = encode_vec(&src, &shape, 16.0);
    let mut back = vec![0f32; src.len()];
    decode(&stream, &shape, 16.0, &mut back).unwrap();
    let (mut num, mut den) = (0f64, 0f64);
    for (a, b) in src.iter().zip(&back) {
        num += ((a - b) as f64).powi(2);
        den += (*a as f64).powi(2);
    }
    let rel = (num / den).sqrt();
    eprintln!("rate 16 relative L2 error: {rel:.3e}");
    assert!(rel < 1e-3, "relative L2 error {rel}");
}
