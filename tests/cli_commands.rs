//! `pimgnn info`, `infer` on the simulator and the benchmarks `bench infer` and `bench spmm`, end to end at the
//! smallest sizes they take, each checked for what it prints: the backend and plan lines, the tables' rows and
//! their figures, accuracies and differences computed again here, and the logits written.

mod common;

use std::path::Path;

use common::cli::{finite, line_after, pimgnn, table_cells, table_rows, write_dataset, NODES};
use pimgnn::gnn::{accuracy, inputs, Aggregator, Backend, Dtype, EngineOptions, Model};
use pimgnn::io::npy;
use pimgnn::Dense;

/// `pimgnn args`, which must succeed; returns what it printed.
fn succeeds(dir: &Path, args: &[&str]) -> String {
    let output = pimgnn(dir, args);
    assert!(output.status.success(), "pimgnn {args:?} failed");
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

const WORKLOAD: [&str; 6] = ["--graph", "graph.mtx", "--features", "features.npy", "--model", "gcn.safetensors"];

/// DPUs and tasklets of the simulator runs: a few, so that the runs stay short and still spread over DPUs.
const PIM: [&str; 6] = ["--backend", "sim", "--dpus", "8", "--tasklets", "4"];

// It checks the simulator's defaults, which only a build with the simulator has.
#[cfg(feature = "simulator")]
#[test]
fn info_names_the_cpu_kernels_the_backends_and_the_simulators_settings() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_pimgnn"));
    command.arg("info").env_remove("UPMEM_BACKEND").env("UPMEM_PROFILE", "nrThreadsPerRank=1").current_dir(dir.path());
    let output = common::cli::run_alone(&mut command);
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let (f32_kernel, integer_kernel) = (pimgnn::cpu::kernel::<f32>(), pimgnn::cpu::kernel::<i32>());
    let threads = rayon::current_num_threads();
    let cpu = format!("{threads} threads; SpMM kernel for f32: {f32_kernel}, for integers: {integer_kernel}");
    assert_eq!(line_after(&stdout, "CPU: available, "), cpu);
    let hardware = line_after(&stdout, "UPMEM hardware: ");
    assert_eq!(hardware.starts_with("available"), upmem::hardware_present(), "{hardware}");
    let workers = upmem::sim::SimConfig::new(upmem::Topology::full_server()).workers;
    let simulator = format!("2560 DPUs (40 ranks of 64 DPUs) by default, {workers} worker processes, hang limit 60 s");
    assert_eq!(line_after(&stdout, "simulator: available, "), simulator);
    assert!(stdout.contains("\n           v1A DPUs (24 hardware tasklets each), WRAM 64 KiB and MRAM 64 MiB per DPU\n"));
    assert!(stdout.lines().any(|line| line == "UPMEM_PROFILE=nrThreadsPerRank=1"), "{stdout}");
    let auto = if upmem::hardware_present() { "hardware" } else { "simulator" };
    assert_eq!(line_after(&stdout, "PIM SpMM engine: available, `--backend pim` runs on "), format!("`{auto}`"));
}

/// The logits of the test workload's model with aggregation in `dtype` on the CPU backend.
fn cpu_logits(dir: &Path, dtype: Dtype) -> Dense<f32> {
    let model = Model::load(&dir.join("gcn.safetensors")).unwrap();
    let graph = inputs::read_graph(&dir.join("graph.mtx")).unwrap();
    let features = inputs::read_features(&dir.join("features.npy"), NODES, model.in_features()).unwrap();
    let matrix = model.architecture().aggregation().matrix(&graph).unwrap();
    let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    let mut aggregator = Aggregator::new(matrix, dtype, &options).unwrap();
    model.forward(&features, &mut aggregator).unwrap().logits
}

/// What one `infer` run on the simulator printed, and the logits it wrote.
struct Inference {
    stdout: String,
    logits: Dense<f32>,
}

