//! Moving whole arrays between ranks, for set-up and checks at sizes that fit one host: a
//! rank's window of a global array, and the global array gathered from every rank's owned
//! planes.

use super::comm::Communicator;
use super::slab::Slab;
use mpi::datatype::Equivalence;
use mpi::traits::Communicator as _;
use mpi::traits::*;
use ndarray::{Array, ArrayBase, Axis, Data, RemoveAxis, Slice};

/// A copy of this rank's window (planes `slab.window`, halos included) of a global array.
pub fn window<S, T, D>(global: &ArrayBase<S, D>, slab: &Slab) -> Array<T, D>
where
    S: Data<Elem = T>,
    T: Clone,
    D: RemoveAxis,
{
    global
        .slice_axis(Axis(0), Slice::from(slab.window.clone()))
        .to_owned()
}

/// The global array, assembled on rank 0 from every rank's owned planes of `local` (its
/// window); `None` on the other ranks. Collective: every rank calls it.
pub fn gather<S, T, D>(
    comm: &Communicator,
    slab: &Slab,
    local: &ArrayBase<S, D>,
) -> Option<Array<T, D>>
where
    S: Data<Elem = T>,
    T: Clone + Equivalence,
    D: RemoveAxis,
{
    let own = local.slice_axis(Axis(0), Slice::from(slab.owned_local()));
    let mine: Vec<T> = own.iter().cloned().collect();
    let root = comm.process_at_rank(0);
    if comm.rank() != 0 {
        root.send(&mine[..]);
        return None;
    }
    let mut all = mine;
    for r in 1..comm.size() {
        let (v, _) = comm.process_at_rank(r).receive_vec::<T>();
        all.extend(v);
    }
    let mut dim = local.raw_dim();
    dim[0] = slab.global[0];
    Array::from_shape_vec(dim, all).ok()
}
