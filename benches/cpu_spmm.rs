//! The CPU SpMM against PyTorch's `torch.sparse.mm` (CSR, 2 threads) and scipy, measured in the same run on
//! the default R-MAT graph (100,000 nodes, 1,000,000 nonzeros, f32) at F = 16, 64 and 256.
//!
//! The references run in a `python3` child given the graph through temporary files; without torch or scipy
//! the table says so. Goal (issue 9): at most 1/3 of torch's time at F = 64 and 1/4 at F = 256.
//!
//! `cargo bench --bench cpu_spmm`

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use comfy_table::Table;
use pimgnn::{cpu, graph, Csr, Dense};

const NODES: usize = 100_000;
const EDGES: usize = 1_000_000;
const SEED: u64 = 1;
const FEATURES: [usize; 3] = [16, 64, 256];
const THREADS: usize = 2;
/// Timed repetitions at each F (after one warm-up); the median is reported.
const REPS: usize = 9;

/// Times `torch.sparse.mm` and scipy's CSR product on the graph in `dir` (`row_ptr.u32`, `col_idx.u32`) with
/// the same X as [`x_matrix`], printing `name F median_ms sum_of_Y` per measurement, or `name unavailable`.
const REFERENCE_SCRIPT: &str = r#"
import sys, time
import numpy as np
folder, n, threads, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
features = [int(f) for f in sys.argv[5].split(",")]
row_ptr = np.fromfile(folder + "/row_ptr.u32", dtype=np.uint32).astype(np.int64)
col_idx = np.fromfile(folder + "/col_idx.u32", dtype=np.uint32).astype(np.int64)
values = np.ones(len(col_idx), dtype=np.float32)

def x_matrix(f):
    return ((np.arange(n * f, dtype=np.int64) % 1000) / 1000.0 - 0.5).astype(np.float32).reshape(n, f)

def median_ms(product, x):
    y = product(x)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        product(x)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2] * 1e3, float(np.asarray(y, dtype=np.float64).sum())

try:
    import torch
    torch.set_num_threads(threads)
    a = torch.sparse_csr_tensor(torch.from_numpy(row_ptr), torch.from_numpy(col_idx), torch.from_numpy(values), (n, n))
    for f in features:
        ms, total = median_ms(lambda x: torch.sparse.mm(a, x), torch.from_numpy(x_matrix(f)))
        print("torch", f, ms, total, flush=True)
except ImportError:
    print("torch unavailable", flush=True)
try:
    import scipy.sparse
    a = scipy.sparse.csr_matrix((values, col_idx, row_ptr), shape=(n, n))
    for f in features:
        ms, total = median_ms(lambda x: a @ x, x_matrix(f))
        print("scipy", f, ms, total, flush=True)
except ImportError:
    print("scipy unavailable", flush=True)
"#;

/// One reference measurement: median time and the sum of Y's entries (a check that both computed the same).
struct Reference {
    median: Duration,
    sum: f64,
}

fn main() -> anyhow::Result<()> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(THREADS).build()?;
    println!("cpu_spmm: R-MAT {NODES} nodes, {EDGES} edges, f32, {THREADS} threads, median of {REPS} runs");
    let started = Instant::now();
    let a = pool.install(|| graph::rmat(NODES, EDGES, SEED));
    println!("generated the graph in {:.1} ms ({} nonzeros)", ms(started.elapsed()), a.nnz());

    println!("running the references (torch.sparse.mm, scipy) in python3 ...");
    let references = run_references(&a).unwrap_or_else(|e| {
        println!("references not run: {e:#}");
        Vec::new()
    });
    let reference = |name: &str, features: usize| {
        references.iter().find(|(n, f, _)| n == name && *f == features).map(|(_, _, r)| r)
    };

    let mut table = Table::new();
    table.set_header([
        "F",
        "Rust cpu::spmm ms",
        "reusing Y ms",
        "torch.sparse.mm ms",
        "Rust / torch",
        "goal",
        "scipy ms",
        "sum of Y: Rust / torch",
    ]);
    for features in FEATURES {
        println!("timing cpu::spmm at F = {features} ...");
        let x = x_matrix(NODES, features);
        let y = pool.install(|| cpu::spmm(&a, &x))?;
        let ours = pool.install(|| median(|| drop(cpu::spmm(&a, &x))));
        let mut reused = Dense::zeros(NODES, features);
        let ours_reusing = pool.install(|| median(|| cpu::spmm_into(&a, &x, &mut reused).expect("shapes fit")));
        let our_sum: f64 = y.as_slice().iter().map(|&v| f64::from(v)).sum();
        let torch = reference("torch", features);
        let goal = match features {
            64 => "<= 1/3",
            256 => "<= 1/4",
            _ => "",
        };
        table.add_row([
            features.to_string(),
            format!("{:.2}", ms(ours)),
            format!("{:.2}", ms(ours_reusing)),
            torch.map_or("torch not available".into(), |t| format!("{:.2}", ms(t.median))),
            torch.map_or("-".into(), |t| format!("{:.3}", ours.as_secs_f64() / t.median.as_secs_f64())),
            goal.into(),
            reference("scipy", features).map_or("scipy not available".into(), |s| format!("{:.2}", ms(s.median))),
            torch.map_or("-".into(), |t| format!("{our_sum:.6e} / {:.6e}", t.sum)),
        ]);
    }
    println!("{table}");
    Ok(())
}

/// `X[i][k] = ((i * F + k) mod 1000) / 1000 - 0.5`, which the reference script rebuilds exactly.
fn x_matrix(rows: usize, features: usize) -> Dense<f32> {
    let data = (0..rows * features).map(|i| ((i % 1000) as f64 / 1000.0 - 0.5) as f32).collect();
    Dense::from_vec(rows, features, data).expect("rows * features values")
}

/// The median of [`REPS`] timed runs of `run`, after one warm-up run.
fn median(mut run: impl FnMut()) -> Duration {
    run();
    let mut times: Vec<Duration> = (0..REPS)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[REPS / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs [`REFERENCE_SCRIPT`] on `a`: `(name, F, measurement)` for every reference that python3 has.
fn run_references(a: &Csr<f32>) -> anyhow::Result<Vec<(String, usize, Reference)>> {
    let folder = tempfile::tempdir()?;
    write_u32s(&folder.path().join("row_ptr.u32"), a.row_ptr())?;
    write_u32s(&folder.path().join("col_idx.u32"), a.col_idx())?;
    let features = FEATURES.iter().fold(String::new(), |mut list, f| {
        let _ = write!(list, "{}{f}", if list.is_empty() { "" } else { "," });
        list
    });
    let mut child = Command::new("python3")
        .arg("-")
        .arg(folder.path())
        .args([a.nrows(), THREADS, REPS].map(|v| v.to_string()))
        .arg(features)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("starting python3")?;
    child.stdin.take().expect("piped stdin").write_all(REFERENCE_SCRIPT.as_bytes())?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        bail!("python3 failed ({})", output.status);
    }
    let mut references = Vec::new();
    for line in String::from_utf8(output.stdout)?.lines() {
        match line.split_whitespace().collect::<Vec<_>>()[..] {
            [name, "unavailable"] => println!("{name} not available"),
            [name, features, median_ms, sum] => references.push((
                name.to_string(),
                features.parse()?,
                Reference { median: Duration::from_secs_f64(median_ms.parse::<f64>()? / 1e3), sum: sum.parse()? },
            )),
            _ => bail!("unexpected line from the reference script: {line:?}"),
        }
    }
    Ok(references)
}

fn write_u32s(path: &Path, values: &[u32]) -> anyhow::Result<()> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}
