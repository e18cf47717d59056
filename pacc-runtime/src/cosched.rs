//! Co-scheduling the codec beside the stencil: how many thread blocks the encode and decode
//! kernels get while the stencil kernels of other chunks run on their own streams.
//!
//! The two kinds of kernel want different things from an SM. The stencil is memory-bound: once
//! enough of its warps are resident to keep HBM busy, more SM time does not make it faster. The
//! zfp codec is compute-bound (bit-plane coding in registers). Launched with one thread per
//! codec unit, as before, an encode of a chunk floods every SM with blocks, and the block
//! scheduler, which knows nothing of either, lets it crowd out the stencil's next launch. The
//! codec kernels stride over their units, so any grid codes everything; this module chooses the
//! grid:
//!
//! * [`CoSchedule::Queue`]: one thread per unit, the vendor's default sharing (the baseline).
//! * [`CoSchedule::Sized`]: concurrent-kernel sizing after Li, Tu and Zeng (2019): each kernel's
//!   grid follows from its per-block resource use so that the kernels sharing the GPU fit
//!   together. The stencil keeps the blocks per SM it reaches alone (its occupancy), and the
//!   codec gets, on every SM, the blocks that fit in the threads, registers, shared memory and
//!   block slots left over (at least one).
//! * [`CoSchedule::Priority`]: the full grid on low-priority streams, the stencil's kernel
//!   streams at high priority: the block scheduler dispatches pending stencil blocks first and
//!   the codec's blocks take what is left, so the sharing follows the stencil's demand as it
//!   changes (between launches, at a launch's tail) instead of a fixed split.
//! * [`CoSchedule::Partition`]: SM partitioning after Slate (Allen, Feng and Ge 2019): the codec
//!   gets a share of the SMs at its own full occupancy. The hardware places the blocks, so this
//!   bounds the codec's share of the GPU rather than pinning it to given SMs, which Slate does
//!   with its own runtime.
//!
//! Pure arithmetic over figures the executor reads from the driver (function attributes and
//! the occupancy calculator), so it is tested on the CPU.

use crate::error::Error;

/// What one SM of the device holds at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmLimits {
    pub sms: u32,
    pub threads: u32,
    pub registers: u32,
    pub shared_bytes: u32,
    pub blocks: u32,
}

impl SmLimits {
    /// The H100 SXM's figures (132 SMs; per SM 2048 threads, 64 Ki registers, 228 KiB of shared
    /// memory, 32 blocks), for the model's tests and `--plan-only` style predictions.
    pub const H100: SmLimits = SmLimits {
        sms: 132,
        threads: 2048,
        registers: 65536,
        shared_bytes: 233472,
        blocks: 32,
    };
}

/// What one thread block of a kernel takes from an SM.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    pub threads: u32,
    /// Registers per thread.
    pub registers: u32,
    pub shared_bytes: u32,
}

/// Registers are allocated per warp in units of 256.
const REGISTER_UNIT: u32 = 256;

impl Footprint {
    /// Registers one block holds, as the SM allocates them (per warp, rounded up).
    fn block_registers(&self) -> u32 {
        let per_warp = (self.registers * 32).div_ceil(REGISTER_UNIT) * REGISTER_UNIT;
        self.threads.div_ceil(32) * per_warp
    }

    /// Blocks of this kernel that fit in `free` (threads, registers, shared memory and block
    /// slots of one SM).
    fn fit(&self, free: &SmLimits) -> u32 {
        let by = |have: u32, need: u32| have.checked_div(need).unwrap_or(u32::MAX);
        by(free.threads, self.threads)
            .min(by(free.registers, self.block_registers()))
            .min(by(free.shared_bytes, self.shared_bytes))
            .min(free.blocks)
    }

    /// `sm` less `blocks` of these blocks (saturating at 0).
    fn leave(&self, sm: &SmLimits, blocks: u32) -> SmLimits {
        SmLimits {
            sms: sm.sms,
            threads: sm.threads.saturating_sub(blocks * self.threads),
            registers: sm.registers.saturating_sub(blocks * self.block_registers()),
            shared_bytes: sm.shared_bytes.saturating_sub(blocks * self.shared_bytes),
            blocks: sm.blocks.saturating_sub(blocks),
        }
    }
}

