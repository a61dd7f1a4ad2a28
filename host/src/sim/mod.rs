//! What only the simulator backend has (feature `simulator`): the simulated machine's configuration
//! ([`SimConfig`], [`Schedule`], given to [`DpuSetBuilder::simulator`](crate::DpuSetBuilder::simulator)), a
//! launch's statistics ([`DpuStats`] per DPU from [`LoadedSet::simulator_stats`](crate::LoadedSet::simulator_stats),
//! [`SetStats`] over the set from [`LoadedSet::launch_stats`](crate::LoadedSet::launch_stats)), and the simulator's
//! core itself ([`Machine`], [`Program`]) for what the safe API does not cover.

mod engine;
mod set_stats;

pub(crate) use engine::SimEngine;
pub use set_stats::SetStats;
pub use upmem_sim::{
    BuildError, CompilerFamily, DpuStats, InstructionClass, Machine, ParseScheduleError, Program, Schedule, SimConfig,
    SimError, TaskletStats,
};
