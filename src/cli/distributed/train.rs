//! `pimgnn train --distributed`: rank 0 reads the inputs and hands out the parts, then full-batch training over
//! the ranks, each training on its nodes' rows; the ranks sum their gradients, so that every rank steps to the
//! same weights. Rank 0 prints each epoch's loss and accuracies (counted on every rank and summed), writes the
//! history and the model, and prints every rank's time per stage.

use std::time::Instant;

use anyhow::Context as _;
use pimgnn::distributed::mpi::{
    agree, broadcast, broadcast_model, gather_fixed, scatter, scatter_blocks, MpiHalo, MpiSum,
};
use pimgnn::distributed::{AllReduce as _, RankBlock, RankTransport};
use pimgnn::gnn::predicted_class;
use pimgnn::gnn::Model;
use pimgnn::train::{Stage, Targets, Trainer};
use pimgnn::Dense;

use super::ranks::{failed, per_rank_table, scatter_rows, start, Parts};
use super::TrainArgs;
use crate::cli::history::History;
use crate::cli::train::{describe, finish, load_inputs, optimizer, Accuracies, Evaluation, Inputs};

/// Runs `pimgnn train --distributed`.
pub fn train(args: &TrainArgs) -> anyhow::Result<()> {
    let (_universe, rank, ranks) = start()?;
    let started = Instant::now();
    let load = || load_inputs(args).map(Some).map_err(failed("input"));
    let inputs = agree(if rank == 0 { load() } else { Ok(None) })?;
    if let Some(inputs) = &inputs {
        println!("{}", describe(args, inputs));
    }
    let parts = inputs.as_ref().map(|inputs| {
        let matrix = inputs.model.architecture().aggregation().matrix(&inputs.graph).map_err(anyhow::Error::from);
        matrix.and_then(|matrix| Parts::new(&args.distributed.partition, &inputs.graph, &matrix, ranks))
    });
    let parts = agree(parts.transpose().map_err(failed("--partition")))?;
    let (block, features, model, evaluation, selected) = receive_part(inputs.as_ref(), parts.as_ref())?;
    let targets =
        agree(Targets::of_rank(evaluation.labels.clone(), evaluation.train.clone(), model.out_features(), selected))?;
    let options = args.pim_args.engine_options(args.backend.backend, Vec::new());
    let transport = RankTransport { exchange: Box::new(MpiHalo::new(&block)), sum: Box::new(MpiSum) };
    let trainer = Trainer::distributed(model, &block, features, targets, optimizer(args), &options, transport);
    let mut trainer = agree(trainer)?;
    let setup = started.elapsed();
    if let Some(parts) = &parts {
        println!("partition: {}", parts.partition);
        println!("plan (rank 0): {}", trainer.propagator().plan());
        println!("optimiser: {:?}", trainer.optimizer().kind());
    }

    // Rank 0 writes the history; the others learn whether it could, so that none waits for a rank that stopped.
    let history = match (&args.history, rank) {
        (Some(path), 0) => History::create(path).map(Some),
        _ => Ok(None),
    };
    let mut history = agree(history.map_err(failed("--history")))?;
    for epoch in 0..args.epochs {
        let result = agree(trainer.epoch()).with_context(|| format!("epoch {epoch}"))?;
        let accuracies = accuracies(&evaluation, &result.logits)?;
        let recorded = history.as_mut().map_or(Ok(()), |history| history.record(epoch, result.loss, &accuracies));
        agree(recorded.map_err(failed("--history")))?;
        if rank == 0 {
            log::info!("epoch {epoch:>4}: loss {:.6}, accuracy {accuracies}", result.loss);
        }
    }
    let timings = trainer.timings().clone();
    let logits = agree(trainer.logits())?;
    let accuracies = accuracies(&evaluation, &logits)?;

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

/// This rank's part of what rank 0 read (`inputs` and `parts` are `Some` there only): its block, its feature
/// rows, the model, its labels and masks (as an evaluation of its own rows), and the training nodes over all
/// ranks.
fn receive_part(
    inputs: Option<&Inputs>,
    parts: Option<&Parts>,
) -> pimgnn::Result<(RankBlock, Dense<f32>, Model, Evaluation, usize)> {
    let block = scatter_blocks(parts.map(|parts| &parts.blocks[..]))?;
    let features = scatter_rows(parts, inputs.map(|inputs| &inputs.features), block.nodes.len())?;
    let model = broadcast_model(inputs.map(|inputs| &inputs.model))?;
    let split = |values: Option<&[i64]>| parts.zip(values).map(|(parts, values)| parts.rows(values, 1));
    let labels = scatter(split(inputs.map(|inputs| &inputs.evaluation.labels[..])).as_deref())?;
    // A mask as 0 and 1; every rank knows from the arguments which masks there are.
    let mask = |mask: Option<&Vec<bool>>| -> pimgnn::Result<Vec<bool>> {
        let ones: Option<Vec<i64>> = mask.map(|mask| mask.iter().map(|&m| i64::from(m)).collect());
        Ok(scatter(split(ones.as_deref()).as_deref())?.into_iter().map(|one| one == 1).collect())
    };
    let evaluation = inputs.map(|inputs| &inputs.evaluation);
    let train = mask(evaluation.map(|evaluation| &evaluation.train))?;
    let has = broadcast(vec![evaluation.map_or(0, |e| u8::from(e.val.is_some()) | u8::from(e.test.is_some()) << 1)])[0];
    let val = if has & 1 != 0 { Some(mask(evaluation.and_then(|evaluation| evaluation.val.as_ref()))?) } else { None };
    let test =
        if has & 2 != 0 { Some(mask(evaluation.and_then(|evaluation| evaluation.test.as_ref()))?) } else { None };
    let selected = broadcast(vec![inputs.map_or(0, |inputs| inputs.train_mask.iter().filter(|&&m| m).count() as u64)]);
    Ok((block, features, model, Evaluation { labels, train, val, test }, selected[0] as usize))
}

/// The accuracies of every rank's `logits` (a row per node of its `evaluation`), counted on each and summed.
fn accuracies(evaluation: &Evaluation, logits: &Dense<f32>) -> pimgnn::Result<Accuracies> {
    let masks = [Some(&evaluation.train), evaluation.val.as_ref(), evaluation.test.as_ref()];
    // For each mask: the nodes it selects that are predicted right, and the nodes it selects.
    let mut counts = [0f64; 6];
    for (node, &label) in evaluation.labels.iter().enumerate() {
        let right = predicted_class(logits.row(node)) as i64 == label;
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
