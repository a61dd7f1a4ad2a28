//! The hardware backend: the UPMEM SDK's libdpu, loaded at run time ([`library`] says where it is looked for and
//! what is checked). Pointed at the simulator's libdpu-compatible library (`upmem-sim-sdk`) with a profile naming
//! `backend=simulator`, this backend runs on the simulator with everything but the DPU silicon exercised; it then
//! loads the kernels' simulated binaries.
//!
//! Every allocation names `backend=hw` in its profile unless the caller's profile names a backend ([`profile`]),
//! so a set asked of the hardware never runs on the SDK's own simulator.

mod chip;
mod elf;
mod library;
mod profile;
mod version;
mod waiter;

use std::ffi::{c_char, CStr, CString};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use upmem_sys::{
    dpu_error_t, dpu_set_t, DPU_ASYNCHRONOUS, DPU_ERR_ALLOCATION, DPU_ERR_ASYNC_JOBS, DPU_ERR_DPU_FAULT, DPU_OK,
    DPU_SYNCHRONOUS, DPU_XFER_ASYNC, DPU_XFER_DEFAULT, DPU_XFER_FROM_DPU, DPU_XFER_TO_DPU,
};
use upmem_types::{ChipVersion, Symbol};

use crate::backend::BackendKind;
use crate::driver::RankInventory;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::set::{Amount, FaultInfo};
use crate::Kernel;
use chip::Silicon;
pub(crate) use library::library;
use library::Library;
use waiter::LaunchWaiter;

/// Calls a libdpu function through the loaded library, turning a missing symbol into a typed error.
macro_rules! call {
    ($lib:expr, $name:ident ( $($arg:expr),* $(,)? )) => {{
        match &$lib.dpu.$name {
            // SAFETY: the arguments follow the SDK's contract for this function (checked by the safe layer).
            Ok(function) => unsafe { function($($arg),*) },
            Err(_) => return Err(Error::MissingFunction(stringify!($name))),
        }
    }};
}

fn checked(lib: &Library, call: &'static str, status: dpu_error_t) -> Result<()> {
    if status == DPU_OK {
        return Ok(());
    }
    Err(Error::Dpu { call, code: status, message: error_text(lib, status) })
}

fn error_text(lib: &Library, status: dpu_error_t) -> String {
    let Ok(to_string) = &lib.dpu.dpu_error_to_string else { return format!("error {status}") };
    // SAFETY: dpu_error_to_string returns a malloc'd C string (or NULL), which we copy and free.
    unsafe {
        let text = to_string(status);
        if text.is_null() {
            return format!("error {status}");
        }
        let owned = CStr::from_ptr(text).to_string_lossy().into_owned();
        libc::free(text.cast());
        owned
    }
}

fn c_string(text: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::UnknownSymbol(text.to_owned()))
}

pub(crate) struct HwEngine {
    lib: Arc<Library>,
    set: dpu_set_t,
    /// One single-DPU set per DPU, in `DPU_FOREACH` order.
    dpus: Vec<dpu_set_t>,
    ranks: Vec<Range<usize>>,
    program: *mut upmem_sys::dpu_program_t,
    /// The thread waiting for the asynchronous launch being polled, if one is.
    waiter: Option<LaunchWaiter>,
    /// What the DPUs are (chip version, threads).
    silicon: Silicon,
}

// SAFETY: libdpu's sets may be used from any thread (the SDK serialises per rank); the engine is only used
// through &mut self or read-only calls.
unsafe impl Send for HwEngine {}
// SAFETY: as above.
unsafe impl Sync for HwEngine {}

/// What an allocation asks for, in words.
fn describe(amount: Amount) -> String {
    match amount {
        Amount::Dpus(count) => format!("{count} DPUs"),
        Amount::Ranks(count) => format!("{count} ranks"),
        Amount::All => "every free rank".into(),
    }
}

impl HwEngine {
    pub fn allocate(libdpu: Option<&Path>, amount: Amount, profile: &str) -> Result<Self> {
        let lib = library(libdpu)?;
        let set = Self::allocate_set(&lib, amount, &profile::for_hardware(profile))?;
        let mut engine = HwEngine {
            lib,
            set,
            dpus: Vec::new(),
            ranks: Vec::new(),
            program: std::ptr::null_mut(),
            waiter: None,
            silicon: Silicon {
                chip: ChipVersion::default(),
                hardware_threads: ChipVersion::default().hardware_threads(),
            },
        };
        engine.enumerate()?;
        Ok(engine)
    }

