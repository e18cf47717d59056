//! zfp's bit stream: 64-bit words, filled from the least significant bit up, stored little-endian.
//!
//! zfp (default build, `stream_word_bits = 64`) appends bits to a 64-bit buffer starting at the
//! LSB and writes the buffer to memory as a native word when it is full. On the little-endian
//! machines zfp targets, that is `u64::to_le_bytes`, which is what we write, so the byte stream is
//! the same on any host. Reading and writing past the end of the slice never panics: writes are
//! dropped and reads yield zeros (callers size their buffers so that this never happens).

/// Appends bits to a byte slice whose length is a whole number of 64-bit words.
pub struct BitWriter<'a> {
    out: &'a mut [u8],
    /// Index of the next word to store.
    word: usize,
    /// Pending bits, `bits` of them, in the low end.
    buf: u64,
    bits: u32,
}

impl<'a> BitWriter<'a> {
    pub fn new(out: &'a mut [u8]) -> Self {
        Self {
            out,
            word: 0,
            buf: 0,
            bits: 0,
        }
    }

    #[inline(always)]
    fn store(&mut self, w: u64) {
        let at = self.word * 8;
        if let Some(dst) = self.out.get_mut(at..at + 8) {
            dst.copy_from_slice(&w.to_le_bytes());
        }
        self.word += 1;
    }

    /// Writes the low `n` (≤ 64) bits of `value`; returns `value >> n` as zfp's
    /// `stream_write_bits` does (the group-test coder consumes the rest of a bit plane).
    #[inline(always)]
    pub fn write_bits(&mut self, value: u64, n: u32) -> u64 {
        if n == 0 {
            return value;
        }
        let v = if n >= 64 {
            value
        } else {
            value & ((1u64 << n) - 1)
        };
        self.buf |= v << self.bits;
        self.bits += n;
        if self.bits >= 64 {
            self.bits -= 64;
            let full = self.buf;
            self.store(full);
            // The bits of `v` that did not fit: the top `self.bits` of its `n`.
            self.buf = if self.bits == 0 {
                0
            } else {
                v >> (n - self.bits)
            };
        }
        if n >= 64 {
            0
        } else {
            value >> n
        }
    }

    #[inline(always)]
    pub fn write_bit(&mut self, bit: bool) -> bool {
        self.buf |= (bit as u64) << self.bits;
        self.bits += 1;
        if self.bits == 64 {
            let full = self.buf;
            self.store(full);
            self.buf = 0;
            self.bits = 0;
        }
        bit
    }

    /// Writes `n` zero bits (zfp's `stream_pad`).
    pub fn pad(&mut self, mut n: usize) {
        while n > 0 {
            let m = n.min(64) as u32;
            self.write_bits(0, m);
            n -= m as usize;
        }
    }

    /// Stores a partially filled word, zero-padded (zfp's `stream_flush`).
    pub fn flush(&mut self) {
        if self.bits > 0 {
            let full = self.buf;
            self.store(full);
            self.buf = 0;
            self.bits = 0;
        }
    }
}

/// Reads bits from a byte slice of 64-bit little-endian words.
pub struct BitReader<'a> {
    src: &'a [u8],
    /// Index of the next word to load.
    word: usize,
    /// Unread bits, `bits` of them, in the low end.
    buf: u64,
    bits: u32,
}

impl<'a> BitReader<'a> {
    pub fn new(src: &'a [u8]) -> Self {
        Self {
            src,
            word: 0,
            buf: 0,
            bits: 0,
        }
    }

    #[inline(always)]
    fn load(&mut self) -> u64 {
        let at = self.word * 8;
        self.word += 1;
        match self.src.get(at..at + 8) {
            Some(b) => {
                let mut w = [0u8; 8];
                w.copy_from_slice(b);
                u64::from_le_bytes(w)
            }
            None => 0,
        }
    }

    /// Bit offset of the next bit to be read.
    pub fn position(&self) -> usize {
        self.word * 64 - self.bits as usize
    }

    /// Positions the reader at bit `offset` (zfp's `stream_rseek`).
    pub fn seek(&mut self, offset: usize) {
        self.word = offset / 64;
        let r = (offset % 64) as u32;
        if r == 0 {
            self.buf = 0;
            self.bits = 0;
        } else {
            self.buf = self.load() >> r;
            self.bits = 64 - r;
        }
    }

    #[inline(always)]
    pub fn read_bit(&mut self) -> bool {
        if self.bits == 0 {
            self.buf = self.load();
            self.bits = 64;
        }
        let b = self.buf & 1 != 0;
        self.buf >>= 1;
        self.bits -= 1;
        b
    }

    /// Reads `n` (≤ 64) bits, the first read landing in the LSB.
    #[inline(always)]
    pub fn read_bits(&mut self, n: u32) -> u64 {
        if n == 0 {
            return 0;
        }
        let n = n.min(64);
        if self.bits >= n {
            let v = if n == 64 {
                self.buf
            } else {
                self.buf & ((1u64 << n) - 1)
            };
            self.buf = if n == 64 { 0 } else { self.buf >> n };
            self.bits -= n;
            v
        } else {
            let w = self.load();
            // self.bits < n ≤ 64, so the shift is in range.
            let v = self.buf | (w << self.bits);
            let used = n - self.bits;
            self.buf = if used == 64 { 0 } else { w >> used };
            self.bits = 64 - used;
            if n == 64 {
                v
            } else {
                v & ((1u64 << n) - 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip_across_word_boundaries() {
        let mut buf = vec![0u8; 64];
        let items: Vec<(u64, u32)> = (0..40u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15), (i * 7 % 65) as u32))
            .collect();
        let mut w = BitWriter::new(&mut buf);
        let mut total = 0;
        for &(v, n) in &items {
            let rest = w.write_bits(v, n);
            assert_eq!(rest, if n == 64 { 0 } else { v >> n });
            total += n as usize;
            if total > 480 {
                break;
            }
        }
        w.flush();
        let mut r = BitReader::new(&buf);
        let mut total = 0;
        for &(v, n) in &items {
            let mask = if n == 64 { !0 } else { (1u64 << n) - 1 };
            assert_eq!(r.read_bits(n), v & mask);
            total += n as usize;
            assert_eq!(r.position(), total);
            if total > 480 {
                break;
            }
        }
        // LSB first: the first bit written is bit 0 of byte 0.
        let mut one = vec![0u8; 8];
        let mut w = BitWriter::new(&mut one);
        w.write_bit(true);
        w.write_bits(0b10, 2);
        w.flush();
        assert_eq!(one[0], 0b101);
    }
}