/// How the codec's grid is sized (`PACC_CODEC_GRID`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum CoSchedule {
    /// One thread per codec unit: the grid covers the chunk, as before.
    Queue,
    /// The blocks that fit beside the stencil's resident blocks on every SM.
    Sized,
    /// This share of the SMs (0 < share <= 1) at the codec's own occupancy.
    Partition(f64),
    /// One thread per unit on streams the block scheduler serves after the stencil's: the
    /// default, the best on the H100 (`benches/results/2026-11-26-h100-compression`).
    #[default]
    Priority,
}

/// The SM share [`CoSchedule::Partition`] takes when none is given.
pub const DEFAULT_SHARE: f64 = 0.25;

impl std::str::FromStr for CoSchedule {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || {
            Error::Option(format!(
                "unknown codec grid `{s}`; expected queue, sized, priority, or partition[:SHARE] with 0 < SHARE <= 1"
            ))
        };
        match s.split_once(':') {
            None if s == "queue" => Ok(CoSchedule::Queue),
            None if s == "sized" => Ok(CoSchedule::Sized),
            None if s == "priority" => Ok(CoSchedule::Priority),
            None if s == "partition" => Ok(CoSchedule::Partition(DEFAULT_SHARE)),
            Some(("partition", v)) => match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x <= 1.0 => Ok(CoSchedule::Partition(x)),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }
}

impl std::fmt::Display for CoSchedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CoSchedule::Queue => write!(f, "queue"),
            CoSchedule::Sized => write!(f, "sized"),
            CoSchedule::Priority => write!(f, "priority"),
            CoSchedule::Partition(s) => write!(f, "partition:{s}"),
        }
    }
}

/// The codec grid of one kernel: blocks per SM and the reason, for the report.
#[derive(Clone, Debug, PartialEq)]
pub struct CodecGrid {
    /// Thread blocks to launch (before capping by the units of a launch).
    pub blocks: u32,
    pub strategy: CoSchedule,
    pub reason: String,
}

impl CodecGrid {
    /// Blocks of `threads` threads for a launch over `units` units: the sized grid, never more
    /// than the units need (`Queue`: exactly what they need).
    pub fn blocks_for(&self, units: usize, threads: u32) -> u32 {
        let need = units
            .div_ceil(threads.max(1) as usize)
            .min(u32::MAX as usize) as u32;
        match self.strategy {
            CoSchedule::Queue | CoSchedule::Priority => need,
            _ => need.min(self.blocks.max(1)),
        }
    }
}