    /// `dpu_alloc` (or `dpu_alloc_ranks`) with `profile`. When the hardware has not enough DPUs, the error says
    /// what the kernel driver lists.
    fn allocate_set(lib: &Library, amount: Amount, profile: &str) -> Result<dpu_set_t> {
        let on_hardware = match profile::effective_backend_here(profile) {
            Some((backend, _)) if profile::is_hardware(&backend) => true,
            Some((backend, origin)) => {
                log::warn!("{origin} names backend={backend}: libdpu runs this set there, not on UPMEM DPUs");
                false
            }
            None => false,
        };
        let c_profile = c_string(profile)?;
        let mut set = dpu_set_t::default();
        let status = match amount {
            Amount::Dpus(count) => call!(lib, dpu_alloc(count, c_profile.as_ptr(), &mut set)),
            Amount::All => call!(lib, dpu_alloc(upmem_sys::DPU_ALLOCATE_ALL, c_profile.as_ptr(), &mut set)),
            Amount::Ranks(count) => call!(lib, dpu_alloc_ranks(count, c_profile.as_ptr(), &mut set)),
        };
        if status == DPU_ERR_ALLOCATION && on_hardware {
            return Err(Error::HardwareAllocation {
                requested: describe(amount),
                profile: profile.to_owned(),
                message: error_text(lib, status),
                machine: RankInventory::of_this_machine(),
            });
        }
        checked(lib, if matches!(amount, Amount::Ranks(_)) { "dpu_alloc_ranks" } else { "dpu_alloc" }, status)?;
        Ok(set)
    }

    /// Lists the set's ranks and DPUs with libdpu's iterators (what DPU_RANK_FOREACH/DPU_FOREACH do).
    /// Also reads each rank's chip.
    fn enumerate(&mut self) -> Result<()> {
        let lib = Arc::clone(&self.lib);
        let mut set = self.set;
        let mut rank_iterator = call!(lib, dpu_set_rank_iterator_from(&mut set));
        let mut chips = Vec::new();
        while rank_iterator.has_next {
            let mut rank = rank_iterator.next;
            chips.push(chip::of_rank(&lib, rank)?);
            let start = self.dpus.len();
            let mut dpu_iterator = call!(lib, dpu_set_dpu_iterator_from(&mut rank));
            while dpu_iterator.has_next {
                self.dpus.push(dpu_iterator.next);
                call!(lib, dpu_set_dpu_iterator_next(&mut dpu_iterator));
            }
            self.ranks.push(start..self.dpus.len());
            call!(lib, dpu_set_rank_iterator_next(&mut rank_iterator));
        }
        if let Some(silicon) = chip::of_ranks(chips) {
            self.silicon = silicon;
        }
        Ok(())
    }

    fn raw_symbol(symbol: Symbol) -> upmem_sys::dpu_symbol_t {
        upmem_sys::dpu_symbol_t { address: symbol.address, size: symbol.size }
    }

    fn fault_reason(&self, dpu: dpu_set_t) -> String {
        let Some(Ok(reason)) = self.lib.sim.as_ref().map(|sim| &sim.dpu_sim_fault_reason) else {
            return "in fault (the hardware does not say why: inspect it with dpu-lldb)".into();
        };
        let mut buffer = [0 as c_char; 512];
        // SAFETY: a single-DPU set of this library and a writable buffer of the given size.
        let status = unsafe { reason(dpu, buffer.as_mut_ptr(), buffer.len()) };
        if status != DPU_OK {
            return "in fault".into();
        }
        // SAFETY: dpu_sim_fault_reason NUL-terminates within the buffer.
        unsafe { CStr::from_ptr(buffer.as_ptr()) }.to_string_lossy().into_owned()
    }
}

impl Engine for HwEngine {
    fn sdk_version(&self) -> Option<&str> {
        self.lib.sdk_version.as_deref()
    }

    fn nr_dpus(&self) -> usize {
        self.dpus.len()
    }

    fn ranks(&self) -> &[Range<usize>] {
        &self.ranks
    }

    fn as_raw(&self) -> Option<(dpu_set_t, &upmem_sys::LibDpu)> {
        Some((self.set, &self.lib.dpu))
    }

