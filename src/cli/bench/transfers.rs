//! `pimgnn bench transfers`: host-DPU push, gather and broadcast bandwidth over sets of 1 to all of a server's
//! ranks, the curve of the transfer model fitted to them, and that model written as the server's transfer
//! profile, which `UPMEM_TRANSFER_PROFILE` then puts in place of the published figures everywhere a time is
//! predicted.
//!
//! On hardware each transfer is timed by the wall clock, the fastest of the repetitions. On the simulator it is
//! timed by the model's own prediction (its timeline), so the table shows the model in use and a profile
//! written there reproduces it: a check of the fitting, not a measurement.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use comfy_table::{Cell, CellAlignment};
use upmem::timeline::Operation;
use upmem::{BackendKind, DpuSet, LoadedSet, RankScaling, TransferModel, MRAM_HEAP};

use crate::cli::{progress, table};

/// Ranks of a full UPMEM server.
const SERVER_RANKS: u32 = 40;

/// Arguments of `pimgnn bench transfers`.
#[derive(clap::Args)]
pub struct BenchTransfersArgs {
    /// Rank counts to measure, comma-separated, 1 to 40 [default: 1,2,4,8,16,24,32,40 up to the ranks there are].
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=i64::from(SERVER_RANKS)))]
    ranks: Vec<u32>,
    /// Bytes to or from each DPU per transfer, a multiple of 8 up to 32 MiB [default: 1 MiB on hardware, above
    /// the 32 KiB from which the SDK uses all its copy threads; 64 KiB on the simulator, whose modelled rate
    /// does not depend on it].
    #[arg(long, value_parser = clap::value_parser!(u32).range(8..=(32 << 20)))]
    bytes_per_dpu: Option<u32>,
    /// Timed repetitions of each transfer, after an untimed one; the fastest counts.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repeats: u32,
    /// Backend: auto (hardware if present), hw, or sim.
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
    /// Write the fitted model to this file as a transfer profile.
    #[arg(long)]
    profile: Option<PathBuf>,
}

/// One measured transfer.
struct Point {
    operation: Operation,
    ranks: usize,
    bytes_per_second: f64,
}

/// Runs the benchmark, prints its tables and writes the profile.
pub fn run(args: &BenchTransfersArgs) -> anyhow::Result<()> {
    if let Some(profile) = &args.profile {
        crate::cli::output::check_writable("--profile", profile)?;
    }
    let backend = args.backend.resolve()?;
    let default_bytes = if backend == BackendKind::Hardware { 1 << 20 } else { 64 << 10 };
    let bytes_per_dpu = args.bytes_per_dpu.unwrap_or(default_bytes);
    if !bytes_per_dpu.is_multiple_of(8) {
        bail!("--bytes-per-dpu {bytes_per_dpu}: DPU transfers move multiples of 8 bytes");
    }
    let mut ranks = if args.ranks.is_empty() { vec![1, 2, 4, 8, 16, 24, 32, 40] } else { args.ranks.clone() };
    ranks.sort_unstable();
    ranks.dedup();
    if backend == BackendKind::Hardware && args.ranks.is_empty() {
        let free =
            upmem::RankInventory::of_this_machine().ranks().iter().filter(|rank| rank.owned == Some(false)).count();
        ranks.retain(|&count| count as usize <= free.max(1));
    }
    let timed_by =
        if backend == BackendKind::Hardware { "the wall clock" } else { "the model's prediction (simulator)" };
    println!(
        "transfers of {bytes_per_dpu} bytes per DPU over {ranks:?} ranks on {backend}, timed by {timed_by}, fastest \
         of {}",
        args.repeats
    );
    let mut points = Vec::new();
    let mut sdk = None;
    for &count in &ranks {
        let measured =
            progress::step(&format!("measuring {count} rank(s)"), || measure(args, backend, bytes_per_dpu, count))
                .with_context(|| format!("measuring transfers over {count} ranks"))?;
        sdk = sdk.or(measured.1);
        points.extend(measured.0);
    }

    let fitted = fit_model(&points, backend, bytes_per_dpu, &ranks, sdk.as_deref());
    let published = TransferModel::default();
    let mut rows = table::with_header([
        "transfer",
        "ranks",
        "measured GB/s",
        "fitted GB/s",
        "published model GB/s",
        "measured / published",
    ]);
    for point in &points {
        let curve = |model: &TransferModel| scaling(model, point.operation).bytes_per_second(point.ranks);
        let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
        rows.add_row([
            Cell::new(point.operation),
            right(point.ranks.to_string()),
            right(format!("{:.2}", point.bytes_per_second / 1e9)),
            right(format!("{:.2}", curve(&fitted) / 1e9)),
            right(format!("{:.2}", curve(&published) / 1e9)),
            right(format!("{:.2}", point.bytes_per_second / curve(&published))),
        ]);
    }
    table::fit_to_terminal(&mut rows);
    println!("{rows}");
    for operation in [Operation::Push, Operation::Gather, Operation::Broadcast] {
        let curve = scaling(&fitted, operation);
        println!(
            "{operation}: {:.3} + {:.3} x min(ranks, {:.1}) GB/s (cap {:.2})",
            curve.intercept / 1e9,
            curve.per_rank / 1e9,
            curve.saturation_ranks,
            curve.cap() / 1e9
        );
    }
    if let Some(path) = &args.profile {
        fitted.write_profile(path)?;
        println!("profile: {} (use it with UPMEM_TRANSFER_PROFILE={})", path.display(), path.display());
    }
    Ok(())
}