/// `infer` on the simulator's 8 DPUs with aggregation in `dtype`, accuracy over the test mask, the logits
/// written, and `extra` options.
fn infer_on_the_simulator(dir: &Path, dtype: &str, extra: &[&str]) -> Inference {
    let output = format!("{dtype}{}.npy", extra.join(""));
    let mut args = vec!["infer"];
    args.extend(WORKLOAD);
    args.extend(PIM);
    args.extend(["--dtype", dtype, "--labels", "labels.npy", "--mask", "test.npy", "--output", &output]);
    args.extend(extra);
    let stdout = succeeds(dir, &args);
    let logits = npy::read_dense_f32(&dir.join(&output)).unwrap();
    assert_eq!(line_after(&stdout, "logits: "), format!("{output} ({NODES} x 4 float32)"));
    Inference { stdout, logits }
}

/// The backend, plan and load-balance lines, the timing table, the model's predicted time, and the accuracy
/// (computed again from the logits written) of an `infer` run in `dtype` on 8 DPUs of 4 tasklets.
fn check_inference(dir: &Path, run: &Inference, dtype: &str) {
    let stdout = &run.stdout;
    assert_eq!(line_after(stdout, "backend: "), "simulator (asked for simulator)");
    let plan = line_after(stdout, "plan: ");
    assert!(plan.starts_with(&format!("GCN-normalised D^-1/2 (A + I) D^-1/2 aggregation in {dtype}")), "{plan}");
    assert!(plan.contains(" simulator DPUs (") && plan.contains(",tasklets=4 (predicted "), "{plan}");
    assert!(plan.contains(", transfers as measured with SDK 2025.1 on a 40-rank server"), "{plan}");
    assert!(plan.contains("; PyGim's default csr:") && plan.contains(",x=whole,tasklets=4 predicted "), "{plan}");
    let balance: Vec<u64> = line_after(stdout, "load balance: nonzeros per DPU min ")
        .split([' ', '/'])
        .filter_map(|word| word.parse().ok())
        .collect();
    assert!(balance.len() == 3 && balance[0] <= balance[1] && balance[1] <= balance[2], "{balance:?}");

    assert_eq!(table_rows(stdout, "layer"), [["layer", "step", "wall (ms)", "predicted on PIM hardware (ms)"]]);
    for layer in ["conv1 GCNConv 12 -> 8", "conv2 GCNConv 8 -> 4"] {
        assert_eq!(table_rows(stdout, layer).len(), 1, "no row of {layer}:\n{stdout}");
    }
    let total = table_rows(stdout, "all layers");
    assert_eq!(total.len(), 1, "{stdout}");
    assert_eq!(total[0][1], "inference total");
    let (wall, predicted) = (finite(total[0][2]), finite(total[0][3]));
    assert!(wall > 0.0 && predicted > 0.0, "{total:?}");
    let model = line_after(stdout, "model: ");
    assert_eq!(
        model,
        format!(
            "{predicted:.2} ms predicted on PIM hardware (host steps at wall time), {wall:.2} ms wall on backend `simulator`"
        )
    );

    let labels = npy::read_labels(&dir.join("labels.npy")).unwrap();
    let mask = inputs::read_mask(&dir.join("test.npy"), NODES).unwrap();
    let expected = accuracy(&run.logits, &labels, &mask).unwrap();
    assert_eq!(line_after(stdout, "accuracy: "), format!("{expected:.4} over {} nodes", NODES / 2));
}

/// The step of every row of the timing table in `stdout`.
fn steps(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix('│')?.strip_suffix('│'))
        .filter_map(|line| Some(line.split('┆').nth(1)?.trim().to_owned()))
        .collect()
}

