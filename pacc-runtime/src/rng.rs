//! Small seeded generators: the noise of the models' and examples' initial fields, the shuffled
//! executor's orders, and the data of the tests.
//!
//! None of them is cryptographic or statistically strong; they exist so that one seed gives the
//! same values on every machine and in every release, without a dependency. Examples, models and
//! tests compare against data they draw, so changing any sequence here changes what they check.
//! The four algorithms are kept apart because their callers' recorded sequences differ:
//!
//! - [`SplitMix64`] and its stateless form [`splitmix64`]/[`hash`] (Steele, Lea and Flood's
//!   splitmix64): the models' noise, the shuffled executor, the runtime's and the MPI tests;
//! - [`Lcg64`], Knuth's MMIX linear congruential generator: the root crate's comparison tests;
//! - [`XorShift64Star`] (Marsaglia's xorshift with Vigna's multiplier): the codec's tests;
//! - [`XorShift64`], plain 13/7/17 xorshift: the codec's CUDA-on-CPU tests.

/// The 64-bit golden ratio, splitmix64's increment (and the seed spreader of [`hash`]).
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// splitmix64's output function applied to `x + GOLDEN`: a stateless hash of `x`, equal to
/// `SplitMix64(x).next_u64()`.
pub const fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GOLDEN);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Point `index` of the noise field `seed`: independent bits for every (seed, index) pair, so a
/// field can be filled in any order or in parallel.
pub const fn hash(seed: u64, index: u64) -> u64 {
    splitmix64(index ^ seed.wrapping_mul(GOLDEN))
}

/// The top 53 bits of `bits` as a value in `[0, 1)`.
pub fn unit_f64(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// The top 24 bits of `bits` as a value in `[0, 1)`.
pub fn unit_f32(bits: u64) -> f32 {
    (bits >> 40) as f32 / (1u64 << 24) as f32
}

/// The splitmix64 sequence of the state it holds (the seed).
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        let x = self.0;
        self.0 = x.wrapping_add(GOLDEN);
        splitmix64(x)
    }
    /// In `0..n` (`n > 0`; modulo bias is no concern at the sizes tests pick from).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// In `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    /// In `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        unit_f64(self.next_u64())
    }
    /// In `[-1, 1)`.
    pub fn signed_unit(&mut self) -> f64 {
        // Scaling by 2 is exact: the same value as the 53 bits over 2^52, minus 1.
        2.0 * self.unit() - 1.0
    }
}

/// Knuth's MMIX linear congruential generator; each step's state is its output.
#[derive(Clone, Debug)]
pub struct Lcg64(pub u64);

impl Lcg64 {
    pub const MULTIPLIER: u64 = 6_364_136_223_846_793_005;
    pub const INCREMENT: u64 = 1_442_695_040_888_963_407;

    /// The generator one step past `seed` (the state `seed * MULTIPLIER + INCREMENT`).
    pub fn new(seed: u64) -> Self {
        let mut g = Lcg64(seed);
        g.next_u64();
        g
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(Self::MULTIPLIER)
            .wrapping_add(Self::INCREMENT);
        self.0
    }
    /// In `[lo, hi)`, from the top 24 bits of the next state.
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * unit_f32(self.next_u64())
    }
}

/// Marsaglia's xorshift64 (shifts 12, 25, 27) with Vigna's output multiplier (xorshift64*). The
/// state must not be 0.
#[derive(Clone, Debug)]
pub struct XorShift64Star(pub u64);

impl XorShift64Star {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// In `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        unit_f64(self.next_u64())
    }
}

/// Marsaglia's xorshift64 (shifts 13, 7, 17); each step's state is its output. The state must
/// not be 0.
#[derive(Clone, Debug)]
pub struct XorShift64(pub u64);

impl XorShift64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// In `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        unit_f64(self.next_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs of each generator, as the copies it replaced produced them: the data
    /// of every test and example that draws from here depends on these staying put.
    #[test]
    fn sequences_are_fixed() {
        let mut s = SplitMix64(0);
        let first = [
            0xe220_a839_7b1d_cdaf,
            0x6e78_9e6a_a1b9_65f4,
            0x06c4_5d18_8009_454f,
        ];
        assert_eq!([s.next_u64(), s.next_u64(), s.next_u64()], first);
        assert_eq!(splitmix64(0), first[0]);
        assert_eq!(splitmix64(GOLDEN), first[1]);
        assert_eq!(hash(0, 0), first[0]);
        assert_eq!(hash(1, 0), first[1]);
        let mut l = Lcg64::new(1);
        let first = [
            0x8268_86b3_864a_1b1b,
            0xa5fa_e199_2097_aa0e,
            0x6203_55cd_1193_57c5,
        ];
        assert_eq!([l.next_u64(), l.next_u64(), l.next_u64()], first);
        let mut x = XorShift64Star(1);
        let first = [
            0x47e4_ce4b_896c_dd1d,
            0xabcf_a6a8_e079_651d,
            0xb9d1_0d8f_eb73_1f57,
        ];
        assert_eq!([x.next_u64(), x.next_u64(), x.next_u64()], first);
        let mut x = XorShift64(1);
        let first = [0x4082_2041, 0x1000_4106_0c01_1441, 0x9b1e_842f_6e86_2629];
        assert_eq!([x.next_u64(), x.next_u64(), x.next_u64()], first);
    }

    #[test]
    fn units_are_in_range_and_signed_unit_is_the_old_formula() {
        let mut s = SplitMix64(42);
        for _ in 0..1000 {
            let mut t = s.clone();
            let u = s.signed_unit();
            assert_eq!(
                u.to_bits(),
                ((t.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0).to_bits()
            );
            assert!((-1.0..1.0).contains(&u));
        }
        let mut x = XorShift64Star(1);
        let mut y = XorShift64(1);
        let mut l = Lcg64::new(9);
        for _ in 0..1000 {
            assert!((0.0..1.0).contains(&x.unit()));
            assert!((0.0..1.0).contains(&y.unit()));
            assert!((-2.0..3.0).contains(&l.uniform(-2.0, 3.0)));
        }
    }
}
