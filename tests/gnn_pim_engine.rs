//! Building the PIM aggregation engine: what `auto` resolves to, and clear errors before anything runs.

use pimgnn::gnn::{Aggregator, Backend, Dtype, EngineOptions};
use pimgnn::{Csr, Error};
use upmem::BackendKind;

/// A path graph's adjacency over `nodes` nodes, both directions.
fn path(nodes: usize) -> Csr<f32> {
    let mut row_ptr = vec![0u32];
    let mut col_idx = Vec::new();
    for node in 0..nodes {
        if node > 0 {
            col_idx.push(node as u32 - 1);
        }
        if node + 1 < nodes {
            col_idx.push(node as u32 + 1);
        }
        row_ptr.push(col_idx.len() as u32);
    }
    let values = vec![1.0; col_idx.len()];
    Csr::new(nodes, nodes, row_ptr, col_idx, values).unwrap()
}

fn options(backend: Backend, dpus: u32, widths: &[usize]) -> EngineOptions {
    EngineOptions { backend, dpus: Some(dpus), widths: widths.to_vec(), ..EngineOptions::default() }
}

#[test]
fn auto_aggregates_on_pim() {
    // UPMEM_BACKEND decides when it names a backend, else the machine does.
    let from_env = std::env::var("UPMEM_BACKEND").ok().map(|value| value.parse::<upmem::BackendKind>().unwrap());
    let expected = match from_env {
        Some(upmem::BackendKind::Hardware) => Backend::Pim(BackendKind::Hardware),
        Some(upmem::BackendKind::Simulator) => Backend::Pim(BackendKind::Simulator),
        _ if upmem::hardware_present() => Backend::Pim(BackendKind::Hardware),
        _ => Backend::Pim(BackendKind::Simulator),
    };
    let aggregator =
        Aggregator::new(path(100), Dtype::F32, &options(Backend::Pim(BackendKind::Auto), 4, &[8])).unwrap();
    assert_eq!(aggregator.backend(), expected);
    let balance = aggregator.balance().expect("PIM reports its load balance");
    assert!(balance.min <= balance.median && balance.median <= balance.max && balance.max > 0);
    assert!(aggregator.plan().contains("4 used"), "{}", aggregator.plan());
}

#[test]
fn features_too_wide_for_the_dpus_mram_are_refused() {
    // 1,000 nodes x 100,000 features of f32 is 400 MB of X for one DPU of 64 MiB MRAM.
    let error =
        Aggregator::new(path(1000), Dtype::F32, &options(Backend::Pim(BackendKind::Simulator), 1, &[16, 100_000]))
            .err();
    match error {
        Some(Error::Capacity { what, needed, limit }) => {
            assert!(what.contains("MRAM per DPU") && what.contains("100000 features"), "{what}");
            // X alone: 1,000 rows of 100,000 f32 features, against one DPU's 64 MiB.
            assert!(needed >= 1000 * 100_000 * 4, "{needed}");
            assert_eq!(limit, 64 << 20);
        }
        other => panic!("expected a capacity error, got {other:?}"),
    }
}

#[test]
fn zero_dpus_are_refused() {
    match Aggregator::new(path(10), Dtype::I8, &options(Backend::Pim(BackendKind::Simulator), 0, &[8])).err() {
        Some(Error::Invalid { what, reason }) => {
            assert_eq!((what.as_str(), reason.as_str()), ("DPUs", "at least 1 DPU is needed"))
        }
        other => panic!("expected an invalid DPU count, got {other:?}"),
    }
}