#[test]
fn infer_on_the_simulator_overlapped_or_not_gives_the_cpus_logits() {
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    let overlapped = infer_on_the_simulator(dir.path(), "f32", &[]);
    check_inference(dir.path(), &overlapped, "f32");
    let sequential = infer_on_the_simulator(dir.path(), "f32", &["--no-overlap"]);
    check_inference(dir.path(), &sequential, "f32");
    assert_eq!(overlapped.logits, sequential.logits, "--no-overlap gives the same logits, bit for bit");

    let overlapped_steps = steps(&overlapped.stdout);
    assert!(
        overlapped_steps.iter().any(|step| step.starts_with("overlapped: merge + bias, ReLU")),
        "{overlapped_steps:?}"
    );
    assert!(!overlapped_steps.iter().any(|step| step == "merge"), "{overlapped_steps:?}");
    let sequential_steps = steps(&sequential.stdout);
    assert_eq!(sequential_steps.iter().filter(|step| *step == "merge").count(), 2, "{sequential_steps:?}");
    assert!(!sequential_steps.iter().any(|step| step.starts_with("overlapped")), "{sequential_steps:?}");

    // Sums in another order than the CPU's: 1.8e-7 here, bound with a fivefold margin.
    let cpu = cpu_logits(dir.path(), Dtype::F32);
    let difference = common::largest_difference(overlapped.logits.as_slice(), cpu.as_slice());
    assert!(difference <= 1e-6, "{difference:e}");
}

/// `auto` prints the model's pick with the CPU time measured here and the predictions; without hardware it runs
/// PIM on the simulator whatever the pick, and says so.
#[test]
fn infer_with_auto_prints_the_pick_and_runs_the_simulator_without_hardware() {
    if upmem::hardware_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    let mut args = vec!["infer"];
    args.extend(WORKLOAD);
    args.extend(["--backend", "auto", "--dpus", "8", "--tasklets", "4"]);
    let stdout = succeeds(dir.path(), &args);
    assert_eq!(line_after(&stdout, "backend: "), "simulator (asked for auto)");
    let pick = line_after(&stdout, "model's pick for the modelled server: ");
    assert!(["cpu: ", "pim: ", "split: "].iter().any(|name| pick.starts_with(name)), "{pick}");
    assert!(
        pick.contains(" ms (measured here on ") && pick.contains(" ms (predicted on 8 DPUs, transfers as"),
        "{pick}"
    );
    assert!(pick.ends_with("; there is no UPMEM hardware here, so the simulator runs PIM whatever the pick"), "{pick}");
}

/// `bench transfers` fits the transfer model to what it measured and writes it as a profile; named by
/// `UPMEM_TRANSFER_PROFILE`, the profile is what `infer` predicts with, and a broken one is refused by name.
#[test]
fn a_transfer_profile_written_by_the_benchmark_is_what_predictions_use() {
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    let bench = ["bench", "transfers", "--backend", "sim", "--ranks", "1,2,4", "--repeats", "1", "--profile", "p.json"];
    let stdout = succeeds(dir.path(), &bench);
    for operation in ["push", "gather", "broadcast"] {
        assert_eq!(table_rows(&stdout, operation).len(), 3, "{operation} at each rank count:\n{stdout}");
    }
    assert!(line_after(&stdout, "push: ").ends_with(" GB/s (cap 6.08)"), "the simulator's model, up to 4 ranks");
    assert_eq!(line_after(&stdout, "profile: "), "p.json (use it with UPMEM_TRANSFER_PROFILE=p.json)");

    let infer = |profile: &str| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_pimgnn"));
        command.current_dir(dir.path()).arg("infer").args(WORKLOAD).args(PIM);
        command.env_remove("UPMEM_BACKEND").env("UPMEM_TRANSFER_PROFILE", profile);
        common::cli::run_alone(&mut command)
    };
    let profiled = infer("p.json");
    assert!(profiled.status.success());
    let plan = line_after(std::str::from_utf8(&profiled.stdout).unwrap(), "plan: ").to_owned();
    let source = "transfers as measured with pimgnn bench transfers on simulator, 65536 bytes per DPU, [1, 2, 4] ranks";
    assert!(plan.contains(source), "{plan}");

    std::fs::write(dir.path().join("bad.json"), "{\"source\": 1}").unwrap();
    let refused = infer("bad.json");
    assert!(!refused.status.success());
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(stderr.contains("transfer profile bad.json: invalid type: integer `1`"), "{stderr}");
}

