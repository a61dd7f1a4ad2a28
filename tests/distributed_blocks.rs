//! A partitioned forward pass, ranks as threads of one process exchanging their halos through shared memory:
//! every rank aggregates its block of the matrix with its own rows and the halo's, and the rows of all ranks
//! together are the one-process logits (GCN, SAGE, GIN and GAT; ranges and METIS; unbalanced parts and a part without
//! edges; the CPU engine and the simulator).

mod common;

use std::sync::Arc;

use common::ranks::{graph_with_isolated_nodes, Mailboxes, ThreadExchange};
use common::{largest_difference, random_model, rng, uniform, RandomLayers};
use pimgnn::distributed::{PartitionMethod, RankPartition};
use pimgnn::gnn::{Aggregator, Architecture, Backend, Dtype, EngineOptions, Model, Overlap, INTERIOR_PHASE};
use pimgnn::{Csr, Dense};

const NODES: usize = 300;
const FEATURES: usize = 12;

/// How every rank builds its aggregator: one engine for its block, the exchange before each aggregation
/// (`with_halo`), or its interior rows on an engine of their own during the exchange (`for_rank`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Build {
    WithHalo,
    ForRank,
}

/// The logits of `model` over `graph` computed by `partition`'s ranks at once, assembled in node order.
fn partitioned_logits(
    model: &Model,
    graph: &Csr<f32>,
    features: &Dense<f32>,
    partition: &RankPartition,
    options: &EngineOptions,
) -> Dense<f32> {
    partitioned_logits_with(model, graph, features, partition, options, Build::WithHalo, Overlap::Overlapped)
}

/// As [`partitioned_logits`], each rank's aggregator built as `build` says, its dense steps as `overlap` says.
fn partitioned_logits_with(
    model: &Model,
    graph: &Csr<f32>,
    features: &Dense<f32>,
    partition: &RankPartition,
    options: &EngineOptions,
    build: Build,
    overlap: Overlap,
) -> Dense<f32> {
    let matrix = model.architecture().aggregation().matrix(graph).unwrap();
    let ranks = partition.ranks() as usize;
    let shared = Mailboxes::new(ranks);
    let results: Vec<(Vec<u32>, Dense<f32>)> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..ranks as u32)
            .map(|rank| {
                let (shared, matrix) = (Arc::clone(&shared), &matrix);
                scope.spawn(move || {
                    let block = partition.block(matrix, rank).unwrap();
                    let nodes = block.nodes.clone();
                    let local = Dense::from_vec(
                        nodes.len(),
                        FEATURES,
                        nodes.iter().flat_map(|&node| features.row(node as usize).iter().copied()).collect(),
                    )
                    .unwrap();
                    let exchange = Box::new(ThreadExchange { block: block.clone(), shared });
                    let aggregation = model.architecture().aggregation();
                    let mut aggregator = match build {
                        Build::WithHalo => {
                            Aggregator::for_aggregation(aggregation, block.matrix.clone(), Dtype::F32, options)
                                .and_then(|aggregator| aggregator.with_halo(exchange))
                        }
                        Build::ForRank => Aggregator::for_rank(&block, aggregation, Dtype::F32, options, exchange),
                    }
                    .unwrap();
                    let inference = model.forward_with(&local, &mut aggregator, overlap).unwrap();
                    let phases = &inference.layers[0].phases;
                    assert!(phases.iter().any(|phase| phase.name == "halo exchange"), "{phases:?}");
                    // On the CPU a block with interior rows and others splits them, but for attention.
                    let interior = block.interior_rows();
                    let split = build == Build::ForRank
                        && options.backend == Backend::Cpu
                        && interior > 0
                        && interior < block.nodes.len()
                        && model.architecture() != Architecture::Gat;
                    let during = phases.iter().filter(|phase| phase.name.starts_with(INTERIOR_PHASE)).count();
                    assert_eq!(split, during > 0, "rank {rank}, {build:?}: {phases:?}");
                    assert_eq!(split, aggregator.plan().starts_with("interior rows"), "{}", aggregator.plan());
                    (nodes, inference.logits)
                })
            })
            .collect();
        threads.into_iter().map(|thread| thread.join().unwrap()).collect()
    });
    let mut logits = Dense::zeros(graph.nrows(), model.out_features());
    for (nodes, rows) in results {
        for (at, &node) in nodes.iter().enumerate() {
            logits.row_mut(node as usize).copy_from_slice(rows.row(at));
        }
    }
    logits
}