    fn load(&mut self, kernel: &Kernel) -> Result<()> {
        let chip = self.silicon.chip;
        let (binary, which) = if self.lib.sim.is_some() {
            (kernel.simulator_binary(chip), format!("the simulator's {chip} DPUs (this libdpu is upmem-sim's)"))
        } else {
            (kernel.hardware_binary(chip), format!("{chip} DPUs (install the UPMEM SDK and rebuild)"))
        };
        let binary = binary.ok_or_else(|| Error::KernelUnavailable {
            kernel: kernel.name().to_owned(),
            backend: BackendKind::Hardware,
            reason: format!("it was not built for {which}"),
        })?;
        let path = binary.to_str().ok_or_else(|| Error::InvalidPath(binary.to_path_buf()))?;
        let path = CString::new(path).map_err(|_| Error::InvalidPath(binary.to_path_buf()))?;
        let mut program = std::ptr::null_mut();
        let status = call!(self.lib, dpu_load(self.set, path.as_ptr(), &mut program));
        checked(&self.lib, "dpu_load", status)?;
        self.program = program;
        Ok(())
    }

    fn load_from_memory(&mut self, binary: &[u8]) -> Result<()> {
        let mut program = std::ptr::null_mut();
        let buffer = binary.as_ptr().cast_mut();
        let status = call!(self.lib, dpu_load_from_memory(self.set, buffer, binary.len(), &mut program));
        checked(&self.lib, "dpu_load_from_memory", status)?;
        self.program = program;
        Ok(())
    }

    fn symbol(&self, name: &str) -> Option<Symbol> {
        let name = CString::new(name).ok()?;
        let get_symbol = self.lib.dpu.dpu_get_symbol.as_ref().ok()?;
        // SAFETY: a zeroed dpu_symbol_t is valid; the program came from dpu_load.
        let mut symbol: upmem_sys::dpu_symbol_t = unsafe { std::mem::zeroed() };
        // SAFETY: the program handle came from dpu_load on this library; name is a C string.
        let status = unsafe { get_symbol(self.program, name.as_ptr(), &mut symbol) };
        (status == DPU_OK).then_some(Symbol::at(symbol.address, symbol.size))
    }

    /// Writes `data[i]` to DPU i (or `data[0]` to all) with prepared buffers and one push (or a broadcast).
    /// A queued write returns before the copy is done: the caller keeps `data` alive until `sync`.
    fn write(&mut self, symbol: Symbol, offset: u32, data: &[&[u8]], queued: bool) -> Result<()> {
        let raw = Self::raw_symbol(symbol);
        let length = data[0].len();
        let flags = if queued { DPU_XFER_ASYNC } else { DPU_XFER_DEFAULT };
        if data.len() == 1 {
            let source = data[0].as_ptr().cast();
            let status = call!(self.lib, dpu_broadcast_to_symbol(self.set, raw, offset, source, length, flags));
            return checked(&self.lib, "dpu_broadcast_to", status);
        }
        for (dpu, bytes) in self.dpus.iter().zip(data) {
            let status = call!(self.lib, dpu_prepare_xfer(*dpu, bytes.as_ptr().cast_mut().cast()));
            checked(&self.lib, "dpu_prepare_xfer", status)?;
        }
        let status = call!(self.lib, dpu_push_xfer_symbol(self.set, DPU_XFER_TO_DPU, raw, offset, length, flags));
        checked(&self.lib, "dpu_push_xfer", status)
    }

    fn read(&mut self, symbol: Symbol, offset: u32, out: &mut [&mut [u8]]) -> Result<()> {
        let raw = Self::raw_symbol(symbol);
        let length = out[0].len();
        for (dpu, bytes) in self.dpus.iter().zip(out.iter_mut()) {
            let status = call!(self.lib, dpu_prepare_xfer(*dpu, bytes.as_mut_ptr().cast()));
            checked(&self.lib, "dpu_prepare_xfer", status)?;
        }
        let status =
            call!(self.lib, dpu_push_xfer_symbol(self.set, DPU_XFER_FROM_DPU, raw, offset, length, DPU_XFER_DEFAULT));
        checked(&self.lib, "dpu_push_xfer", status)
    }

    fn write_one(&mut self, index: usize, symbol: Symbol, offset: u32, data: &[u8]) -> Result<()> {
        let raw = Self::raw_symbol(symbol);
        let status =
            call!(self.lib, dpu_copy_to_symbol(self.dpus[index], raw, offset, data.as_ptr().cast(), data.len()));
        checked(&self.lib, "dpu_copy_to", status)
    }

