//! The schemes users choose, registered in one table: each is a name, a tiling (which planes
//! each chunk computes) and transfers (how planes move between host and device). The list of
//! schemes, their names, the ones the tuner weighs by itself, the parse error and every message
//! that lists schemes come from [`REGISTERED`]; what a scheme does comes from its tiling and its
//! transfers, never from matching on the scheme.

use super::tiling::{Overlapped, Tiling, Wavefront};
use super::transfers::Transfers;
use serde::{Deserialize, Serialize};

/// What a run does: a tiling and a transfer scheme, named as users choose them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[warn(missing_docs)]
pub enum Scheme {
    /// PACC's original scheme: user arrays are copied through pinned staging buffers.
    StagedCopy,
    /// Each chunk, with its halos, moves straight between the user's (page-locked) arrays and
    /// the device.
    DirectMap,
    /// Direct mapping plus sharing: the planes two consecutive chunks have in common are copied
    /// on the device, so each array crosses the link once per block.
    RegionSharing,
    /// Wavefront tiling with shared transfers: skewed windows compute every point of every step
    /// once, the boundary staircase is copied on the device, so each array crosses the link once
    /// per block and blocks do not drain the pipeline.
    Wavefront,
}

/// One registered scheme.
struct Registration {
    scheme: Scheme,
    name: &'static str,
    tiling: &'static dyn Tiling,
    transfers: Transfers,
    /// Whether the tuner weighs it when the call names no scheme.
    tuned: bool,
}

/// Every scheme, in the order of the enum (checked below), which is the order users see them
/// listed and the tuner weighs them in. Staged copy and direct mapping move more bytes for the
/// same kernels than region sharing, so the tuner leaves them to callers who name them.
const REGISTERED: &[Registration] = &[
    Registration {
        scheme: Scheme::StagedCopy,
        name: "staged-copy",
        tiling: &Overlapped,
        transfers: Transfers::Staged,
        tuned: false,
    },
    Registration {
        scheme: Scheme::DirectMap,
        name: "direct-map",
        tiling: &Overlapped,
        transfers: Transfers::Direct,
        tuned: false,
    },
    Registration {
        scheme: Scheme::RegionSharing,
        name: "region-sharing",
        tiling: &Overlapped,
        transfers: Transfers::Shared,
        tuned: true,
    },
    Registration {
        scheme: Scheme::Wavefront,
        name: "wavefront",
        tiling: &Wavefront,
        transfers: Transfers::Shared,
        tuned: true,
    },
];

// The table is indexed by the enum's discriminant.
const _: () = {
    let mut i = 0;
    while i < REGISTERED.len() {
        assert!(
            REGISTERED[i].scheme as usize == i,
            "REGISTERED is out of order"
        );
        i += 1;
    }
};

const fn tuned_count() -> usize {
    let (mut n, mut i) = (0, 0);
    while i < REGISTERED.len() {
        n += REGISTERED[i].tuned as usize;
        i += 1;
    }
    n
}

impl Scheme {
    /// Every registered scheme.
    pub const ALL: [Scheme; REGISTERED.len()] = {
        let mut all = [Scheme::DEFAULT; REGISTERED.len()];
        let mut i = 0;
        while i < REGISTERED.len() {
            all[i] = REGISTERED[i].scheme;
            i += 1;
        }
        all
    };

    /// The schemes the tuner compares when the call names none, in registration order (the
    /// earlier wins a tie).
    pub const TUNED: [Scheme; tuned_count()] = {
        let mut tuned = [Scheme::DEFAULT; tuned_count()];
        let (mut i, mut j) = (0, 0);
        while i < REGISTERED.len() {
            if REGISTERED[i].tuned {
                tuned[j] = REGISTERED[i].scheme;
                j += 1;
            }
            i += 1;
        }
        tuned
    };

    /// The scheme of a call that names none and is not tuned.
    pub const DEFAULT: Scheme = Scheme::RegionSharing;

    /// The scheme a run is re-planned with when the user's arrays cannot be page-locked: the
    /// first registered one whose transfers do not need them page-locked.
    pub const WHEN_PINNING_FAILS: Scheme = {
        let mut i = 0;
        while REGISTERED[i].transfers.pins_user_arrays() {
            i += 1;
        }
        REGISTERED[i].scheme
    };

    const fn registration(self) -> &'static Registration {
        &REGISTERED[self as usize]
    }

    pub const fn name(self) -> &'static str {
        self.registration().name
    }

    /// Which planes each chunk computes.
    pub const fn tiling(self) -> &'static dyn Tiling {
        self.registration().tiling
    }

    /// How planes move between host and device.
    pub const fn transfers(self) -> Transfers {
        self.registration().transfers
    }

    /// Buffer sets the chunks cycle through by default ([`Tiling::buffer_sets`]).
    pub fn buffer_sets(self) -> usize {
        self.tiling().buffer_sets()
    }

    /// The fewest buffer sets a plan of `blocks` blocks may take when the default ones do not
    /// fit ([`Tiling::fewest_buffer_sets`]).
    pub fn fewest_buffer_sets(self, blocks: usize) -> usize {
        self.tiling().fewest_buffer_sets(blocks)
    }

    /// The names of the registered schemes that pass `keep`, listed as in a sentence
    /// (`a, b or c`).
    pub fn names_where(keep: impl Fn(Scheme) -> bool) -> String {
        crate::words::sentence_list(
            (Scheme::ALL.into_iter())
                .filter(|&s| keep(s))
                .map(Scheme::name),
        )
    }

    /// Each scheme's default buffer sets, grouped: `3 for a and b, 4 for c`.
    pub fn buffer_sets_by_scheme() -> String {
        let mut sets: Vec<usize> = Vec::new();
        for n in Scheme::ALL.map(Scheme::buffer_sets) {
            if !sets.contains(&n) {
                sets.push(n);
            }
        }
        let groups: Vec<String> = (sets.iter())
            .map(|&n| {
                let names = Scheme::names_where(|s| s.buffer_sets() == n).replace(" or ", " and ");
                format!("{n} for {names}")
            })
            .collect();
        groups.join(", ")
    }
}

impl Default for Scheme {
    fn default() -> Self {
        Scheme::DEFAULT
    }
}

impl std::str::FromStr for Scheme {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        (Scheme::ALL.into_iter())
            .find(|x| x.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown scheme `{s}`; expected {}",
                    Scheme::names_where(|_| true)
                )
            })
    }
}

impl std::fmt::Display for Scheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_gives_the_lists_and_messages() {
        assert_eq!(
            "wavefront".parse::<Scheme>(),
            Ok(Scheme::Wavefront),
            "names parse back"
        );
        assert_eq!(
            "tiled".parse::<Scheme>(),
            Err(
                "unknown scheme `tiled`; expected staged-copy, direct-map, region-sharing or \
                 wavefront"
                    .to_string()
            )
        );
        assert_eq!(Scheme::TUNED, [Scheme::RegionSharing, Scheme::Wavefront]);
        assert_eq!(Scheme::WHEN_PINNING_FAILS, Scheme::StagedCopy);
        assert_eq!(Scheme::default(), Scheme::RegionSharing);
        assert_eq!(
            Scheme::buffer_sets_by_scheme(),
            "3 for staged-copy, direct-map and region-sharing, 4 for wavefront"
        );
        assert_eq!(
            Scheme::names_where(|s| s.transfers().can_compress()),
            "direct-map, region-sharing or wavefront"
        );
    }
}
