//! A corpus of stencil programs written the way outside codes write them (issue 49, item 8):
//! benchmarks and textbook schemes from their published descriptions, each in its own module
//! under `tests/corpus/` with a doc comment naming its source and the forms it uses
//! (docs/internals.md lists them). Each runs serial against pacc bit for bit, every array and
//! returned value (sums to rounding), on the CPU backend and the shuffled executor, every
//! scheme, 1, 2 and 3 steps per launch (a step count the program has no fused kernel for must
//! be refused as the `fuse` setting); the `#[ignore]`d test does the same on a CUDA device.
//!
//! Programs using forms the translator does not accept yet wait in `tests/corpus/pending/`,
//! which this file does not include; each is plain Rust (it compiles without the attribute)
//! and joins the list below with one `mod` line and one test once the forms land.

// The programs index arrays in loops and take many parameters, as the codes they follow do.
#![allow(clippy::needless_range_loop, clippy::too_many_arguments)]

#[macro_use]
#[path = "corpus/harness.rs"]
mod harness;
mod gpu;

#[path = "corpus/acoustic2d_staggered.rs"]
mod acoustic2d_staggered;
#[path = "corpus/advection_upwind_1d.rs"]
mod advection_upwind_1d;
#[path = "corpus/diffusion_varcoef.rs"]
mod diffusion_varcoef;
#[path = "corpus/gray_scott.rs"]
mod gray_scott;
#[path = "corpus/heat2d_dirichlet_if.rs"]
mod heat2d_dirichlet_if;
#[path = "corpus/heat2d_neumann.rs"]
mod heat2d_neumann;

#[path = "corpus/fdtd_2d.rs"]
mod fdtd_2d;
#[path = "corpus/heat3d_4th_order.rs"]
mod heat3d_4th_order;
#[path = "corpus/heat_3d.rs"]
mod heat_3d;
#[path = "corpus/himeno_like.rs"]
mod himeno_like;
#[path = "corpus/hotspot.rs"]
mod hotspot;
#[path = "corpus/hotspot3d.rs"]
mod hotspot3d;
#[path = "corpus/jacobi_1d.rs"]
mod jacobi_1d;
#[path = "corpus/jacobi_2d.rs"]
mod jacobi_2d;
#[path = "corpus/laplacian27.rs"]
mod laplacian27;
#[path = "corpus/lax_wendroff_1d.rs"]
mod lax_wendroff_1d;
#[path = "corpus/parboil_stencil.rs"]
mod parboil_stencil;
#[path = "corpus/shoc_stencil2d.rs"]
mod shoc_stencil2d;
#[path = "corpus/wave2d_leapfrog.rs"]
mod wave2d_leapfrog;

use harness::{check, Case, Target};

/// Every program of the corpus this file includes.
fn cases() -> Vec<Case> {
    vec![
        acoustic2d_staggered::case(),
        advection_upwind_1d::case(),
        diffusion_varcoef::case(),
        fdtd_2d::case(),
        heat3d_4th_order::case(),
        heat_3d::case(),
        himeno_like::case(),
        jacobi_1d::case(),
        jacobi_2d::case(),
        lax_wendroff_1d::case(),
        parboil_stencil::case(),
        shoc_stencil2d::case(),
        wave2d_leapfrog::case(),
        gray_scott::case(),
        heat2d_dirichlet_if::case(),
        heat2d_neumann::case(),
        hotspot::case(),
        hotspot3d::case(),
        laplacian27::case(),
    ]
}

#[test]
fn acoustic2d_staggered_equals_serial() {
    check(&acoustic2d_staggered::case(), Target::Cpu);
}

#[test]
fn advection_upwind_1d_equals_serial() {
    check(&advection_upwind_1d::case(), Target::Cpu);
}

#[test]
fn diffusion_varcoef_equals_serial() {
    check(&diffusion_varcoef::case(), Target::Cpu);
}

#[test]
fn heat3d_4th_order_equals_serial() {
    check(&heat3d_4th_order::case(), Target::Cpu);
}

#[test]
fn heat2d_neumann_equals_serial() {
    check(&heat2d_neumann::case(), Target::Cpu);
}

#[test]
fn heat_3d_equals_serial() {
    check(&heat_3d::case(), Target::Cpu);
}

#[test]
fn himeno_like_equals_serial() {
    check(&himeno_like::case(), Target::Cpu);
}

#[test]
fn jacobi_1d_equals_serial() {
    check(&jacobi_1d::case(), Target::Cpu);
}

#[test]
fn fdtd_2d_equals_serial() {
    check(&fdtd_2d::case(), Target::Cpu);
}

#[test]
fn jacobi_2d_equals_serial() {
    check(&jacobi_2d::case(), Target::Cpu);
}

#[test]
fn lax_wendroff_1d_equals_serial() {
    check(&lax_wendroff_1d::case(), Target::Cpu);
}

#[test]
fn parboil_stencil_equals_serial() {
    check(&parboil_stencil::case(), Target::Cpu);
}

#[test]
fn shoc_stencil2d_equals_serial() {
    check(&shoc_stencil2d::case(), Target::Cpu);
}

#[test]
fn wave2d_leapfrog_equals_serial() {
    check(&wave2d_leapfrog::case(), Target::Cpu);
}

/// On a CUDA device: every program, every scheme and step count per launch, in rows wide enough
/// to span several thread blocks, gives the serial bits (FMA contraction is off by default).
#[test]
fn gray_scott_equals_serial() {
    check(&gray_scott::case(), Target::Cpu);
}

#[test]
fn heat2d_dirichlet_if_equals_serial() {
    check(&heat2d_dirichlet_if::case(), Target::Cpu);
}

#[test]
fn hotspot_equals_serial() {
    check(&hotspot::case(), Target::Cpu);
}

#[test]
fn hotspot3d_equals_serial() {
    check(&hotspot3d::case(), Target::Cpu);
}

#[test]
fn laplacian27_equals_serial() {
    check(&laplacian27::case(), Target::Cpu);
}

#[test]
#[ignore = "needs a CUDA device"]
fn corpus_on_cuda_equals_serial() {
    gpu::device();
    for case in cases() {
        let runs = check(&case, Target::Cuda);
        eprintln!("{}: {runs} runs equal serial", case.name);
    }
}