    fn read_one(&mut self, index: usize, symbol: Symbol, offset: u32, out: &mut [u8]) -> Result<()> {
        let raw = Self::raw_symbol(symbol);
        let status =
            call!(self.lib, dpu_copy_from_symbol(self.dpus[index], raw, offset, out.as_mut_ptr().cast(), out.len()));
        checked(&self.lib, "dpu_copy_from", status)
    }

    fn launch(&mut self, wait: bool) -> Result<()> {
        let policy = if wait { DPU_SYNCHRONOUS } else { DPU_ASYNCHRONOUS };
        let status = call!(self.lib, dpu_launch(self.set, policy));
        if status == DPU_ERR_DPU_FAULT {
            return Err(Error::Fault(self.faults()?));
        }
        checked(&self.lib, "dpu_launch", status)
    }

    /// Waits for everything queued on the set (the launch being polled, if any, through its waiting thread).
    fn sync(&mut self) -> Result<()> {
        let status = match self.waiter.take() {
            Some(waiter) => waiter.join()?,
            None => call!(self.lib, dpu_sync(self.set)),
        };
        if status & !DPU_ERR_ASYNC_JOBS == DPU_ERR_DPU_FAULT {
            return Err(Error::Fault(self.faults()?));
        }
        checked(&self.lib, "dpu_sync", status)
    }

    /// Whether the asynchronous launch has finished, without waiting (see [`waiter`]).
    fn poll(&mut self) -> Result<bool> {
        let waiter = match self.waiter.take() {
            Some(waiter) => waiter,
            None => LaunchWaiter::start(Arc::clone(&self.lib), self.set)?,
        };
        let finished = waiter.finished();
        self.waiter = Some(waiter);
        Ok(finished)
    }

    fn faults(&mut self) -> Result<Vec<FaultInfo>> {
        let mut faults = Vec::new();
        for (index, dpu) in self.dpus.iter().enumerate() {
            let (mut done, mut fault) = (false, false);
            let status = call!(self.lib, dpu_status(*dpu, &mut done, &mut fault));
            checked(&self.lib, "dpu_status", status)?;
            if fault {
                faults.push(FaultInfo { dpu: index, reason: self.fault_reason(*dpu) });
            }
        }
        Ok(faults)
    }

    fn log(&mut self, index: usize) -> Result<Vec<u8>> {
        // dpulog_read_for_dpu gives what the DPU printed, as the simulator backend does; dpu_log_read would put a
        // line naming the DPU ("=== DPU#0x... ===") before it.
        let dpu = call!(self.lib, dpu_from_set(self.dpus[index]));
        let mut data: *mut c_char = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        // SAFETY: open_memstream writes the buffer pointer and size on fclose; both outlive the stream.
        let stream = unsafe { libc::open_memstream(&mut data, &mut size) };
        if stream.is_null() {
            return Err(Error::Io { what: "open_memstream".into(), error: std::io::Error::last_os_error() });
        }
        let status = call!(self.lib, dpulog_read_for_dpu(dpu, stream.cast()));
        // SAFETY: closing the stream we opened; afterwards data/size describe a malloc'd buffer we own.
        let text = unsafe {
            libc::fclose(stream);
            let text =
                if data.is_null() { Vec::new() } else { std::slice::from_raw_parts(data.cast::<u8>(), size).to_vec() };
            libc::free(data.cast());
            text
        };
        checked(&self.lib, "dpulog_read_for_dpu", status)?;
        Ok(text)
    }

    fn chip(&self) -> ChipVersion {
        self.silicon.chip
    }

    fn hardware_threads(&self) -> u32 {
        self.silicon.hardware_threads
    }
}

impl Drop for HwEngine {
    fn drop(&mut self) {
        if let Some(waiter) = self.waiter.take() {
            // Reached only if the launch was neither waited for nor dropped (which waits): join before freeing.
            let _ = waiter.join();
        }
        if let Ok(free) = &self.lib.dpu.dpu_free {
            // SAFETY: the set came from dpu_alloc on this library and is freed once.
            let status = unsafe { free(self.set) };
            if status != DPU_OK {
                log::warn!("dpu_free failed: {}", error_text(&self.lib, status));
            }
        }
    }
}
