//! DPU symbols: where a program's variables are in a DPU's address space, as `dpu_get_symbol` reports them.

use crate::MRAM_BASE;

/// Which DPU memory a symbol lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    /// WRAM (`__host` variables and other globals); DPU addresses start at 0.
    Wram,
    /// MRAM (`__mram`, `__mram_noinit`, the MRAM heap); DPU addresses start at 0x08000000.
    Mram,
}

/// A DPU symbol: where it is in the DPU's address space, as `dpu_get_symbol` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// The DPU address: a WRAM byte address, or 0x08000000 plus the MRAM offset.
    pub address: u32,
    /// Its size in bytes. The MRAM heap symbol ([`MRAM_HEAP`](crate::MRAM_HEAP)) extends to the end of MRAM.
    pub size: u32,
    /// The memory it lives in.
    pub memory: MemoryKind,
}

impl Symbol {
    /// The symbol at a DPU address (its memory follows from the address), as `dpu_get_symbol` reports it.
    pub fn at(address: u32, size: u32) -> Symbol {
        let memory = if u64::from(address) >= MRAM_BASE { MemoryKind::Mram } else { MemoryKind::Wram };
        Symbol { address, size, memory }
    }

    /// Whether the symbol is in MRAM.
    pub fn is_mram(&self) -> bool {
        self.memory == MemoryKind::Mram
    }

    /// The byte offset in its memory.
    pub fn offset(&self) -> u64 {
        match self.memory {
            MemoryKind::Wram => u64::from(self.address),
            MemoryKind::Mram => u64::from(self.address) - MRAM_BASE,
        }
    }
}
