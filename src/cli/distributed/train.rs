//! `pimgnn train --distributed`: full-batch training over the ranks, each training on its nodes' rows; the
//! ranks sum their gradients, so that every rank steps to the same weights. Rank 0 prints each epoch's loss and
//! accuracies (counted on every rank and summed), writes the history and the model, and prints every rank's
//! time per stage.

use std::time::Instant;

use anyhow::Context as _;
use pimgnn::distributed::mpi::{agree, gather_fixed, MpiHalo, MpiSum};
use pimgnn::distributed::{AllReduce as _, RankTransport};
use pimgnn::gnn::predicted_class;
use pimgnn::train::{Stage, Targets, Trainer};
use pimgnn::Dense;

use super::ranks::{failed, per_rank_table, rows_of, shared_partition, start};
use super::TrainArgs;
use crate::cli::history::History;
use crate::cli::train::{describe, finish, load_inputs, Accuracies, Evaluation, Inputs};

/// Runs `pimgnn train --distributed`.
pub fn train(args: &TrainArgs) -> anyhow::Result<()> {
    let (_universe, rank, ranks) = start()?;
    let started = Instant::now();
    let inputs = agree(load_inputs(args).map_err(failed("input")))?;
    if rank == 0 {
        println!("{}", describe(args, &inputs));
    }
    let Inputs { graph, model, features, labels, train_mask, evaluation, optimizer } = inputs;
    let partition = shared_partition(&args.distributed.partition, &graph, rank, ranks)?;
    let matrix = model.architecture().aggregation().matrix(&graph);
    let block = agree(matrix.and_then(|matrix| partition.block(&matrix, rank)))?;
    drop(graph);
    let selected = train_mask.iter().filter(|&&m| m).count();
    let local_labels = block.nodes.iter().map(|&node| labels[node as usize]).collect();
    let local_mask = block.nodes.iter().map(|&node| train_mask[node as usize]).collect();
    let targets = agree(Targets::of_rank(local_labels, local_mask, model.out_features(), selected))?;
    let options = args.pim_args.engine_options(args.backend.backend, Vec::new());
    let trainer = rows_of(&features, &block.nodes).and_then(|features| {
        let transport = RankTransport { exchange: Box::new(MpiHalo::new(&block)), sum: Box::new(MpiSum) };
        Trainer::distributed(model, &block, features, targets, optimizer, &options, transport)
    });
    let mut trainer = agree(trainer)?;
    let setup = started.elapsed();
    if rank == 0 {
        println!("partition: {partition}");
        println!("plan (rank 0): {}", trainer.propagator().plan());
        println!("optimiser: {:?}", trainer.optimizer().kind());
    }

    let mut history = match (&args.history, rank) {
        (Some(path), 0) => Some(History::create(path)?),
        _ => None,
    };
    for epoch in 0..args.epochs {
        let result = agree(trainer.epoch()).with_context(|| format!("epoch {epoch}"))?;
        let accuracies = accuracies(&evaluation, &result.logits, &block.nodes)?;
        if let Some(history) = &mut history {
            history.record(epoch, result.loss, &accuracies)?;
        }
        if rank == 0 {
            log::info!("epoch {epoch:>4}: loss {:.6}, accuracy {accuracies}", result.loss);
        }
    }
    let timings = trainer.timings().clone();
    let logits = agree(trainer.logits())?;
    let accuracies = accuracies(&evaluation, &logits, &block.nodes)?;

    // Per rank: nodes, halo nodes, then each stage's wall and predicted seconds.
    let mut report = vec![block.nodes.len() as f64, block.halo.len() as f64];
    for stage in Stage::ALL {
        let time = timings.get(stage);
        report.extend([time.wall.as_secs_f64(), time.on_hardware().as_secs_f64()]);
    }
    let Some(reports) = gather_fixed(&report) else { return Ok(()) };
    let reports: Vec<&[f64]> = reports.chunks(report.len()).collect();
    let per_epoch = |seconds: f64| seconds * 1e3 / args.epochs as f64;
    let ms = |values: &[f64], at: usize| format!("{:.2} ({:.2})", per_epoch(values[at]), per_epoch(values[at + 1]));
    let mut rows = vec![
        ("nodes".to_owned(), reports.iter().map(|values| values[0].to_string()).collect()),
        ("halo nodes".to_owned(), reports.iter().map(|values| values[1].to_string()).collect()),
    ];
    for (at, stage) in Stage::ALL.into_iter().enumerate() {
        let cells = reports.iter().map(|values| ms(values, 2 + 2 * at)).collect();
        rows.push((format!("{stage}, ms per epoch (predicted)"), cells));
    }
    let total = |values: &[f64], first: usize| values[2 + first..].iter().step_by(2).sum::<f64>();
    let cells =
        reports.iter().map(|values| format!("{:.2} ({:.2})", per_epoch(total(values, 0)), per_epoch(total(values, 1))));
    rows.push(("total, ms per epoch (predicted)".to_owned(), cells.collect()));
    println!("{}", per_rank_table(ranks, rows));
    let slowest = |first| reports.iter().map(|values| total(values, first)).fold(0.0, f64::max);
    println!(
        "per epoch over {ranks} ranks: {:.2} ms predicted (the slowest rank; aggregation and transfers on PIM \
         hardware, between ranks and host steps at wall time), {:.2} ms wall; setup {:.2} s",
        per_epoch(slowest(1)),
        per_epoch(slowest(0)),
        setup.as_secs_f64()
    );
    finish(args, &trainer, &accuracies)
}

/// The accuracies of every rank's `logits` (a row per node of `nodes`), counted on each and summed.
fn accuracies(evaluation: &Evaluation, logits: &Dense<f32>, nodes: &[u32]) -> pimgnn::Result<Accuracies> {
    let masks = [Some(&evaluation.train), evaluation.val.as_ref(), evaluation.test.as_ref()];
    // For each mask: the nodes it selects that are predicted right, and the nodes it selects.
    let mut counts = [0f64; 6];
    for (row, &node) in nodes.iter().enumerate() {
        let node = node as usize;
        let right = predicted_class(logits.row(row)) as i64 == evaluation.labels[node];
        for (at, mask) in masks.iter().enumerate() {
            if mask.is_some_and(|mask| mask[node]) {
                counts[2 * at] += f64::from(u8::from(right));
                counts[2 * at + 1] += 1.0;
            }
        }
    }
    MpiSum.sum(&mut counts)?;
    let share = |at: usize| if counts[2 * at + 1] > 0.0 { counts[2 * at] / counts[2 * at + 1] } else { 0.0 };
    Ok(Accuracies {
        train: share(0),
        val: evaluation.val.as_ref().map(|_| share(1)),
        test: evaluation.test.as_ref().map(|_| share(2)),
    })
}
