//! The subcommands of `pimgnn`.

pub mod bench;
pub mod check;
mod comparison;
mod distributed;
mod history;
pub mod infer;
pub mod info;
mod output;
pub mod partition;
mod pim_args;
mod progress;
mod python;
mod table;
mod timings;
pub mod train;
mod workload;