/// The model's curve for `operation` (a parallel transfer).
fn scaling(model: &TransferModel, operation: Operation) -> RankScaling {
    match operation {
        Operation::Gather => model.gather,
        Operation::Broadcast => model.broadcast,
        _ => model.push,
    }
}

/// Push, gather and broadcast over a set of `count` ranks, and the SDK version on hardware.
fn measure(
    args: &BenchTransfersArgs,
    backend: BackendKind,
    bytes_per_dpu: u32,
    count: u32,
) -> anyhow::Result<(Vec<Point>, Option<String>)> {
    let set = DpuSet::builder().backend(backend).ranks(count).allocate()?;
    let mut set = set.load(&pimgnn::kernel("reduce"))?;
    let bytes = bytes_per_dpu as usize;
    let heap = set.symbol(MRAM_HEAP)?.size as usize;
    if bytes > heap {
        bail!("--bytes-per-dpu {bytes}: the kernel's MRAM heap holds {heap} bytes per DPU");
    }
    let dpus = set.nr_dpus();
    let source: Vec<u8> = (0..bytes).map(|at| (at % 251) as u8).collect();
    let sources: Vec<&[u8]> = vec![&source; dpus];
    let mut gathered = vec![vec![0u8; bytes]; dpus];
    let mut points = Vec::new();
    for operation in [Operation::Push, Operation::Gather, Operation::Broadcast] {
        let mut fastest = Duration::MAX;
        for _ in 0..=args.repeats {
            let started = Instant::now();
            match operation {
                Operation::Push => set.push(MRAM_HEAP, 0, &sources)?,
                Operation::Gather => set.gather_into(MRAM_HEAP, 0, &mut gathered)?,
                _ => set.broadcast(MRAM_HEAP, 0, &source)?,
            }
            fastest = fastest.min(timed(&set, backend, started.elapsed()));
        }
        let bytes_per_second = (dpus * bytes) as f64 / fastest.as_secs_f64().max(1e-12);
        points.push(Point { operation, ranks: set.nr_ranks(), bytes_per_second });
    }
    if gathered.iter().any(|buffer| *buffer != source) {
        bail!("the bytes gathered from the DPUs differ from those pushed");
    }
    Ok((points, set.sdk_version().map(str::to_owned)))
}