fn one_process_logits(model: &Model, graph: &Csr<f32>, features: &Dense<f32>) -> Dense<f32> {
    let matrix = model.architecture().aggregation().matrix(graph).unwrap();
    let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    let aggregation = model.architecture().aggregation();
    let mut aggregator = Aggregator::for_aggregation(aggregation, matrix, Dtype::F32, &options).unwrap();
    model.forward(features, &mut aggregator).unwrap().logits
}

/// An R-MAT graph whose last 40 nodes have no edge at all, so that a range part can hold no edge.
fn graph() -> Csr<f32> {
    graph_with_isolated_nodes(NODES, 40, 2400)
}

fn models() -> Vec<Model> {
    // GAT with two heads concatenated, then two averaged.
    let shape = RandomLayers {
        sage_root_bias: |at| at == 0,
        gin_hidden: |_, outputs| outputs + 3,
        gat_heads: |at| (2, at == 0),
    };
    let mut rng = rng(11);
    [Architecture::Gcn, Architecture::Sage, Architecture::Gin, Architecture::Gat]
        .into_iter()
        .map(|architecture| random_model(architecture, &[FEATURES, 16, 5], &mut rng, RandomLayers { ..shape }))
        .collect()
}

#[test]
fn ranks_give_the_one_process_logits_on_the_cpu() {
    let (graph, features) =
        (graph(), Dense::from_vec(NODES, FEATURES, uniform(&mut rng(3), NODES * FEATURES)).unwrap());
    let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    for model in models() {
        let expected = one_process_logits(&model, &graph, &features);
        for method in [PartitionMethod::Range, PartitionMethod::Metis] {
            for ranks in 1..=4 {
                let partition = RankPartition::new(&graph, ranks, method).unwrap();
                for (build, overlap) in [
                    (Build::WithHalo, Overlap::Overlapped),
                    (Build::ForRank, Overlap::Overlapped),
                    (Build::ForRank, Overlap::Sequential),
                ] {
                    let found =
                        partitioned_logits_with(&model, &graph, &features, &partition, &options, build, overlap);
                    let difference = largest_difference(found.as_slice(), expected.as_slice());
                    let what = format!("{} over {ranks} ranks by {method}, {build:?}", model.architecture());
                    // Within 1e-5 of the largest logit (GIN's reach 1,845 here): the dense steps' GEMMs run over
                    // other numbers of rows per call, which the `gemm` crate may round differently.
                    let largest = expected.as_slice().iter().fold(1f32, |a, v| a.max(v.abs()));
                    assert!(difference <= 1e-5 * largest, "{what}, {overlap:?}: {difference} of {largest}");
                }
            }
        }
    }
}

#[test]
fn unbalanced_parts_and_a_part_without_edges_give_the_same_logits() {
    let (graph, features) =
        (graph(), Dense::from_vec(NODES, FEATURES, uniform(&mut rng(5), NODES * FEATURES)).unwrap());
    // Rank 0 gets 10 nodes, rank 1 most of the graph, rank 2 the 40 nodes without edges.
    let owners = (0..NODES)
        .map(|node| {
            if node < 10 {
                0
            } else if node < NODES - 40 {
                1
            } else {
                2
            }
        })
        .collect();
    let partition = RankPartition::from_owners(owners, 3, PartitionMethod::Range).unwrap();
    assert_eq!(partition.stats(&graph).unwrap()[2].edges, 0);
    let model = &models()[0];
    let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    let found = partitioned_logits(model, &graph, &features, &partition, &options);
    let expected = one_process_logits(model, &graph, &features);
    assert!(largest_difference(found.as_slice(), expected.as_slice()) <= 1e-5);
}

