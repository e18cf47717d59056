//! Proof that a plan has no data race.
