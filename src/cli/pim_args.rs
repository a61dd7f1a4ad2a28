//! The options every model command takes for the DPUs it runs on.

use clap::Args;
use pimgnn::attention::AttentionSite;
use pimgnn::gnn::{Backend, Decision, EngineOptions};
use pimgnn::pim::abi::MAX_TASKLETS;
#[cfg(feature = "simulator")]
use upmem::sim::CompilerFamily;

/// Where a model command aggregates, shared by `infer` and `train`.
#[derive(Args, Debug, Clone, Copy)]
pub struct BackendArgs {
    /// Where aggregation runs. auto: what the model predicts fastest for this graph, the CPU (timed here on a
    /// sample), the DPUs or both at once; without UPMEM hardware it runs on the simulator and prints what it
    /// would pick on the modelled server. pim: the DPUs, hardware when present, else the simulator. simulator
    /// (sim), hardware (hw), cpu: exactly that. split (split:sim, split:hw): rows cut between the DPUs and the
    /// host cores, running at once.
    #[arg(long, default_value = "auto")]
    pub backend: Backend,
}

/// Prints the backend aggregation runs on and, for `auto` and `split`, the model's pick and its predictions.
pub fn print_backend(asked: Backend, running: Backend, decision: Option<&Decision>) {
    println!("backend: {running} (asked for {asked})");
    #[cfg(feature = "simulator")]
    if matches!(running, Backend::Pim(upmem::BackendKind::Simulator)) && kernels_compiler() == Some(CompilerFamily::Gcc)
    {
        println!("note: {GCC_KERNELS}");
    }
    if let Some(decision) = decision {
        let simulated = matches!(running, Backend::Pim(upmem::BackendKind::Simulator));
        let here = if asked == Backend::Auto && simulated {
            "; there is no UPMEM hardware here, so the simulator runs PIM whatever the pick"
        } else {
            ""
        };
        println!("model's pick for the modelled server: {decision}{here}");
    }
}

/// Where a GAT's attention weights are computed in inference, shared by `infer` and `bench infer` (training
/// computes them on the host: its backward pass needs them).
#[derive(Args, Debug, Clone, Copy)]
pub struct AttentionArgs {
    /// Where GAT layers compute their attention weights. host: in f32 on the host as PyG does, sent to the
    /// engine as values per head. engine: where aggregation runs, from the per-node scores in fixed point (the
    /// DPUs' kernels; needs --dtype f32). auto: what the cost model predicts faster (the engine only on PIM in
    /// f32).
    #[arg(long, default_value = "auto")]
    pub attention: AttentionSite,
}

/// DPU count and tasklets, shared by `infer`, `train`, `bench infer` and `bench train`.
#[derive(Args, Debug, Clone, Copy)]
pub struct PimArgs {
    /// DPUs to use on PIM, 1 to 2,560 (default 2,048; on hardware, all present up to 2,048).
    #[arg(long, value_parser = dpus())]
    pub dpus: Option<u32>,
    /// Tasklets per DPU on PIM (1 to 24).
    #[arg(long, value_parser = tasklets())]
    pub tasklets: Option<u32>,
}

/// The DPU counts a command can ask for: 1 to a full UPMEM server's 2,560.
pub fn dpus() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..=i64::from(upmem::Topology::full_server().nr_dpus()))
}

/// The tasklet counts the kernels run: 1 to [`MAX_TASKLETS`].
pub fn tasklets() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..=MAX_TASKLETS as i64)
}

impl PimArgs {
    /// Engine options for `backend` with these DPUs and tasklets, planned for calls of `widths`.
    pub fn engine_options(self, backend: Backend, widths: Vec<usize>) -> EngineOptions {
        EngineOptions { backend, dpus: self.dpus, tasklets: self.tasklets, widths, ..EngineOptions::default() }
    }
}

/// What the simulator's cycles owe to gcc having built the DPU kernels.
#[cfg(feature = "simulator")]
pub const GCC_KERNELS: &str = "the simulated DPU kernels were built by gcc, which cannot be told that the \
    simulator's per-block hook preserves every register: their code counts 1% to 18% more instructions than \
    clang's (the SDK's compiler is a clang), and the cost model is not fitted to it; install clang (or point CC \
    at one) and rebuild for the cycles a DPU would run.";

/// The family of the host compiler that built the SpMM kernels for the simulator (the build script builds them
/// all with one), if it recorded it.
#[cfg(feature = "simulator")]
pub fn kernels_compiler() -> Option<CompilerFamily> {
    let kernel = pimgnn::kernel("spmm_csr_i8");
    let binary = kernel.simulator_binary(upmem::ChipVersion::V1A)?;
    upmem::sim::Program::from_file(binary).ok()?.host_compiler()
}
