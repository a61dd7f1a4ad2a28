//! Full-batch training split over ranks (threads of one process exchanging halos and summing gradients through
//! shared memory): every epoch's loss is the one-process trainer's, and every rank ends with its weights (GCN,
//! SAGE, GIN and GAT; ranges and METIS over 1 to 4 ranks; unbalanced parts, a part without edges and one without
//! training nodes; the CPU engine and the simulator).

mod common;

use common::ranks::{graph_with_isolated_nodes, Mailboxes, ThreadExchange, ThreadSum};
use common::{rng, uniform};
use pimgnn::distributed::{PartitionMethod, RankPartition, RankTransport};
use pimgnn::gnn::{Architecture, Backend, EngineOptions, Model};
use pimgnn::train::{initial_model, Adam, OptimizerKind, Targets, Trainer};
use pimgnn::{Csr, Dense};

const NODES: usize = 300;
const FEATURES: usize = 12;
const CLASSES: usize = 4;
const EPOCHS: usize = 4;

/// A graph, its features, labels and training mask (every third node).
struct Dataset {
    graph: Csr<f32>,
    features: Dense<f32>,
    labels: Vec<i64>,
    mask: Vec<bool>,
}

fn dataset() -> Dataset {
    let graph = graph_with_isolated_nodes(NODES, 40, 2400);
    let features = Dense::from_vec(NODES, FEATURES, uniform(&mut rng(3), NODES * FEATURES)).unwrap();
    let labels = (0..NODES).map(|node| (node * 7 % CLASSES) as i64).collect();
    let mask = (0..NODES).map(|node| node % 3 == 0).collect();
    Dataset { graph, features, labels, mask }
}

fn adam() -> OptimizerKind {
    OptimizerKind::Adam(Adam { lr: 0.05, weight_decay: 5e-4, ..Adam::default() })
}

/// The losses of `EPOCHS` epochs and the trained model on one process.
fn one_process(model: &Model, data: &Dataset, options: &EngineOptions) -> (Vec<f32>, Model) {
    let targets = Targets::new(data.labels.clone(), data.mask.clone(), NODES, CLASSES).unwrap();
    let mut trainer =
        Trainer::new(model.clone(), &data.graph, data.features.clone(), targets, adam(), options).unwrap();
    let losses = (0..EPOCHS).map(|_| trainer.epoch().unwrap().loss).collect();
    (losses, trainer.into_model())
}

/// Each rank's losses of `EPOCHS` epochs and trained model, training `model` over `partition`'s ranks at once.
fn over_ranks(
    model: &Model,
    data: &Dataset,
    partition: &RankPartition,
    options: &EngineOptions,
) -> Vec<(Vec<f32>, Model)> {
    let matrix = model.architecture().aggregation().matrix(&data.graph).unwrap();
    let ranks = partition.ranks() as usize;
    let shared = Mailboxes::new(ranks);
    let selected = data.mask.iter().filter(|&&m| m).count();
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..ranks as u32)
            .map(|rank| {
                let (shared, matrix) = (shared.clone(), &matrix);
                scope.spawn(move || {
                    let block = partition.block(matrix, rank).unwrap();
                    let rows = |node: &u32| data.features.row(*node as usize).iter().copied();
                    let features =
                        Dense::from_vec(block.nodes.len(), FEATURES, block.nodes.iter().flat_map(rows).collect());
                    let labels = block.nodes.iter().map(|&node| data.labels[node as usize]).collect();
                    let mask = block.nodes.iter().map(|&node| data.mask[node as usize]).collect();
                    let targets = Targets::of_rank(labels, mask, CLASSES, selected).unwrap();
                    let transport = RankTransport {
                        exchange: Box::new(ThreadExchange { block: block.clone(), shared: shared.clone() }),
                        sum: Box::new(ThreadSum { rank: rank as usize, shared }),
                    };
                    let mut trainer = Trainer::distributed(
                        model.clone(),
                        &block,
                        features.unwrap(),
                        targets,
                        adam(),
                        options,
                        transport,
                    )
                    .unwrap();
                    let losses = (0..EPOCHS).map(|_| trainer.epoch().unwrap().loss).collect();
                    (losses, trainer.into_model())
                })
            })
            .collect();
        threads.into_iter().map(|thread| thread.join().unwrap()).collect()
    })
}