/// Quantized aggregation sums integers, exactly: the simulator's logits are the CPU's, bit for bit, in each type.
#[test]
fn infer_on_the_simulator_quantizes_to_the_dtype_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    for (name, dtype) in [("i32", Dtype::I32), ("i16", Dtype::I16), ("i8", Dtype::I8)] {
        let run = infer_on_the_simulator(dir.path(), name, &[]);
        check_inference(dir.path(), &run, name);
        assert!(line_after(&run.stdout, "plan: ").contains("; features quantized to +-"), "{name}");
        // Quantizing is a host step: the predicted total counts it at its wall time, and says so.
        let quantize: Vec<_> = table_cells(&run.stdout).into_iter().filter(|cells| cells[1] == "quantize").collect();
        assert_eq!(quantize.len(), 2, "one per layer:\n{}", run.stdout);
        for row in quantize {
            assert_eq!(row[3], format!("{} (host, wall)", row[2]), "{name}");
        }
        assert_eq!(run.logits, cpu_logits(dir.path(), dtype), "{name}");
    }
}

#[test]
fn bench_infer_times_the_cpu_and_the_simulator_on_the_same_outputs() {
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    let mut args = vec!["bench", "infer"];
    args.extend(WORKLOAD);
    args.extend(["--runs", "1", "--dpus", "8", "--tasklets", "4", "--python", "no-such-python", "--dtype", "i8"]);
    let stdout = succeeds(dir.path(), &args);
    assert!(line_after(&stdout, "PIM plan (f32): PIM SpMM on ").contains(",tasklets=4 (predicted "), "{stdout}");
    assert!(line_after(&stdout, "PIM plan (i8): PIM SpMM on ").contains(", i8, plan "), "{stdout}");
    // Sums in another order than the CPU's: 1.8e-7 here, bound with a fivefold margin.
    let difference = finite(line_after(&stdout, "largest difference between the CPU and PIM backends' f32 outputs: "));
    assert!(difference <= 1e-6, "{difference:e}");
    assert!(line_after(&stdout, "PyTorch comparison skipped: ").contains("no-such-python"), "{stdout}");

    let paths = [
        "pimgnn, CPU backend",
        "pimgnn, PIM backend (simulator)",
        "pimgnn, CPU backend, i8",
        "pimgnn, PIM backend (simulator), i8",
    ];
    // The comparison's rows (5 columns; the quantization table names the integer paths too).
    let rows: Vec<Vec<_>> =
        paths.iter().map(|path| table_rows(&stdout, path).into_iter().filter(|row| row.len() == 5).collect()).collect();
    assert!(rows.iter().all(|rows| rows.len() == 1), "{stdout}");
    for row in rows.iter().map(|rows| &rows[0]) {
        assert!(finite(row[1]) > 0.0 && finite(row[2]) >= 0.0, "{row:?}");
        assert!(finite(row[3].strip_suffix('x').expect("a ratio")) > 0.0, "{row:?}");
    }
    assert_eq!((rows[0][0][3], rows[0][0][4]), ("1.00x", "-"), "the CPU is the baseline, not predicted");
    assert!(finite(rows[1][0][4]) > 0.0, "the PIM prediction: {:?}", rows[1][0]);
    assert!(finite(rows[3][0][4]) > 0.0, "the i8 PIM prediction: {:?}", rows[3][0]);

    // Every layer of every path, predicted on PIM only.
    let layers: Vec<_> = table_cells(&stdout).into_iter().filter(|cells| cells[0].starts_with("conv")).collect();
    assert_eq!(layers.len(), 2 * paths.len(), "{stdout}");
    for layer in &layers {
        assert!(finite(layer[2]) >= 0.0, "{layer:?}");
        assert_eq!(layer[3] == "-", layer[1].contains("CPU"), "{layer:?}");
    }
    // i8 against f32: the same error on both backends (the same quantized sums), most classes kept.
    let quantized: Vec<_> =
        table_cells(&stdout).into_iter().filter(|cells| cells.len() == 3 && cells[0].ends_with(", i8")).collect();
    assert_eq!(quantized.len(), 2, "{stdout}");
    assert_eq!(quantized[0][1], quantized[1][1], "{stdout}");
    let error = finite(quantized[0][1]);
    assert!(error > 0.0 && error < 0.5, "{quantized:?}");
    let kept = finite(quantized[0][2].strip_suffix('%').expect("a percentage"));
    assert!(kept > 50.0 && kept <= 100.0, "{quantized:?}");
    assert!(finite(line_after(&stdout, "peak memory: ").split(' ').next().unwrap()) > 0.0, "{stdout}");
}

