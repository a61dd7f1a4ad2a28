//! `pimgnn info`: the backends this machine has.

use pimgnn::gnn::Backend;
#[cfg(feature = "simulator")]
use upmem::sim::SimConfig;
#[cfg(feature = "simulator")]
use upmem::Topology;
use upmem::{BackendKind, DpuSet, RankInventory};

/// Runs `pimgnn info`.
pub fn run() -> anyhow::Result<()> {
    println!(
        "CPU: available, {} threads; SpMM kernel for f32: {}, for integers: {}",
        rayon::current_num_threads(),
        pimgnn::cpu::kernel::<f32>(),
        pimgnn::cpu::kernel::<i32>()
    );

    // The driver's counts, read without allocating: taking every free rank to count them would block the
    // server's other users. One DPU is allocated to check that libdpu works.
    let machine = RankInventory::of_this_machine();
    if machine.has_device() {
        match DpuSet::builder().backend(BackendKind::Hardware).dpus(1).allocate() {
            Ok(set) => {
                println!("UPMEM hardware: available; {machine}");
                println!(
                    "           {}; {} DPUs, {} hardware tasklets each (--tasklets 1 to {})",
                    set.sdk_version()
                        .map_or_else(|| "UPMEM SDK of unknown version".to_owned(), |v| format!("UPMEM SDK {v}")),
                    set.chip(),
                    set.hardware_threads(),
                    set.hardware_threads().min(pimgnn::pim::abi::MAX_TASKLETS as u32)
                );
            }
            Err(error) => println!("UPMEM hardware: present but unusable: {error}"),
        }
    } else {
        println!("UPMEM hardware: not available ({machine})");
    }

    print_simulator();
    for variable in ["UPMEM_BACKEND", "UPMEM_PROFILE", "UPMEM_LIBDPU", "UPMEM_HOME"] {
        if let Ok(value) = std::env::var(variable) {
            println!("{variable}={value}");
        }
    }

    let probe = pimgnn::gnn::spmm_engine(
        pimgnn::Csr::<f32>::new(1, 1, vec![0, 1], vec![0], vec![1.0])?,
        &pimgnn::gnn::EngineOptions { backend: Backend::Pim(BackendKind::Auto), dpus: Some(1), ..Default::default() },
    );
    match probe {
        Ok(engine) => println!("PIM SpMM engine: available, `--backend pim` runs on `{}`", engine.backend),
        Err(error) => println!("PIM SpMM engine: {error}"),
    }
    Ok(())
}

/// The simulator's default machine, or why there is none.
#[cfg(feature = "simulator")]
fn print_simulator() {
    let defaults = SimConfig::new(Topology::full_server());
    if cfg!(target_os = "linux") {
        println!(
            "simulator: available, {} DPUs ({}) by default, {} worker processes, hang limit {}",
            defaults.topology.nr_enabled_dpus(),
            defaults.topology,
            defaults.workers,
            defaults.hang_limit.map_or("none".to_owned(), |limit| format!("{} s", limit.as_secs())),
        );
        println!(
            "           {} DPUs ({} hardware tasklets each), WRAM {} KiB and MRAM {} MiB per DPU",
            defaults.topology.chip,
            defaults.topology.chip.hardware_threads(),
            defaults.topology.wram_size >> 10,
            defaults.topology.mram_size >> 20
        );
    } else {
        println!("simulator: not available (it needs Linux on x86-64 or aarch64)");
    }
}

/// The simulator is not compiled in.
#[cfg(not(feature = "simulator"))]
fn print_simulator() {
    println!("simulator: not compiled in (pimgnn's feature `simulator`)");
}