#[cfg(feature = "simulator")]
#[test]
fn ranks_on_simulated_dpus_give_the_cpus_logits() {
    use pimgnn::attention::AttentionSite;

    let (graph, features) =
        (graph(), Dense::from_vec(NODES, FEATURES, uniform(&mut rng(9), NODES * FEATURES)).unwrap());
    let options = EngineOptions {
        backend: Backend::Pim(upmem::BackendKind::Simulator),
        dpus: Some(4),
        tasklets: Some(4),
        ..EngineOptions::default()
    };
    let partition = RankPartition::new(&graph, 3, PartitionMethod::Metis).unwrap();
    let models = models();
    // GCN, and GAT with its attention weights computed on the host and on the DPUs.
    let runs =
        [(&models[0], AttentionSite::Auto), (&models[3], AttentionSite::Host), (&models[3], AttentionSite::Engine)];
    for (model, attention) in runs {
        let options = EngineOptions { attention, ..options.clone() };
        let found = partitioned_logits(model, &graph, &features, &partition, &options);
        let expected = one_process_logits(model, &graph, &features);
        let difference = largest_difference(found.as_slice(), expected.as_slice());
        assert!(difference <= 1e-5, "{} ({attention:?}): {difference}", model.architecture());
    }
    // On PIM a rank's aggregator keeps one engine (see `Aggregator::for_rank`), with and without the merge's
    // overlap.
    for overlap in [Overlap::Overlapped, Overlap::Sequential] {
        let model = &models[0];
        let found = partitioned_logits_with(model, &graph, &features, &partition, &options, Build::ForRank, overlap);
        let expected = one_process_logits(model, &graph, &features);
        let difference = largest_difference(found.as_slice(), expected.as_slice());
        assert!(difference <= 1e-5, "for_rank ({overlap:?}): {difference}");
    }
}

#[test]
fn a_block_puts_its_interior_rows_first_and_peers_get_their_rows_in_halo_order() {
    // 0 <- 3, 1 <- 2, 2 <- 0, 3 <- 3: ranks {0, 1} and {2, 3}; node 3 references only rank 1's nodes.
    let graph = Csr::new(4, 4, vec![0, 1, 2, 3, 4], vec![3, 2, 0, 3], vec![1.0; 4]).unwrap();
    let partition = RankPartition::from_owners(vec![0, 0, 1, 1], 2, PartitionMethod::Range).unwrap();
    let block = partition.block(&graph, 1).unwrap();
    assert_eq!((block.nodes.clone(), block.interior_rows()), (vec![3, 2], 1));
    // Node 3's row references itself (column 0); node 2's node 0, the halo's first column (2).
    assert_eq!((block.matrix.row_ptr(), block.matrix.col_idx()), (&[0u32, 1, 2][..], &[0u32, 2][..]));
    // Rank 0's halo is nodes 2 and 3, by id: rows 1 and 0 of this block.
    assert_eq!(block.send, vec![vec![1, 0], vec![]]);
    assert_eq!(partition.block(&graph, 0).unwrap().interior_rows(), 0);
}

#[test]
fn a_block_lists_its_halo_by_owner_and_what_each_peer_needs() {
    // 0 <- 2, 1 <- 3, 2 <- 0, 3 <- 1 and 3 <- 0: ranks {0, 1} and {2, 3}.
    let graph = Csr::new(4, 4, vec![0, 1, 2, 3, 5], vec![2, 3, 0, 1, 0], vec![1.0; 5]).unwrap();
    let partition = RankPartition::from_owners(vec![0, 0, 1, 1], 2, PartitionMethod::Range).unwrap();
    let block = partition.block(&graph, 1).unwrap();
    assert_eq!((block.nodes.clone(), block.halo.clone(), block.receive.clone()), (vec![2, 3], vec![0, 1], vec![2, 0]));
    // Row 3 references node 1 (halo column 3) then node 0 (halo column 2), in the graph's order.
    assert_eq!((block.matrix.row_ptr(), block.matrix.col_idx()), (&[0u32, 1, 3][..], &[2u32, 3, 2][..]));
    assert_eq!(block.send, vec![vec![0, 1], vec![]], "rank 0 needs nodes 2 and 3");
    assert!(partition.block(&graph, 2).is_err());
}
