//! The relayed host exchange split in two so that most of it runs beside the next block's
//! pipeline. Each block sweeps its window from the first plane up, so it needs the planes from
//! the rank below at once and those from the rank above only at its end. First, at once, each
//! rank receives from below and sends up (these pairs match: what rank r sends up is what rank
//! r + 1 receives from below). Then the rest starts without waiting, and the block's run waits
//! only where it must, through gates (`exec::Gate`): nothing touches the planes coming from
//! above before they have arrived, and nothing writes the planes going below before they have
//! been read.

use super::nccl::NcclPeers;
use crate::error::Error;
use crate::exec::cuda::Relay;
use crate::exec::{Gate, Peers, Transfer};
use crate::plan::HaloLink;

/// A halo exchange of host arrays in two parts: the part needed first, and the part that may
/// run beside the block (with the gates that make the block wait for it).
pub(super) struct Halves {
    pub first: Vec<Transfer>,
    pub beside: Vec<Transfer>,
    /// Per transfer of `beside`: the array (index among the run's arrays) and the planes it
    /// sends and receives, local.
    gates: Vec<(usize, HaloLink)>,
}

/// Splits the exchange of `arrays` (`(run index, host address of plane 0, bytes per plane)`)
/// over `links` into what is needed first and what may run beside the block.
pub(super) fn halves(me: usize, links: &[HaloLink], arrays: &[(usize, u64, usize)]) -> Halves {
    let mut h = Halves {
        first: Vec::new(),
        beside: Vec::new(),
        gates: Vec::new(),
    };
    for &(a, base, pb) in arrays {
        for l in links {
            let send = Transfer {
                peer: l.peer,
                send: base + (l.send.start * pb) as u64,
                send_bytes: l.send.len() * pb,
                recv: 0,
                recv_bytes: 0,
            };
            let recv = Transfer {
                peer: l.peer,
                send: 0,
                send_bytes: 0,
                recv: base + (l.recv.start * pb) as u64,
                recv_bytes: l.recv.len() * pb,
            };
            let (now, later) = if l.peer < me {
                (recv, send)
            } else {
                (send, recv)
            };
            h.first.push(now);
            h.beside.push(later);
            h.gates.push((a, l.clone()));
        }
    }
    h
}

/// The second half under way, and the carrier the block's run answers to meanwhile.
pub(super) struct Beside<'p> {
    peers: &'p NcclPeers,
    /// Taken by [`Beside::end`].
    relay: Option<Relay>,
    gates: Vec<Gate>,
}

impl<'p> Beside<'p> {
    /// Exchanges the first half, then starts the second.
    ///
    /// # Safety
    /// The transfers' addresses are the rank's host arrays, borrowed until [`Beside::end`],
    /// and the block's run honours the gates.
    pub unsafe fn start(peers: &'p NcclPeers, h: &Halves, me: usize) -> Result<Self, Error> {
        peers.exchange_host(&h.first)?;
        let relay = peers.begin_host(&h.beside)?;
        let (uploaded, arrived) = (relay.uploaded(), relay.arrived());
        let gates = (h.gates.iter())
            .map(|(a, l)| match l.peer < me {
                // Planes going below: written only once read.
                true => Gate {
                    array: *a,
                    planes: l.send.clone(),
                    event: uploaded,
                    writes_only: true,
                },
                // Planes coming from above: touched only once arrived.
                false => Gate {
                    array: *a,
                    planes: l.recv.clone(),
                    event: arrived,
                    writes_only: false,
                },
            })
            .collect();
        Ok(Beside {
            peers,
            relay: Some(relay),
            gates,
        })
    }

    /// Waits for the second half.
    pub fn end(mut self) -> Result<(), Error> {
        match self.relay.take() {
            Some(r) => self.peers.end_host(r),
            None => Ok(()),
        }
    }
}

impl super::peers::Pending for Beside<'_> {
    fn end(self: Box<Self>) -> Result<(), Error> {
        Beside::end(*self)
    }
}

impl Drop for Beside<'_> {
    /// Unwinding past a relay under way: its NCCL operations may wait for a peer that will
    /// never come, and freeing its buffers waits for them, so the communicator is aborted
    /// first (the other ranks learn of it and return errors instead of waiting).
    fn drop(&mut self) {
        if self.relay.is_some() {
            self.peers.fail(&Error::Internal(
                "the rank stopped while relaying halos beside a block".into(),
            ));
        }
    }
}

impl Peers for Beside<'_> {
    fn carrier(&self) -> &'static str {
        self.peers.carrier()
    }

    unsafe fn exchange_host(&self, transfers: &[Transfer]) -> Result<(), Error> {
        self.peers.exchange_host(transfers)
    }

    unsafe fn exchange_device(
        &self,
        transfers: &[Transfer],
        stream: *mut std::ffi::c_void,
    ) -> Result<(), Error> {
        self.peers.exchange_device(transfers, stream)
    }

    fn gates(&self) -> Vec<Gate> {
        self.gates.clone()
    }

    fn check(&self) -> Result<(), Error> {
        self.peers.check()
    }

    fn fail(&self, error: &Error) {
        self.peers.fail(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_half_receives_from_below_and_sends_up() {
        let links = vec![
            HaloLink {
                peer: 0,
                send: 4..8,
                recv: 0..4,
            },
            HaloLink {
                peer: 2,
                send: 10..14,
                recv: 14..18,
            },
        ];
        let h = halves(1, &links, &[(3, 1000, 10)]);
        let t = |peer, send, send_bytes, recv, recv_bytes| Transfer {
            peer,
            send,
            send_bytes,
            recv,
            recv_bytes,
        };
        // Below: receive now (planes 0..4), send beside (planes 4..8).
        assert_eq!(h.first[0], t(0, 0, 0, 1000, 40));
        assert_eq!(h.beside[0], t(0, 1040, 40, 0, 0));
        // Above: send now (planes 10..14), receive beside (planes 14..18).
        assert_eq!(h.first[1], t(2, 1100, 40, 0, 0));
        assert_eq!(h.beside[1], t(2, 0, 0, 1140, 40));
        assert_eq!(h.gates.len(), 2);
        assert_eq!(h.gates[0].0, 3);
    }
}
