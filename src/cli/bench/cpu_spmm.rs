//! `pimgnn bench cpu-spmm`: the CPU SpMM against PyTorch's `torch.sparse.mm` (CSR) and scipy, measured in the
//! same run, interleaved, on the default R-MAT graph (100,000 nodes, 1,000,000 nonzeros, f32).
//!
//! The references run in a Python child given the graph through temporary files; without torch or scipy the
//! table says so. Goal (issue 9): at most 1/3 of torch's time at F = 64 and 1/4 at F = 256.

use std::io::{BufRead, BufReader, Lines, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Args;
use pimgnn::{cpu, graph, Csr, Dense};

use crate::cli::{progress, table};

const NODES: usize = 100_000;
const EDGES: usize = 1_000_000;
const SEED: u64 = 1;

/// Arguments of `pimgnn bench cpu-spmm`.
#[derive(Args, Debug)]
pub struct BenchCpuSpmmArgs {
    /// Feature widths, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,64,256",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    features: Vec<usize>,
    /// Timed runs of each contender at each width (the median is reported), after one warm-up run.
    #[arg(long, default_value_t = 15, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    runs: usize,
    /// Threads of every contender (ours, torch's; scipy's product is single-threaded).
    #[arg(long, default_value_t = 2, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    threads: usize,
    /// The Python interpreter with torch and scipy.
    #[arg(long, default_value = "python3")]
    python: String,
}

/// The references, driven line by line so that their runs interleave with ours (the machine may be shared, and
/// load that comes and goes then weighs on both alike). Arguments: the folder holding the graph
/// (`row_ptr.u32`, `col_idx.u32`), `n` and the thread count. It first prints the references it has
/// (`available torch scipy`; only `available` without numpy), then for each request `NAME F` runs that product
/// once (building X as [`x_matrix`] does, the first time) and prints `milliseconds sum_of_Y`.
const REFERENCE_SCRIPT: &str = r#"
import sys, time
try:
    import numpy as np
except ImportError:
    print("available", flush=True)  # both references need numpy
    sys.exit(0)
folder, n, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
row_ptr = np.fromfile(folder + "/row_ptr.u32", dtype=np.uint32).astype(np.int64)
col_idx = np.fromfile(folder + "/col_idx.u32", dtype=np.uint32).astype(np.int64)
values = np.ones(len(col_idx), dtype=np.float32)
products = {}
try:
    import torch
    torch.set_num_threads(threads)
    a_torch = torch.sparse_csr_tensor(torch.from_numpy(row_ptr), torch.from_numpy(col_idx), torch.from_numpy(values), (n, n))
    products["torch"] = (lambda f: torch.from_numpy(x_matrix(f)), lambda x: torch.sparse.mm(a_torch, x))
except ImportError:
    pass
try:
    import scipy.sparse
    a_scipy = scipy.sparse.csr_matrix((values, col_idx, row_ptr), shape=(n, n))
    products["scipy"] = (lambda f: x_matrix(f), lambda x: a_scipy @ x)
except ImportError:
    pass

def x_matrix(f):
    return ((np.arange(n * f, dtype=np.int64) % 1000) / 1000.0 - 0.5).astype(np.float32).reshape(n, f)

print("available", *products, flush=True)
inputs = {}
for request in sys.stdin:
    name, f = request.split()
    make_x, product = products[name]
    x = inputs.setdefault((name, f), make_x(int(f)))
    start = time.perf_counter()
    y = product(x)
    elapsed = time.perf_counter() - start
    print(elapsed * 1e3, float(np.asarray(y, dtype=np.float64).sum()), flush=True)
"#;

/// A python3 child running [`REFERENCE_SCRIPT`].
struct References {
    child: Child,
    requests: ChildStdin,
    replies: Lines<BufReader<ChildStdout>>,
    available: Vec<String>,
    /// Keeps the graph files until the child has read them.
    _graph: tempfile::TempDir,
}

impl References {
    fn start(python: &str, a: &Csr<f32>, threads: usize) -> anyhow::Result<Self> {
        let graph = tempfile::tempdir()?;
        write_u32s(&graph.path().join("row_ptr.u32"), a.row_ptr())?;
        write_u32s(&graph.path().join("col_idx.u32"), a.col_idx())?;
        let mut child = Command::new(python)
            .args(["-c", REFERENCE_SCRIPT])
            .arg(graph.path())
            .args([a.nrows(), threads].map(|v| v.to_string()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {python}"))?;
        let requests = child.stdin.take().expect("piped stdin");
        let mut replies = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let first = replies.next().context("python3 exited before saying which references it has")??;
        let available = match first.strip_prefix("available") {
            Some(names) => names.split_whitespace().map(String::from).collect(),
            None => bail!("unexpected first line from the reference script: {first:?}"),
        };
        Ok(References { child, requests, replies, available, _graph: graph })
    }

    fn has(&self, name: &str) -> bool {
        self.available.iter().any(|n| n == name)
    }

    /// One run of `name`'s product at `features`: its time and the sum of Y's entries.
    fn run(&mut self, name: &str, features: usize) -> anyhow::Result<(Duration, f64)> {
        writeln!(self.requests, "{name} {features}")?;
        let reply = self.replies.next().context("python3 exited")??;
        let (ms, sum) = reply.split_once(' ').with_context(|| format!("unexpected reply {reply:?}"))?;
        Ok((Duration::from_secs_f64(ms.parse::<f64>()? / 1e3), sum.parse()?))
    }
}

impl Drop for References {
    fn drop(&mut self) {
        // The script only ever waits for the next request; nothing is lost by stopping it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `pimgnn bench cpu-spmm` and prints its table.
pub fn run(args: &BenchCpuSpmmArgs) -> anyhow::Result<()> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.threads).build()?;
    println!(
        "cpu-spmm: R-MAT {NODES} nodes, {EDGES} edges, f32, {} threads, {} interleaved runs each",
        args.threads, args.runs
    );
    let a = progress::step("generating the graph", || pool.install(|| graph::rmat(NODES, EDGES, SEED)));

    let mut references =
        References::start(&args.python, &a, args.threads).inspect_err(|e| println!("references not run: {e:#}")).ok();
    for name in ["torch", "scipy"] {
        if !references.as_ref().is_some_and(|r| r.has(name)) {
            println!("{name} comparison skipped: {} has no {name} (with numpy)", args.python);
        }
    }

    let mut table = table::with_header([
        "F",
        "Rust cpu::spmm ms",
        "torch.sparse.mm ms",
        "Rust / torch",
        "goal",
        "scipy ms (1 thread)",
        "Rust reusing Y ms",
        "sum of Y: Rust / torch",
    ]);
    for &features in &args.features {
        let bar = progress::counter(args.runs as u64 + 1);
        bar.set_message(format!("timing F = {features}"));
        let x = x_matrix(NODES, features);
        let mut reused = Dense::zeros(NODES, features);
        let mut ours = Timings::default();
        let mut ours_reusing = Timings::default();
        let mut torch = Timings::default();
        let mut scipy = Timings::default();
        let (mut our_sum, mut torch_sum) = (0.0, None);
        // One warm-up round, then the timed rounds, each running every contender once.
        for round in 0..=args.runs {
            let started = Instant::now();
            let y = pool.install(|| cpu::spmm(&a, &x))?;
            ours.record(round, started.elapsed());
            our_sum = y.as_slice().iter().map(|&v| f64::from(v)).sum();
            let started = Instant::now();
            pool.install(|| cpu::spmm_into(&a, &x, &mut reused))?;
            ours_reusing.record(round, started.elapsed());
            if let Some(references) = references.as_mut() {
                if references.has("torch") {
                    let (time, sum) = references.run("torch", features)?;
                    torch.record(round, time);
                    torch_sum = Some(sum);
                }
                if references.has("scipy") {
                    scipy.record(round, references.run("scipy", features)?.0);
                }
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        let goal = match features {
            64 => "<= 1/3",
            256 => "<= 1/4",
            _ => "",
        };
        table.add_row([
            features.to_string(),
            ours.summary(),
            torch.summary_or("torch not available"),
            torch.median().map_or("-".into(), |t| {
                format!("{:.3}", ours.median().expect("timed").as_secs_f64() / t.as_secs_f64())
            }),
            goal.into(),
            scipy.summary_or("scipy not available"),
            ours_reusing.summary(),
            torch_sum.map_or("-".into(), |t| format!("{our_sum:.6e} / {t:.6e}")),
        ]);
    }
    table::fit_to_terminal(&mut table);
    println!("{table}");
    println!("times: median (min); the ratio is of medians");
    Ok(())
}

/// The timed runs of one contender (warm-up excluded).
#[derive(Default)]
struct Timings(Vec<Duration>);

impl Timings {
    fn record(&mut self, round: usize, time: Duration) {
        if round > 0 {
            self.0.push(time);
        }
    }

    fn median(&self) -> Option<Duration> {
        let mut sorted = self.0.clone();
        sorted.sort();
        sorted.get(sorted.len() / 2).copied()
    }

    fn summary(&self) -> String {
        self.summary_or("-")
    }

    fn summary_or(&self, missing: &str) -> String {
        match (self.median(), self.0.iter().min()) {
            (Some(median), Some(&min)) => format!("{:.2} ({:.2})", ms(median), ms(min)),
            _ => missing.into(),
        }
    }
}

/// `X[i][k] = ((i * F + k) mod 1000) / 1000 - 0.5`, which the reference script rebuilds exactly. Built in a
/// [`Dense::zeros`] matrix, as the layers of a model produce their outputs (huge pages on Linux).
fn x_matrix(rows: usize, features: usize) -> Dense<f32> {
    let mut x = Dense::zeros(rows, features);
    for (i, value) in x.as_mut_slice().iter_mut().enumerate() {
        *value = ((i % 1000) as f64 / 1000.0 - 0.5) as f32;
    }
    x
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn write_u32s(path: &Path, values: &[u32]) -> anyhow::Result<()> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}