/// A dataset's shape: ogbn-arxiv's nodes, edges, 128 features and 40 classes, through a seeded 2-layer GCN.
#[test]
fn infer_generates_a_workload_of_a_datasets_size() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = succeeds(dir.path(), &["infer", "--workload", "arxiv", "--backend", "cpu", "--output", "logits.npy"]);
    let workload = line_after(&stdout, "workload: generated: arxiv (OGB, ogbn-arxiv), ");
    assert!(
        workload.starts_with("power-law graph of 169343 nodes and 1166243 edges (seed 1), 128 features"),
        "{workload}"
    );
    assert!(workload.ends_with("2-layer GCN [128, 256, 40] with seeded weights"), "{workload}");
    let logits = npy::read_dense_f32(&dir.path().join("logits.npy")).unwrap();
    assert_eq!((logits.rows(), logits.cols()), (169_343, 40));
    assert!(logits.as_slice().iter().all(|v| v.is_finite()));
    let inputs = table_cells(&stdout).into_iter().find(|cells| cells[1] == "inputs (read or generated)");
    assert!(finite(inputs.expect("an inputs row")[2]) > 0.0, "{stdout}");
}

#[test]
fn bench_spmm_runs_each_width_in_each_type_under_each_schedule_and_matches_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    let args = ["bench", "spmm", "--graph", "graph.mtx", "--features", "8,20", "--schedules", "modelled,fast"];
    let stdout = succeeds(dir.path(), &[&args[..], &PIM[..], &["--dtype", "f32,i8"]].concat());
    let threads = rayon::current_num_threads();
    let graph =
        format!("graph.mtx ({NODES} nodes, 1500 nonzeros); 8 DPUs x 4 tasklets; f32, i8; CPU on {threads} threads");
    assert_eq!(line_after(&stdout, "graph: "), graph);
    let header = table_rows(&stdout, "F");
    assert_eq!(header.len(), 1, "{stdout}");
    assert_eq!((header[0][1], header[0][5]), ("type", "sim schedule"));
    assert_eq!(header[0][10], "auto's pick: CPU (sampled) / PIM / split ms");
    assert_eq!(header[0].last(), Some(&"max rel. error (against f32)"));
    for width in ["8", "20"] {
        let rows = table_rows(&stdout, width);
        let runs: Vec<(&str, &str)> = rows.iter().map(|row| (row[1], row[5])).collect();
        assert_eq!(runs, [("f32", "modelled"), ("f32", "fast"), ("i8", "modelled"), ("i8", "fast")], "F = {width}");
        for row in &rows {
            assert!(row[6].starts_with("csr:") || row[6].starts_with("coo:"), "the plan run: {row:?}");
            assert!(finite(row[2]) >= 0.0 && finite(row[3]) > 0.0 && finite(row[7]) > 0.0, "{row:?}");
            assert!(["cpu", "pim", "split"].contains(&row[10]), "auto's pick: {row:?}");
            let balance: Vec<f64> = row[12].split(" / ").map(finite).collect();
            assert!(balance.len() == 3 && balance[0] <= balance[1] && balance[1] <= balance[2], "{row:?}");
            // f32 sums in another order than the CPU's: 2.7e-7 here, bound with a fourfold margin. i8: X gets
            // 127 levels (half a level is 0.4% of the largest |x|) and a row's rounding errors add up: 4.7e-3
            // here, bound 1.5e-2, 3 times that.
            let (error, bound) = (finite(row[14]), if row[1] == "f32" { 1e-6 } else { 1.5e-2 });
            assert!(error <= bound, "F = {width}, {} {}: {error:e}", row[1], row[5]);
        }
        for at in [0, 2] {
            assert!(finite(rows[at][13]) > 0.0, "the modelled schedule's cycles: {:?}", rows[at]);
            assert_eq!(rows[at + 1][13], "-", "the fast schedule models no cycles");
        }
    }
}

