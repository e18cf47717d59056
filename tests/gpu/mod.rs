//! What every test that needs a CUDA device starts with. Such tests are
//! `#[ignore = "needs a CUDA device"]`, so `cargo test` counts them as ignored where there is
//! none; the GPU machine runs them with `cargo test -- --include-ignored`. Asked to run without
//! a device, they fail here instead of passing having checked nothing.

use pacc_runtime::exec::cuda::{self, DeviceInfo};

/// The device, or a failure that says why there is none.
pub fn device() -> DeviceInfo {
    cuda::available().unwrap_or_else(|reason| {
        panic!(
            "this test needs a CUDA device ({reason}); run it on the GPU machine with \
             --include-ignored"
        )
    })
}
