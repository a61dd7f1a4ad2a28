//! The simulator backend: a set is a simulated machine of its own, driven through the simulator core.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;
use upmem_sim::{DpuStats, Machine, MemoryKind, Program, SimConfig, SimError};
use upmem_types::{ChipVersion, Symbol, Topology};

use crate::backend::BackendKind;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::set::{Amount, FaultInfo};
use crate::Kernel;

pub(crate) struct SimEngine {
    machine: Machine,
    /// The machine's DPU of each DPU of the set.
    dpus: Vec<u32>,
    ranks: Vec<Range<usize>>,
    program: Option<Arc<Program>>,
}

impl SimEngine {
    /// A machine shaped by `config` whose first DPUs (or ranks) form the set.
    pub fn allocate(config: SimConfig, amount: Amount) -> Result<Self> {
        let machine = Machine::new(config)?;
        let per_rank = machine.topology().dpus_per_rank;
        let enabled: Vec<u32> = machine.topology().enabled_dpus().collect();
        let dpus: Vec<u32> = match amount {
            Amount::All => enabled,
            Amount::Dpus(wanted) => {
                if wanted as usize > enabled.len() || wanted == 0 {
                    return Err(Error::Allocation { requested: wanted as usize, available: enabled.len() });
                }
                enabled[..wanted as usize].to_vec()
            }
            Amount::Ranks(wanted) => {
                let ranks = machine.topology().nr_ranks;
                if wanted > ranks || wanted == 0 {
                    return Err(Error::Allocation {
                        requested: (wanted * per_rank) as usize,
                        available: enabled.len(),
                    });
                }
                enabled.into_iter().filter(|dpu| dpu / per_rank < wanted).collect()
            }
        };
        let mut ranks: Vec<Range<usize>> = Vec::new();
        for (index, &dpu) in dpus.iter().enumerate() {
            match ranks.last_mut() {
                Some(range) if dpus[range.start] / per_rank == dpu / per_rank => range.end = index + 1,
                _ => ranks.push(index..index + 1),
            }
        }
        Ok(SimEngine { machine, dpus, ranks, program: None })
    }

    fn memory(symbol: Symbol, offset: u32) -> (MemoryKind, u64) {
        (symbol.memory, symbol.offset() + u64::from(offset))
    }
}

impl Engine for SimEngine {
    fn nr_dpus(&self) -> usize {
        self.dpus.len()
    }

    fn ranks(&self) -> &[Range<usize>] {
        &self.ranks
    }

    fn load(&mut self, kernel: &Kernel) -> Result<()> {
        let chip = self.machine.topology().chip;
        let path = kernel.simulator_binary(chip).ok_or_else(|| Error::KernelUnavailable {
            kernel: kernel.name().to_owned(),
            backend: BackendKind::Simulator,
            reason: format!("it was not built for the simulator's {chip} DPUs"),
        })?;
        let program = Arc::new(Program::from_file(path)?);
        self.machine.load(&self.dpus, &program)?;
        self.program = Some(program);
        Ok(())
    }

    fn load_from_memory(&mut self, binary: &[u8]) -> Result<()> {
        let program = Arc::new(Program::from_bytes(binary)?);
        self.machine.load(&self.dpus, &program)?;
        self.program = Some(program);
        Ok(())
    }

    fn symbol(&self, name: &str) -> Option<Symbol> {
        self.program.as_ref()?.symbol(name, self.machine.topology().mram_size)
    }

    /// Writes `data[i]` (or `data[0]` to every DPU when it has one element) at symbol + offset, after the
    /// launch in progress if any (queued writes run in order, as libdpu's job queue does; here at once).
    /// DPUs given the same buffer (the same slice, as when a caller sends each group of DPUs its part) get it
    /// as one broadcast, whose large MRAM writes the machine stores once, shared copy-on-write.
    fn write(&mut self, symbol: Symbol, offset: u32, data: &[&[u8]], _queued: bool) -> Result<()> {
        self.sync()?;
        let (memory, at) = Self::memory(symbol, offset);
        if let [same] = data {
            return Ok(self.machine.broadcast(&self.dpus, memory, at, same)?);
        }
        let mut receivers: HashMap<(*const u8, usize), Vec<u32>> = HashMap::new();
        for (&dpu, bytes) in self.dpus.iter().zip(data) {
            receivers.entry((bytes.as_ptr(), bytes.len())).or_default().push(dpu);
        }
        let mut alone = Vec::new();
        for (index, bytes) in data.iter().enumerate() {
            match receivers.get(&(bytes.as_ptr(), bytes.len())) {
                Some(dpus) if dpus.len() > 1 => {
                    if dpus[0] == self.dpus[index] {
                        self.machine.broadcast(dpus, memory, at, bytes)?;
                    }
                }
                _ => alone.push(index),
            }
        }
        let machine = &self.machine;
        alone.par_iter().try_for_each(|&index| machine.write(self.dpus[index], memory, at, data[index]))?;
        Ok(())
    }

    fn read(&mut self, symbol: Symbol, offset: u32, out: &mut [&mut [u8]]) -> Result<()> {
        let (memory, at) = Self::memory(symbol, offset);
        let machine = &self.machine;
        self.dpus
            .par_iter()
            .zip(out.par_iter_mut())
            .try_for_each(|(&dpu, bytes)| machine.read(dpu, memory, at, bytes))?;
        Ok(())
    }

    fn read_one(&mut self, index: usize, symbol: Symbol, offset: u32, out: &mut [u8]) -> Result<()> {
        let (memory, at) = Self::memory(symbol, offset);
        Ok(self.machine.read(self.dpus[index], memory, at, out)?)
    }

    fn write_one(&mut self, index: usize, symbol: Symbol, offset: u32, data: &[u8]) -> Result<()> {
        let (memory, at) = Self::memory(symbol, offset);
        Ok(self.machine.write(self.dpus[index], memory, at, data)?)
    }

    fn launch(&mut self, wait: bool) -> Result<()> {
        self.machine.launch_async(&self.dpus)?;
        if wait {
            self.sync()?;
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        match self.machine.wait() {
            Err(SimError::DpuFault { .. }) => Err(Error::Fault(self.faults()?)),
            other => Ok(other?),
        }
    }

    fn poll(&mut self) -> Result<bool> {
        Ok(self.machine.poll()?)
    }

    fn faults(&mut self) -> Result<Vec<FaultInfo>> {
        Ok(self
            .dpus
            .iter()
            .enumerate()
            .filter_map(|(index, &dpu)| {
                self.machine.fault(dpu).ok().flatten().map(|fault| FaultInfo { dpu: index, reason: fault.to_string() })
            })
            .collect())
    }

    fn log(&mut self, index: usize) -> Result<Vec<u8>> {
        Ok(self.machine.log(self.dpus[index])?)
    }

    fn chip(&self) -> ChipVersion {
        self.machine.topology().chip
    }

    fn hardware_threads(&self) -> u32 {
        self.machine.topology().chip.hardware_threads()
    }

    fn topology(&self) -> Option<&Topology> {
        Some(self.machine.topology())
    }

    fn models_hardware_cycles(&self) -> bool {
        self.machine.config().schedule.predicts_hardware_time()
    }

    fn modelled_launch_cycles(&self) -> Result<Option<u64>> {
        self.models_hardware_cycles().then(|| Ok(self.machine.slowest_cycles(&self.dpus)?)).transpose()
    }

    fn dpu_stats(&self, index: usize) -> Result<Option<DpuStats>> {
        Ok(Some(self.machine.stats(self.dpus[index])?))
    }
}
