//! What a launch did over a whole simulated set: the slowest DPU's modelled cycles, instructions by class and
//! DMA traffic over all DPUs.

use std::fmt;
use std::time::Duration;

use upmem_types::CLOCK_HZ;

use super::{DpuStats, InstructionClass};

/// A launch on a simulator set, over its DPUs; see [`LoadedSet::launch_stats`](crate::LoadedSet::launch_stats).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetStats {
    /// DPUs in the set.
    pub dpus: usize,
    /// The index of the DPU that finished last (the first of them on a tie).
    pub slowest_dpu: usize,
    /// Its modelled cycles: the launch's modelled time on hardware, at [`CLOCK_HZ`].
    pub cycles: u64,
    /// The busiest DPU's DMA engine cycles.
    pub dma_cycles: u64,
    /// Bytes moved between MRAM and WRAM, both ways, by all DPUs.
    pub dma_bytes: u64,
    /// DPU instructions of all DPUs.
    pub instructions: u64,
    /// `instructions` by class, indexed by [`InstructionClass::index`].
    pub instructions_by_class: [u64; InstructionClass::COUNT],
}

impl SetStats {
    /// Sums the statistics of a set's DPUs, in set order.
    pub fn of<'a>(dpus: impl IntoIterator<Item = &'a DpuStats>) -> Self {
        let mut sum = SetStats::default();
        for (index, dpu) in dpus.into_iter().enumerate() {
            if dpu.cycles > sum.cycles {
                sum.cycles = dpu.cycles;
                sum.slowest_dpu = index;
            }
            sum.dpus += 1;
            sum.dma_cycles = sum.dma_cycles.max(dpu.dma_cycles);
            sum.dma_bytes += dpu.dma_bytes();
            sum.instructions += dpu.instructions;
            for (total, count) in sum.instructions_by_class.iter_mut().zip(dpu.instructions_by_class) {
                *total += count;
            }
        }
        sum
    }

    /// The slowest DPU's modelled time.
    pub fn modelled_time(&self) -> Duration {
        Duration::from_secs_f64(self.cycles as f64 / CLOCK_HZ as f64)
    }

    /// DPU instructions of one class over all DPUs.
    pub fn instructions_of(&self, class: InstructionClass) -> u64 {
        self.instructions_by_class[class.index()]
    }

    /// The classes that ran, with their instructions, largest first.
    pub fn classes_largest_first(&self) -> Vec<(InstructionClass, u64)> {
        let mut classes: Vec<(InstructionClass, u64)> = InstructionClass::ALL
            .into_iter()
            .map(|class| (class, self.instructions_of(class)))
            .filter(|&(_, count)| count > 0)
            .collect();
        classes.sort_by_key(|&(_, count)| std::cmp::Reverse(count));
        classes
    }
}

/// The slowest DPU's time, the DMA traffic, then the instruction classes that ran, largest first, with their
/// share.
impl fmt::Display for SetStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} DPUs: slowest DPU {} at {} cycles ({:.3} ms), busiest DMA engine {} cycles, {} DMA bytes",
            self.dpus,
            self.slowest_dpu,
            self.cycles,
            self.modelled_time().as_secs_f64() * 1e3,
            self.dma_cycles,
            self.dma_bytes
        )?;
        let shares: Vec<String> = self
            .classes_largest_first()
            .into_iter()
            .map(|(class, count)| format!("{class} {:.1}%", count as f64 / self.instructions as f64 * 100.0))
            .collect();
        write!(f, "{} DPU instructions: {}", self.instructions, shares.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dpu(cycles: u64, alu: u64, float_mul: u64) -> DpuStats {
        let mut stats =
            DpuStats { cycles, dma_cycles: cycles / 2, instructions: alu + float_mul, ..DpuStats::default() };
        stats.instructions_by_class[InstructionClass::Alu.index()] = alu;
        stats.instructions_by_class[InstructionClass::FloatMul.index()] = float_mul;
        stats
    }

    #[test]
    fn the_slowest_dpu_bounds_the_launch_and_instructions_add_up() {
        let stats = SetStats::of(&[dpu(100, 10, 0), dpu(350, 20, 179), dpu(350, 5, 0)]);
        assert_eq!((stats.dpus, stats.slowest_dpu, stats.cycles, stats.dma_cycles), (3, 1, 350, 175));
        assert_eq!(stats.instructions, 214);
        assert_eq!(stats.instructions_of(InstructionClass::Alu), 35);
        assert_eq!(stats.instructions_of(InstructionClass::FloatMul), 179);
        assert_eq!(stats.modelled_time(), Duration::from_micros(1));
        let text = stats.to_string();
        assert!(text.find("float mul").unwrap() < text.find("alu").unwrap(), "{text}");
    }
}