/// Asserts that every rank's losses are `expected`'s within 1e-6 and its weights the same on every rank and
/// within 1e-5 of `trained`'s.
#[track_caller]
fn same_training(ranks: &[(Vec<f32>, Model)], expected: &[f32], trained: &Model, what: &str) {
    let parameters = |model: &Model| -> Vec<f32> {
        model.layers().iter().flat_map(|(_, layer)| layer.parameters()).flat_map(|(_, v)| v.to_vec()).collect()
    };
    let first = parameters(&ranks[0].1);
    for (rank, (losses, model)) in ranks.iter().enumerate() {
        for (epoch, (found, expected)) in losses.iter().zip(expected).enumerate() {
            assert!((found - expected).abs() <= 1e-6, "{what}, rank {rank}, epoch {epoch}: {found} against {expected}");
        }
        assert_eq!(parameters(model), first, "{what}: rank {rank}'s weights differ from rank 0's");
    }
    let difference = common::largest_difference(&first, &parameters(trained));
    assert!(difference <= 1e-5, "{what}: weights differ from one process's by {difference}");
}

fn models() -> Vec<Model> {
    [Architecture::Gcn, Architecture::Sage, Architecture::Gin, Architecture::Gat]
        .into_iter()
        .map(|architecture| initial_model(architecture, &[FEATURES, 16, CLASSES], 5).unwrap())
        .collect()
}

#[test]
fn ranks_train_as_one_process_on_the_cpu() {
    let data = dataset();
    let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    for model in models() {
        let (losses, trained) = one_process(&model, &data, &options);
        for method in [PartitionMethod::Range, PartitionMethod::Metis] {
            for ranks in 1..=4 {
                let partition = RankPartition::new(&data.graph, ranks, method).unwrap();
                let what = format!("{} over {ranks} ranks by {method}", model.architecture());
                same_training(&over_ranks(&model, &data, &partition, &options), &losses, &trained, &what);
            }
        }
    }
}

#[test]
fn unbalanced_parts_one_without_edges_or_training_nodes_train_as_one_process() {
    let data = dataset();
    // Rank 0 gets 10 nodes, rank 1 most of the graph, rank 2 the 40 nodes without edges, rank 3 two nodes the
    // mask leaves out.
    let owners = (0..NODES)
        .map(|node| match node {
            1 | 2 => 3,
            node if node < 10 => 0,
            node if node < NODES - 40 => 1,
            _ => 2,
        })
        .collect();
    let partition = RankPartition::from_owners(owners, 4, PartitionMethod::Range).unwrap();
    assert_eq!(partition.stats(&data.graph).unwrap()[2].edges, 0);
    let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    for model in models() {
        let (losses, trained) = one_process(&model, &data, &options);
        let what = format!("{} over unbalanced ranks", model.architecture());
        same_training(&over_ranks(&model, &data, &partition, &options), &losses, &trained, &what);
    }
}

#[cfg(feature = "simulator")]
#[test]
fn ranks_on_simulated_dpus_train_as_one_process() {
    let data = dataset();
    let options = EngineOptions {
        backend: Backend::Pim(upmem::BackendKind::Simulator),
        dpus: Some(8),
        tasklets: Some(4),
        ..EngineOptions::default()
    };
    let partition = RankPartition::new(&data.graph, 3, PartitionMethod::Metis).unwrap();
    // SAGE, and GAT (its attention through SDDMM and values per call on the DPUs).
    for model in [&models()[1], &models()[3]] {
        let (losses, trained) = one_process(model, &data, &options);
        let what = format!("{} on the simulator", model.architecture());
        same_training(&over_ranks(model, &data, &partition, &options), &losses, &trained, &what);
    }
}

#[test]
fn a_rank_refuses_features_of_another_rank() {
    let data = dataset();
    let partition = RankPartition::new(&data.graph, 2, PartitionMethod::Range).unwrap();
    let matrix = Architecture::Gcn.aggregation().matrix(&data.graph).unwrap();
    let block = partition.block(&matrix, 0).unwrap();
    let shared = Mailboxes::new(1);
    let build = |model: Model, rows: usize| {
        let targets = Targets::of_rank(vec![0; rows], vec![true; rows], CLASSES, rows).unwrap();
        let transport = RankTransport {
            exchange: Box::new(ThreadExchange { block: block.clone(), shared: shared.clone() }),
            sum: Box::new(ThreadSum { rank: 0, shared: shared.clone() }),
        };
        let features = Dense::zeros(rows, FEATURES);
        let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
        Trainer::distributed(model, &block, features, targets, adam(), &options, transport)
            .err()
            .map(|error| error.to_string())
    };
    let gcn = models().remove(0);
    assert_eq!(build(gcn.clone(), block.nodes.len()), None);
    let refused = build(gcn, NODES).unwrap();
    assert!(refused.contains("one per node of the rank"), "{refused}");
}
