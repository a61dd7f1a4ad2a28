//! The subcommands of `pimgnn`.

pub mod bench;
pub mod bench_spmm;
pub mod bench_train;
pub mod check;
mod comparison;
pub mod infer;
pub mod info;
mod output;
mod pim_args;
mod progress;
mod python;
mod table;
pub mod train;
mod workload;