/// The time of the transfer just made: `wall` on hardware, the timeline's prediction on the simulator.
fn timed(set: &LoadedSet, backend: BackendKind, wall: Duration) -> Duration {
    match backend {
        BackendKind::Hardware => wall,
        _ => set.timeline().events().last().and_then(|event| event.predicted).unwrap_or(wall),
    }
}

/// The transfer model with curves fitted to `points` and the published figures for what was not measured.
fn fit_model(
    points: &[Point],
    backend: BackendKind,
    bytes_per_dpu: u32,
    ranks: &[u32],
    sdk: Option<&str>,
) -> TransferModel {
    let published = TransferModel::default();
    let curve = |operation: Operation| {
        let measured: Vec<(f64, f64)> = points
            .iter()
            .filter(|point| point.operation == operation)
            .map(|point| (point.ranks as f64, point.bytes_per_second))
            .collect();
        fit(&measured).unwrap_or_else(|| scaling(&published, operation))
    };
    let on = match sdk {
        Some(sdk) => format!("hardware, SDK {sdk}"),
        None => backend.to_string(),
    };
    TransferModel {
        source: format!(
            "pimgnn bench transfers on {on}, {bytes_per_dpu} bytes per DPU, {ranks:?} ranks (serial copies and \
             launch: published)"
        ),
        push: curve(Operation::Push),
        gather: curve(Operation::Gather),
        broadcast: curve(Operation::Broadcast),
        ..published
    }
}

/// The least-squares curve `intercept + per_rank x min(ranks, saturation)` through `(ranks, bytes per second)`
/// points, the saturation searched over quarter ranks from the fewest to the most ranks measured; a flat line
/// through one rank count. `None` without points.
fn fit(points: &[(f64, f64)]) -> Option<RankScaling> {
    let (first, last) = points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &(r, _)| (lo.min(r), hi.max(r)));
    if points.is_empty() {
        return None;
    }
    let line = |saturation: f64| {
        let xs: Vec<f64> = points.iter().map(|&(r, _)| r.min(saturation)).collect();
        let n = points.len() as f64;
        let (mean_x, mean_y) = (xs.iter().sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
        let sxx: f64 = xs.iter().map(|x| (x - mean_x).powi(2)).sum();
        let sxy: f64 = xs.iter().zip(points).map(|(x, p)| (x - mean_x) * (p.1 - mean_y)).sum();
        let per_rank = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        let intercept = mean_y - per_rank * mean_x;
        let error: f64 = xs.iter().zip(points).map(|(x, p)| (intercept + per_rank * x - p.1).powi(2)).sum();
        (RankScaling { intercept, per_rank, saturation_ranks: saturation.max(1.0) }, error)
    };
    let steps = ((last - first) * 4.0).round() as usize;
    (0..=steps).map(|step| line(first + step as f64 / 4.0)).min_by(|a, b| a.1.total_cmp(&b.1)).map(|(curve, _)| curve)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_recovers_a_saturating_curve() {
        let truth = RankScaling { intercept: 5e9, per_rank: 0.25e9, saturation_ranks: 30.0 };
        let points: Vec<(f64, f64)> =
            [1, 2, 4, 8, 16, 24, 32, 40].iter().map(|&r| (f64::from(r), truth.bytes_per_second(r as usize))).collect();
        let fitted = fit(&points).unwrap();
        assert!((fitted.intercept - 5e9).abs() < 1e6 && (fitted.per_rank - 0.25e9).abs() < 1e6, "{fitted:?}");
        assert!((fitted.saturation_ranks - 30.0).abs() < 0.01, "{fitted:?}");
        let flat = fit(&[(4.0, 7e9)]).unwrap();
        assert_eq!((flat.intercept, flat.per_rank, flat.bytes_per_second(40)), (7e9, 0.0, 7e9));
        assert!(fit(&[]).is_none());
    }
}
