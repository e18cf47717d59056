//! The annotated stencil functions behind the examples (`examples/*.rs` are thin command-line
//! front ends), kept in the library so that tests and `pacc expand src/models/<file>.rs` see the
//! very same code.
//!
//! - [`laplace2d::jacobi()`]: 5-point Laplace (Jacobi) solver on a 2D grid.
//! - [`acoustic::propagate()`] / [`acoustic::propagate_sponge()`]: 3D acoustic wave propagation,
//!   2nd order in time, 8th order in space, Ricker source, optional absorbing sponge.
//! - [`himeno::jacobi()`]: the RIKEN Himeno benchmark's 19-point Jacobi sweep.
//! - [`grayscott::step()`]: 2D Gray-Scott reaction-diffusion, two coupled fields `u`, `v`.

pub mod acoustic;
pub mod grayscott;
pub mod himeno;
pub mod laplace2d;
