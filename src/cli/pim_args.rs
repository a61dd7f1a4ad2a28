//! The options every model command takes for the DPUs it runs on.

use clap::Args;
use pimgnn::gnn::{Backend, EngineOptions};

/// DPU count and tasklets, shared by `infer`, `train`, `bench infer` and `bench train`.
#[derive(Args, Debug, Clone, Copy)]
pub struct PimArgs {
    /// DPUs to use on PIM (default 2,048; on hardware, all present up to 2,048).
    #[arg(long)]
    pub dpus: Option<u32>,
    /// Tasklets per DPU on PIM.
    #[arg(long)]
    pub tasklets: Option<u32>,
}

impl PimArgs {
    /// Engine options for `backend` with these DPUs and tasklets, planned for calls of `widths`.
    pub fn engine_options(self, backend: Backend, widths: Vec<usize>) -> EngineOptions {
        EngineOptions { backend, dpus: self.dpus, tasklets: self.tasklets, widths }
    }
}