#[test]
fn bench_quantize_times_every_conversion_against_a_parallel_copy() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = succeeds(dir.path(), &["bench", "quantize", "--values", "100000", "--repeats", "1"]);
    assert!(stdout.starts_with("100000 f32 values (0.4 MB)"), "{stdout}");
    let copy = table_rows(&stdout, "parallel memcpy (f32 to f32)");
    assert_eq!(copy.len(), 1, "{stdout}");
    assert_eq!(copy[0][3], "1.00x");
    for conversion in
        ["largest |x| (scan)", "round to i32", "round to i16", "round to i8", "back to f32, in place (from i32 sums)"]
    {
        let rows = table_rows(&stdout, conversion);
        assert_eq!(rows.len(), 1, "no `{conversion}` row in\n{stdout}");
        assert!(finite(rows[0][1]) >= 0.0 && finite(rows[0][2]) > 0.0, "{:?}", rows[0]);
        assert!(rows[0][3].ends_with('x'), "{:?}", rows[0]);
    }
    let refused = pimgnn(dir.path(), &["bench", "quantize", "--values", "0"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--values must be at least 1"));
}

#[cfg(feature = "simulator")]
#[test]
fn bench_kernels_measures_each_kernel_against_the_dpus_lower_bound() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["bench", "kernels", "--rows", "64", "--row-nonzeros", "4", "--features", "16,64"];
    let stdout = succeeds(dir.path(), &args);
    assert!(stdout.starts_with("one simulated DPU, 16 tasklets, 64 rows of 4 nonzeros"), "{stdout}");
    // Lower bounds: the multiply-add's (3, 9, 32, 246) and a nonzero's 11 over the features; and the bytes of a
    // feature.
    let bounds = [("i8", 3.0, 1.0), ("i16", 9.0, 2.0), ("i32", 32.0, 4.0), ("f32", 246.0, 4.0)];
    for (kernel, mac, size) in bounds {
        for format in ["csr", "coo"] {
            let rows = table_rows(&stdout, &format!("{kernel} {format}"));
            // X by column for every type, and per nonzero for i8 and i16, at each width; Y in accumulators, and
            // for i8 also in 16 bits.
            let x_layouts: &[&str] = if size <= 2.0 { &["by column", "per nonzero"] } else { &["by column"] };
            let y_bits: &[f64] = if kernel == "i8" { &[32.0, 16.0] } else { &[32.0] };
            let layouts: Vec<(&str, f64)> =
                y_bits.iter().flat_map(|&y| x_layouts.iter().map(move |&x| (x, y))).collect();
            assert_eq!(rows.len(), 2 * layouts.len(), "{kernel} {format} in\n{stdout}");
            let expected = [16.0, 64.0].into_iter().flat_map(|features| layouts.iter().map(move |&xy| (features, xy)));
            for (row, (features, (layout, y_bits))) in rows.iter().zip(expected) {
                assert_eq!((row[1], finite(row[2]), finite(row[3])), (layout, y_bits, features), "{row:?}");
                let row = &row[1..];
                let bound = finite(row[3]);
                assert!((bound - (mac + 11.0 / features)).abs() < 0.01, "{row:?}");
                let (instructions, cycles) = (finite(row[4]), finite(row[5]));
                // No kernel beats the DPU's bound, and a full pipeline runs at most one instruction a cycle.
                assert!(bound <= instructions && instructions <= cycles, "{row:?}");
                let (ratio, mark) = row[6].split_once(' ').unwrap_or((row[6], ""));
                let ratio = finite(ratio);
                assert!((ratio - cycles / bound).abs() < 0.01, "{row:?}");
                // The DMA floor, a quarter of a row's Y (61 + bytes / 2) per nonzero besides X: by column a nonzero's
                // X row (77 + bytes / 2); per nonzero, for each unit of 8 bytes, a 32nd of the reads of 32 units and
                // 32 values (77 each) and their 12 bytes.
                let y_size = y_bits / 8.0;
                let floor = if layout == "by column" {
                    (77.0 + features * size / 2.0 + (61.0 + features * y_size / 2.0) / 4.0) / features
                } else {
                    let units = features * size / 8.0;
                    (units * (2.0 * 77.0 / 32.0 + 6.0) + (units * 61.0 + features * y_size / 2.0) / 4.0) / features
                };
                assert!((finite(row[7]) - floor).abs() < 0.01, "{row:?}");
                // Over 1.3x the bound is marked (the table rounds: a ratio printed as 1.30 may be either side),
                // twice where the DMA floor alone is.
                if (ratio - 1.3).abs() > 0.005 {
                    assert_eq!(mark.starts_with('*'), ratio > 1.3, "{row:?}");
                }
                assert_eq!(mark == "**", mark.starts_with('*') && floor / bound > 1.3, "{row:?}");
                assert!(row[9].contains(if kernel == "f32" { "float mul" } else { "load/store" }), "{row:?}");
            }
        }
    }
    let refused = pimgnn(dir.path(), &["bench", "kernels", "--dtype", "f64"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("invalid value 'f64'"));
}

#[test]
fn bench_cpu_gather_times_the_spmm_against_the_plain_gather() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["bench", "cpu-gather", "--nodes", "3000", "--edges", "30000", "--features", "24", "--runs", "1"];
    let stdout = succeeds(dir.path(), &args);
    assert!(stdout.starts_with("Erdős–Rényi graph: 3000 nodes, 30000 nonzeros; F = 24;"), "{stdout}");
    let gather = table_rows(&stdout, "plain gather of the rows, added up (tight loop)");
    assert!(gather.len() == 1 && gather[0][3] == "1.00x", "{stdout}");
    let spmm: Vec<_> =
        table_cells(&stdout).into_iter().filter(|cells| cells[0].starts_with("pimgnn CPU SpMM (")).collect();
    assert_eq!(spmm.len(), 1, "{stdout}");
    let cells = &spmm[0];
    assert!(finite(cells[1]) > 0.0 && finite(cells[2]) > 0.0 && cells[3].ends_with('x'), "{cells:?}");
}

