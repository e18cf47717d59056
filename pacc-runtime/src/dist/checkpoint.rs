//! Checkpoints of a distributed run: each rank writes its own slab, rank 0 commits.
//!
//! ```text
//! DIR/DIST.json                     the committed step, the rank count and the split
//! DIR/rank-<r>-of-<n>/gen-<0|1>/    rank r's single-node checkpoint (crate::checkpoint layout)
//! ```
//!
//! Checkpoints alternate between two generations: a rank overwrites generation g only after
//! every rank's copy of the other one was committed, so whatever moment a rank dies at, the
//! step `DIST.json` names is complete on every rank.

use super::comm::{agree, Communicator};
use super::slab::Slab;
use crate::checkpoint::{self, At, Fingerprint, Found};
use crate::error::{CheckpointError, DistError, Error};
use crate::invocation::{HostArray, Invocation};
use crate::options::{Checkpointing, Resume};
use crate::program::Program;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::path::{Path, PathBuf};

const COMMIT: &str = "DIST.json";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Commit {
    ranks: usize,
    global: Vec<usize>,
    block_steps: usize,
    /// Owned planes of each rank.
    split: Vec<Range<usize>>,
    step: usize,
    gen: usize,
}

fn layout(slabs: &[Slab]) -> (usize, Vec<usize>, usize, Vec<Range<usize>>) {
    (
        slabs.len(),
        slabs[0].global.clone(),
        slabs[0].block_steps,
        slabs.iter().map(|s| s.owned.clone()).collect(),
    )
}

fn describe(ranks: usize, global: &[usize], k: usize, split: &[Range<usize>]) -> String {
    format!("{ranks} ranks owning planes {split:?} of shape {global:?} in blocks of {k} steps")
}

fn rank_dir(root: &Path, slab: &Slab, gen: usize) -> PathBuf {
    root.join(format!("rank-{}-of-{}", slab.rank, slab.ranks))
        .join(format!("gen-{gen}"))
}

/// Where a resumed run starts: the rank's checkpoint of the committed step, verified against
/// the call (nothing loaded yet), and the generation it is in. `None`: start at step 0.
pub(crate) fn find(
    resume: &Resume,
    slabs: &[Slab],
    me: usize,
    program: &Program,
    inv: &Invocation<'_>,
    fp: &Fingerprint,
) -> Result<Option<(Found, usize)>, Error> {
    let root = resume.dir();
    let path = root.join(COMMIT);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match resume {
                Resume::IfPresent(_) => Ok(None),
                Resume::From(_) => Err(CheckpointError::Missing {
                    dir: root.to_path_buf(),
                }
                .into()),
            }
        }
        Err(e) => {
            return Err(CheckpointError::Read {
                path,
                message: e.to_string(),
            }
            .into())
        }
    };
    let c: Commit = serde_json::from_str(&text).map_err(|e| CheckpointError::Corrupt {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let (ranks, global, k, split) = layout(slabs);
    if (c.ranks, &c.global, c.block_steps, &c.split) != (ranks, &global, k, &split) {
        return Err(DistError::CheckpointLayout {
            dir: root.to_path_buf(),
            found: describe(c.ranks, &c.global, c.block_steps, &c.split),
            want: describe(ranks, &global, k, &split),
        }
        .into());
    }
    let dir = rank_dir(root, &slabs[me], c.gen);
    let found = checkpoint::find(&Resume::From(dir.clone()), program, inv, fp)?
        .ok_or(CheckpointError::Missing { dir: dir.clone() })?;
    if found.state.step != c.step {
        return Err(CheckpointError::Corrupt {
            path: dir,
            reason: format!(
                "it holds step {} but `{COMMIT}` commits step {}",
                found.state.step, c.step
            ),
        }
        .into());
    }
    Ok(Some((found, c.gen)))
}

/// Writes every rank's slab at `at.step` into generation `gen`, then commits it (rank 0).
/// Collective: every rank returns the same outcome.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write(
    comm: &Communicator,
    cfg: &Checkpointing,
    slabs: &[Slab],
    me: usize,
    gen: usize,
    program: &Program,
    arrays: &[HostArray],
    fp: &Fingerprint,
    at: At<'_>,
) -> Result<(), Error> {
    let step = at.step;
    let mine = Checkpointing {
        dir: rank_dir(&cfg.dir, &slabs[me], gen),
        every_blocks: cfg.every_blocks,
    };
    let wrote = checkpoint::prepare_dir(&mine)
        .and_then(|()| checkpoint::write(&mine, program, arrays, fp, at).map(|_| ()));
    agree(comm, wrote)?;
    let committed = if me == 0 {
        let (ranks, global, block_steps, split) = layout(slabs);
        let c = Commit {
            ranks,
            global,
            block_steps,
            split,
            step,
            gen,
        };
        commit(&cfg.dir, &c)
    } else {
        Ok(())
    };
    agree(comm, committed)
}

fn commit(root: &Path, c: &Commit) -> Result<(), Error> {
    let err = |path: &Path, e: std::io::Error| -> Error {
        CheckpointError::Write {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
        .into()
    };
    let json = serde_json::to_vec_pretty(c).map_err(|e| err(root, std::io::Error::other(e)))?;
    let tmp = root.join(format!("{COMMIT}.tmp"));
    let fin = root.join(COMMIT);
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp).map_err(|e| err(&tmp, e))?;
        f.write_all(&json).map_err(|e| err(&tmp, e))?;
        f.sync_all().map_err(|e| err(&tmp, e))?;
    }
    std::fs::rename(&tmp, &fin).map_err(|e| err(&fin, e))?;
    std::fs::File::open(root)
        .and_then(|d| d.sync_all())
        .map_err(|e| err(root, e))
}
