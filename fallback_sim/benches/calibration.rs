//! Calibration of the timing model against PrIM's characterisation of the real DPU: per microbenchmark, the
//! modelled figure, the published one (for 8- and 16-bit multiplies, which PrIM did not measure, the one the
//! DPU compiler's instructions give) and their ratio (goal: 0.75x to 1.33x), and the arithmetic throughput
//! against the number of tasklets, which saturates at 11. Run with
//! `cargo bench -p upmem-sim --bench calibration`; the figures are modelled, so they are the same on every host.
//! Last, the host-DPU transfer model (`upmem_types::TransferModel`, which the simulator's timelines and pimgnn's
//! cost model predict with) against every published bandwidth it is calibrated on, over 1 to 40 ranks.
//! With `PIMGNN_BENCH_QUICK=1` the MRAM read streams 128 and 256 KiB instead of 1 and 2 MiB (the same figure
//! to a few percent).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/quick.rs"]
mod quick;
/// The command line's table style, so that every benchmark prints as `pimgnn` does.
#[path = "../../src/cli/table.rs"]
mod table;

use common::calibration::{
    build_kernels, modelled_mops, modelled_mram_read_mbps, operation, MRAM_READ_BLOCK_BYTES, OPERATIONS,
    PUBLISHED_MRAM_READ_MBPS,
};

const TASKLET_COUNTS: [u32; 6] = [1, 2, 4, 8, 11, 16];
const SWEPT_OPERATIONS: [&str; 3] = ["int32 add", "int32 multiply", "float multiply"];

fn ratio(modelled: f64, published: f64) -> String {
    format!("{:.2}x", modelled / published)
}

fn main() {
    eprintln!("building the kernels...");
    // Every operation at 16 tasklets, and the swept ones at the other counts.
    let swept = SWEPT_OPERATIONS.iter().flat_map(|&name| TASKLET_COUNTS.map(|count| (operation(name), count)));
    let swept = swept.filter(|&(_, count)| count != 16);
    build_kernels(&OPERATIONS.iter().map(|&operation| (operation, 16)).chain(swept).collect::<Vec<_>>());

    let mut figures =
        table::with_header(["microbenchmark (1 DPU, 16 tasklets)", "modelled", "published (or derived)", "ratio"]);
    for operation in &OPERATIONS {
        eprintln!("{}...", operation.name);
        let modelled = modelled_mops(operation, 16);
        figures.add_row([
            operation.name.to_string(),
            format!("{modelled:.3} MOPS"),
            operation.reference.describe(),
            ratio(modelled, operation.reference.mops()),
        ]);
    }
    eprintln!("MRAM read...");
    let mram_read = modelled_mram_read_mbps(quick::pick(1 << 20, 128 << 10));
    figures.add_row([
        format!("MRAM read, {MRAM_READ_BLOCK_BYTES}-byte transfers"),
        format!("{mram_read:.0} MB/s"),
        format!("{PUBLISHED_MRAM_READ_MBPS} MB/s"),
        ratio(mram_read, PUBLISHED_MRAM_READ_MBPS),
    ]);
    table::fit_to_terminal(&mut figures);
    println!("{figures}");

    let header = std::iter::once("MOPS by tasklets".to_string()).chain(TASKLET_COUNTS.map(|count| count.to_string()));
    let mut sweep = table::with_header(header);
    for name in SWEPT_OPERATIONS {
        eprintln!("{name} against tasklets...");
        let operation = operation(name);
        let row = TASKLET_COUNTS.map(|count| format!("{:.3}", modelled_mops(&operation, count)));
        sweep.add_row(std::iter::once(name.to_string()).chain(row));
    }
    table::fit_to_terminal(&mut sweep);
    println!("{sweep}");

    let mut transfers = table::with_header(["transfer", "ranks", "modelled", "published", "ratio", "source"]);
    for (measurement, modelled) in upmem_types::TransferModel::default().calibration() {
        let gigabytes = |bytes_per_second: f64| format!("{:.2} GB/s", bytes_per_second / 1e9);
        transfers.add_row([
            measurement.operation.to_string(),
            measurement.ranks.to_string(),
            gigabytes(modelled),
            gigabytes(measurement.bytes_per_second),
            ratio(modelled, measurement.bytes_per_second),
            measurement.source.to_owned(),
        ]);
    }
    table::fit_to_terminal(&mut transfers);
    println!("{transfers}");
}
