//! Generation: CUDA C, CPU closures, the `Program` value and the wrapper.

pub mod cpu;
mod ctor;
pub mod cuda;
pub mod emit;
pub mod fuse;
pub mod fuse_vector;
pub mod march;
mod point;
pub mod program;
pub mod queue;
pub mod stage;
pub mod vector;
pub mod wrapper;
