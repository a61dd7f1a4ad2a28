//! `pimgnn bench quantize`: the host's conversions of quantized aggregation (the scan for the largest `|x|`,
//! rounding to `i32`, `i16` and `i8` levels, and back to `f32`) against a parallel `memcpy` of the same
//! values on all cores, and against the straightforward rounding loop, in the same run. Bandwidth counts the
//! bytes each reads and writes, so a conversion at memory speed reaches the copy's figure.

use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::bail;
use comfy_table::{Cell, CellAlignment};
use rayon::prelude::*;

use pimgnn::gnn::quantize::{dequantize, largest_magnitude, quantize, quantize_into, Quantized};

use crate::cli::table;

/// Arguments of `pimgnn bench quantize`.
#[derive(clap::Args)]
pub struct BenchQuantizeArgs {
    /// Values converted (f32 features) [default: 25,600,000, a layer of 100,000 nodes by 256 features].
    #[arg(long, default_value_t = 25_600_000)]
    values: usize,
    /// Timed repetitions of each conversion, after an untimed one; the fastest counts.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    repeats: u32,
}

/// The fastest of `repeats` timed runs of `run`, after an untimed one.
fn fastest<T>(repeats: u32, mut run: impl FnMut() -> T) -> Duration {
    fastest_with(repeats, || (), |()| run())
}

/// As [`fastest`], each run on a fresh input from `setup`, which is not timed.
fn fastest_with<S, T>(repeats: u32, mut setup: impl FnMut() -> S, mut run: impl FnMut(S) -> T) -> Duration {
    black_box(run(setup()));
    (0..repeats)
        .map(|_| {
            let input = setup();
            let started = Instant::now();
            black_box(run(input));
            started.elapsed()
        })
        .min()
        .expect("at least one repetition")
}

/// Runs the benchmark and prints its table.
pub fn run(args: &BenchQuantizeArgs) -> anyhow::Result<()> {
    if args.values == 0 {
        bail!("--values must be at least 1");
    }
    let features: Vec<f32> = (0..args.values).into_par_iter().map(|i| ((i as f32) * 0.001).sin() * 4.0).collect();
    let values = args.values as f64;
    let mut copy = vec![0.0f32; args.values];
    let memcpy = fastest(args.repeats, || {
        copy.par_chunks_mut(1 << 16).zip(features.par_chunks(1 << 16)).for_each(|(to, from)| to.copy_from_slice(from))
    });
    let memcpy_rate = 8.0 * values / memcpy.as_secs_f64();
    let largest = largest_magnitude(&features).map_err(|at| anyhow::anyhow!("feature {at} is not finite"))?;

    let mut rows: Vec<(String, Duration, f64)> = vec![("parallel memcpy (f32 to f32)".into(), memcpy, 8.0)];
    rows.push(("largest |x| (scan)".into(), fastest(args.repeats, || largest_magnitude(&features)), 4.0));
    fn rounding<T: Quantized>(features: &[f32], largest: f32, repeats: u32) -> (String, Duration, f64) {
        let scale = T::MAX as f32 / largest;
        let mut out = vec![T::default(); features.len()];
        let time = fastest(repeats, || quantize_into::<T>(features, scale, &mut out));
        (format!("round to {}", T::NAME), time, 4.0 + std::mem::size_of::<T>() as f64)
    }
    rows.push(rounding::<i32>(&features, largest, args.repeats));
    rows.push(rounding::<i16>(&features, largest, args.repeats));
    rows.push(rounding::<i8>(&features, largest, args.repeats));
    let mut levels_i8 = vec![0i8; args.values];
    // The straightforward loop, for reference: what `quantize` is measured against besides the copy.
    let scale = 127.0 / largest;
    let straightforward = fastest(args.repeats, || {
        levels_i8.par_chunks_mut(1 << 16).zip(features.par_chunks(1 << 16)).for_each(|(out, values)| {
            for (level, &value) in out.iter_mut().zip(values) {
                *level = (value * scale).round() as i8;
            }
        })
    });
    rows.push(("round to i8 with f32::round and `as` (reference)".into(), straightforward, 5.0));
    rows.push((
        "quantize to i8 as aggregation does (scan, then round into the last call's buffer)".into(),
        fastest(args.repeats, || {
            let largest = largest_magnitude(&features).unwrap_or(1.0);
            quantize_into::<i8>(&features, 127.0 / largest, &mut levels_i8)
        }),
        5.0,
    ));
    let levels: Vec<i32> = quantize::<i32>(&features, 1e6);
    rows.push((
        "back to f32, in place (from i32 sums)".into(),
        fastest_with(args.repeats, || levels.clone(), |levels| dequantize(levels, 1e-6)),
        8.0,
    ));

    let threads = rayon::current_num_threads();
    println!(
        "{} f32 values ({:.1} MB), {threads} threads, fastest of {}",
        args.values,
        4.0 * values / 1e6,
        args.repeats
    );
    let mut table = table::with_header(["conversion", "ms", "GB/s (read + written)", "against parallel memcpy"]);
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    for (name, time, bytes_per_value) in rows {
        let rate = bytes_per_value * values / time.as_secs_f64();
        table.add_row([
            Cell::new(name),
            right(format!("{:.3}", time.as_secs_f64() * 1e3)),
            right(format!("{:.2}", rate / 1e9)),
            right(format!("{:.2}x", rate / memcpy_rate)),
        ]);
    }
    table::fit_to_terminal(&mut table);
    println!("{table}");
    Ok(())
}
