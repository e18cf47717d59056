//! Transfers: how planes move between host arrays and device buffers (one axis of a
//! [`super::Scheme`]; the tiling is the other). Callers ask a property, named for why they care,
//! and never which transfers a scheme has: a new kind of transfers is a variant here and its row
//! in [`Transfers::properties`].

use serde::{Deserialize, Serialize};

/// How planes move between host arrays and device buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Transfers {
    /// Through pinned staging buffers on the host.
    Staged,
    /// Straight between the user's arrays and the device, every chunk its own halos.
    Direct,
    /// Direct, and the planes consecutive chunks have in common are copied on the device.
    Shared,
}

/// What the planner, the tuner and the executors need to know about a kind of transfers.
#[derive(Clone, Copy)]
struct Properties {
    staging: bool,
    sharing: bool,
    pins: bool,
    compresses: bool,
}

impl Transfers {
    const fn properties(self) -> Properties {
        match self {
            Transfers::Staged => Properties {
                staging: true,
                sharing: false,
                pins: false,
                compresses: false,
            },
            Transfers::Direct => Properties {
                staging: false,
                sharing: false,
                pins: true,
                compresses: true,
            },
            Transfers::Shared => Properties {
                staging: false,
                sharing: true,
                pins: true,
                compresses: true,
            },
        }
    }

    /// Whether planes pass through pinned host staging buffers: the plan copies them in and out
    /// on the host (`StageIn`, `StageOut`), which costs host copy time and pinned host memory.
    pub const fn stages_through_pinned_buffers(self) -> bool {
        self.properties().staging
    }

    /// Whether a chunk receives the planes it has in common with the previous chunk from that
    /// chunk's buffer on the device instead of from the host.
    pub const fn shares_regions(self) -> bool {
        self.properties().sharing
    }

    /// Whether the user's arrays themselves cross the link, so the executor page-locks them.
    pub const fn pins_user_arrays(self) -> bool {
        self.properties().pins
    }

    /// Whether arrays can be kept compressed on the host between blocks (compressed transfers
    /// move the host's compressed copy; staging buffers hold raw planes).
    pub const fn can_compress(self) -> bool {
        self.properties().compresses
    }
}