/// The codec's grid under `strategy`: `stencil` runs `stencil_blocks` blocks per SM (its
/// occupancy alone), the codec's blocks have footprint `codec`.
pub fn codec_grid(
    strategy: CoSchedule,
    sm: &SmLimits,
    stencil: &Footprint,
    stencil_blocks: u32,
    codec: &Footprint,
) -> CodecGrid {
    let alone = codec.fit(sm).max(1);
    let (per_sm, sms, reason) = match strategy {
        CoSchedule::Queue => (
            alone,
            sm.sms,
            "one thread per unit (the vendor's sharing)".into(),
        ),
        CoSchedule::Priority => (
            alone,
            sm.sms,
            "one thread per unit, on streams served after the stencil's".into(),
        ),
        CoSchedule::Sized => {
            let free = stencil.leave(sm, stencil_blocks);
            let fit = codec.fit(&free);
            let why = format!(
                "{} codec blocks per SM fit beside the stencil's {stencil_blocks} ({} threads, {} registers left of {}, {})",
                fit.max(1),
                free.threads,
                free.registers,
                sm.threads,
                sm.registers
            );
            (fit.max(1), sm.sms, why)
        }
        CoSchedule::Partition(share) => {
            let sms = ((share * sm.sms as f64).ceil() as u32).clamp(1, sm.sms);
            let why = format!(
                "{sms} of {} SMs at the codec's {alone} blocks per SM",
                sm.sms
            );
            (alone, sms, why)
        }
    };
    CodecGrid {
        blocks: per_sm * sms,
        strategy,
        reason: format!("codec grid {strategy}: {} blocks; {reason}", per_sm * sms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STENCIL: Footprint = Footprint {
        threads: 256,
        registers: 64,
        shared_bytes: 0,
    };
    const ZFP: Footprint = Footprint {
        threads: 128,
        registers: 96,
        shared_bytes: 0,
    };

    #[test]
    fn sized_grid_fills_what_the_stencil_leaves() {
        // Stencil: 4 blocks x 256 threads x 64 registers = 64 Ki registers: the SM's registers
        // are gone, so the codec gets the minimum of one block per SM.
        let g = codec_grid(CoSchedule::Sized, &SmLimits::H100, &STENCIL, 4, &ZFP);
        assert_eq!(g.blocks, 132);
        // At 2 stencil blocks half the registers are free: 32 Ki / (4 warps x 3072) = 2 blocks.
        let g = codec_grid(CoSchedule::Sized, &SmLimits::H100, &STENCIL, 2, &ZFP);
        assert_eq!(g.blocks, 2 * 132);
        assert!(g.reason.contains("2 codec blocks per SM"), "{}", g.reason);
    }

    #[test]
    fn shared_memory_and_block_slots_bound_the_fit() {
        let big = Footprint {
            shared_bytes: 100 * 1024,
            ..STENCIL
        };
        let codec = Footprint {
            shared_bytes: 64 * 1024,
            threads: 32,
            registers: 16,
        };
        // 228 KiB - 2 x 100 KiB = 28 KiB: no 64 KiB codec block fits; one anyway.
        let g = codec_grid(CoSchedule::Sized, &SmLimits::H100, &big, 2, &codec);
        assert_eq!(g.blocks, 132);
        let tiny = Footprint {
            threads: 32,
            registers: 8,
            shared_bytes: 0,
        };
        // Alone, 32 block slots bound a tiny kernel before threads or registers do.
        let g = codec_grid(CoSchedule::Queue, &SmLimits::H100, &STENCIL, 0, &tiny);
        assert_eq!(g.blocks, 32 * 132);
    }

    #[test]
    fn partition_takes_a_share_of_the_sms_at_full_occupancy() {
        // ZFP alone: 64 Ki / (4 x 3072) = 5 blocks per SM.
        let g = codec_grid(
            CoSchedule::Partition(0.25),
            &SmLimits::H100,
            &STENCIL,
            4,
            &ZFP,
        );
        assert_eq!(g.blocks, 33 * 5);
        assert!(g.reason.contains("33 of 132 SMs"), "{}", g.reason);
    }

    #[test]
    fn launches_never_exceed_the_units() {
        let g = codec_grid(CoSchedule::Sized, &SmLimits::H100, &STENCIL, 2, &ZFP);
        assert_eq!(g.blocks_for(1000, 128), 8);
        assert_eq!(g.blocks_for(10_000_000, 128), 264);
        for all in [CoSchedule::Queue, CoSchedule::Priority] {
            let q = codec_grid(all, &SmLimits::H100, &STENCIL, 2, &ZFP);
            assert_eq!(q.blocks_for(10_000_000, 128), 78125, "{all}");
        }
    }

    #[test]
    fn strategies_parse_and_refuse_bad_shares() {
        assert_eq!("queue".parse::<CoSchedule>().unwrap(), CoSchedule::Queue);
        assert_eq!("sized".parse::<CoSchedule>().unwrap(), CoSchedule::Sized);
        assert_eq!(
            "priority".parse::<CoSchedule>().unwrap(),
            CoSchedule::Priority
        );
        assert_eq!(
            "partition".parse::<CoSchedule>().unwrap(),
            CoSchedule::Partition(DEFAULT_SHARE)
        );
        assert_eq!(
            "partition:0.5".parse::<CoSchedule>().unwrap(),
            CoSchedule::Partition(0.5)
        );
        for bad in [
            "partition:0",
            "partition:1.5",
            "partition:x",
            "fast",
            "sized:1",
        ] {
            let e = bad.parse::<CoSchedule>().unwrap_err().to_string();
            assert!(e.contains("expected queue, sized"), "{bad}: {e}");
        }
    }
}