#[test]
fn partition_prints_each_rank_and_saves_a_partition_that_loads_back() {
    use pimgnn::distributed::{PartitionMethod, RankPartition};

    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    let graph = inputs::read_graph(&dir.path().join("graph.mtx")).unwrap();
    let stdout = succeeds(dir.path(), &["partition", "--graph", "graph.mtx", "--ranks", "3", "--method", "metis"]);
    assert!(stdout.contains(&format!("{NODES} nodes over 3 ranks by metis:")), "{stdout}");
    let expected = RankPartition::new(&graph, 3, PartitionMethod::Metis).unwrap().stats(&graph).unwrap();
    for (rank, stats) in expected.iter().enumerate() {
        let row = &table_rows(&stdout, &rank.to_string())[0];
        let printed: Vec<usize> = row[1..5].iter().map(|cell| cell.parse().unwrap()).collect();
        assert_eq!(printed, [stats.nodes, stats.edges, stats.halo_nodes, stats.cut_edges], "rank {rank}");
    }
    let total = &table_rows(&stdout, "total")[0];
    assert_eq!(total[2], graph.nnz().to_string());

    succeeds(
        dir.path(),
        &["partition", "--graph", "graph.mtx", "--ranks", "2", "--method", "range", "--save", "p.txt"],
    );
    let loaded = RankPartition::load(&dir.path().join("p.txt")).unwrap();
    assert_eq!(loaded, RankPartition::new(&graph, 2, PartitionMethod::Range).unwrap());
    let refused = pimgnn(dir.path(), &["partition", "--graph", "graph.mtx", "--ranks", "2,4", "--save", "p.txt"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--save writes one partition"));
}
