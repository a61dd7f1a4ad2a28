//! Each layer's dense steps overlapped with the PIM merge (`Overlap::Overlapped`, the default) give the same
//! logits, bit for bit, as run after the whole aggregation (`Overlap::Sequential`): GCN, GraphSAGE and GIN
//! models whose layers aggregate first and transform first, on the CPU and simulator backends, exact and
//! quantized; and the timing report names the overlapped steps.

mod common;

use pimgnn::gnn::{Aggregator, Architecture, Backend, Dtype, EngineOptions, Model, Overlap};
use pimgnn::{Dense, Result};
use upmem::BackendKind;

const NODES: usize = 1500;
const FEATURES: usize = 40;

/// A model of `architecture` whose layers widen (aggregate first), keep and narrow (transform first).
fn model(architecture: Architecture) -> Model {
    let shape = common::RandomLayers {
        sage_root_bias: |at| at == 1,
        gin_hidden: |at, outputs| if at == 2 { 20 } else { outputs },
        gat_heads: |_| (1, true),
    };
    common::random_model(architecture, &[FEATURES, 48, 24, 9], &mut common::rng(11), shape)
}

fn features() -> Dense<f32> {
    Dense::from_vec(NODES, FEATURES, common::uniform(&mut common::rng(12), NODES * FEATURES)).unwrap()
}

fn aggregator(model: &Model, backend: Backend, dtype: Dtype) -> Aggregator {
    let graph = pimgnn::graph::rmat(NODES, 12 * NODES, 5);
    let matrix = model.architecture().aggregation().matrix(&graph).unwrap();
    let options = EngineOptions {
        backend,
        dpus: (backend == Backend::Pim(BackendKind::Simulator)).then_some(64),
        widths: model.aggregation_widths(),
        ..EngineOptions::default()
    };
    Aggregator::new(matrix, dtype, &options).unwrap()
}

fn bits(logits: &Dense<f32>) -> Vec<u32> {
    logits.as_slice().iter().map(|v| v.to_bits()).collect()
}

/// Runs `model` both ways on `backend`; returns the overlapped run's report after checking the logits agree.
fn same_both_ways(architecture: Architecture, backend: Backend, dtype: Dtype) -> Result<pimgnn::gnn::Inference> {
    let model = model(architecture);
    let mut aggregator = aggregator(&model, backend, dtype);
    let sequential = model.forward_with(&features(), &mut aggregator, Overlap::Sequential)?;
    let overlapped = model.forward_with(&features(), &mut aggregator, Overlap::Overlapped)?;
    assert!(
        bits(&sequential.logits) == bits(&overlapped.logits),
        "{architecture} on {backend} in {dtype}: the overlapped logits differ"
    );
    Ok(overlapped)
}

fn overlapped_steps(inference: &pimgnn::gnn::Inference) -> Vec<String> {
    let phases = inference.layers.iter().flat_map(|layer| &layer.phases);
    phases.filter(|phase| phase.name.starts_with("overlapped: merge + ")).map(|phase| phase.name.to_string()).collect()
}

#[test]
fn overlap_keeps_every_model_bit_for_bit_on_the_cpu() {
    for architecture in [Architecture::Gcn, Architecture::Sage, Architecture::Gin] {
        let inference = same_both_ways(architecture, Backend::Cpu, Dtype::F32).unwrap();
        assert!(overlapped_steps(&inference).is_empty(), "the CPU backend computes M X whole: nothing overlaps");
    }
}

#[test]
fn overlap_keeps_every_model_bit_for_bit_on_the_simulator() {
    for architecture in [Architecture::Gcn, Architecture::Sage, Architecture::Gin] {
        same_both_ways(architecture, Backend::Pim(BackendKind::Simulator), Dtype::F32).unwrap();
    }
}

#[test]
fn overlap_keeps_quantized_aggregation_bit_for_bit() {
    same_both_ways(Architecture::Gcn, Backend::Pim(BackendKind::Simulator), Dtype::I16).unwrap();
    same_both_ways(Architecture::Sage, Backend::Cpu, Dtype::I8).unwrap();
}

#[test]
fn the_timing_report_names_what_overlapped_the_merge() {
    let inference = same_both_ways(Architecture::Gcn, Backend::Pim(BackendKind::Simulator), Dtype::F32).unwrap();
    assert_eq!(
        overlapped_steps(&inference),
        [
            "overlapped: merge + transform (GEMM), ReLU, next layer's transform (GEMM)",
            "overlapped: merge + bias, ReLU, next layer's transform (GEMM)",
            "overlapped: merge + bias",
        ]
    );
    for layer in &inference.layers {
        let names: Vec<&str> = layer.phases.iter().map(|phase| phase.name.as_ref()).collect();
        assert_eq!(names[..3], ["send X", "kernel", "gather"], "{}: nothing else before the stage", layer.name);
        assert_eq!(names.len(), 4, "{}: the merge and the transforms are counted once, in the stage", layer.name);
        assert!(layer.phases[3].predicted.is_some(), "{}: the overlapped stage has a predicted time", layer.name);
    }
    let sequential = {
        let model = model(Architecture::Gcn);
        let mut aggregator = aggregator(&model, Backend::Pim(BackendKind::Simulator), Dtype::F32);
        model.forward_with(&features(), &mut aggregator, Overlap::Sequential).unwrap()
    };
    let names: Vec<&str> = sequential.layers[1].phases.iter().map(|phase| phase.name.as_ref()).collect();
    assert_eq!(names, ["transform (GEMM)", "send X", "kernel", "gather", "merge", "bias, ReLU"]);
}
