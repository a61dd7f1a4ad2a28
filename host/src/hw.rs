//! The hardware backend: the UPMEM SDK's libdpu, loaded at run time.
//!
//! The library is found at `$UPMEM_LIBDPU`, else `$UPMEM_HOME/lib/libdpu.so`, else by the dynamic loader's
//! search (`libdpu.so`). Pointed at the simulator's libdpu-compatible library (`upmem-sim-sdk`), this backend
//! runs on the simulator with everything but the DPU silicon exercised; it then loads the kernels' simulated
//! binaries.

use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use upmem_sys::{
    dpu_error_t, dpu_set_t, LibDpu, DPU_ASYNCHRONOUS, DPU_ERR_ASYNC_JOBS, DPU_ERR_DPU_FAULT, DPU_OK, DPU_SYNCHRONOUS,
    DPU_XFER_ASYNC, DPU_XFER_DEFAULT, DPU_XFER_FROM_DPU, DPU_XFER_TO_DPU,
};

use crate::backend::BackendKind;
use crate::error::{Error, Result};
use crate::set::{Amount, FaultInfo, Symbol};
use crate::Kernel;

static LIBRARIES: Mutex<Option<HashMap<PathBuf, Arc<LibDpu>>>> = Mutex::new(None);

fn candidates(explicit: Option<&Path>) -> Vec<PathBuf> {
    if let Some(path) = explicit {
        return vec![path.to_path_buf()];
    }
    if let Some(path) = std::env::var_os("UPMEM_LIBDPU") {
        return vec![PathBuf::from(path)];
    }
    let mut paths = Vec::new();
    if let Some(home) = std::env::var_os("UPMEM_HOME") {
        paths.push(Path::new(&home).join("lib/libdpu.so"));
    }
    paths.push(PathBuf::from("libdpu.so"));
    paths
}

/// The libdpu to use: `explicit`, else the default search (each path loaded once).
pub(crate) fn library(explicit: Option<&Path>) -> Result<Arc<LibDpu>> {
    let mut cache = LIBRARIES.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    let candidates = candidates(explicit);
    let mut last_error = String::new();
    for path in &candidates {
        if let Some(library) = cache.get(path) {
            return Ok(Arc::clone(library));
        }
        // SAFETY: loading libdpu runs its initialisers, which is what using the SDK means; the symbols are
        // typed by the bindings generated from the SDK's own headers.
        match unsafe { LibDpu::new(path) } {
            Ok(library) => {
                log::debug!("loaded libdpu from {}", path.display());
                let library = Arc::new(library);
                cache.insert(path.clone(), Arc::clone(&library));
                return Ok(library);
            }
            Err(error) => last_error = format!("{}: {error}", path.display()),
        }
    }
    let tried: Vec<String> = candidates.iter().map(|path| path.display().to_string()).collect();
    Err(Error::LibraryNotFound { tried: tried.join(", "), reason: last_error })
}

/// Calls a libdpu function through the loaded library, turning a missing symbol into a typed error.
macro_rules! call {
    ($lib:expr, $name:ident ( $($arg:expr),* $(,)? )) => {{
        match &$lib.$name {
            // SAFETY: the arguments follow the SDK's contract for this function (checked by the safe layer).
            Ok(function) => unsafe { function($($arg),*) },
            Err(_) => return Err(Error::MissingFunction(stringify!($name))),
        }
    }};
}

fn checked(lib: &LibDpu, call: &'static str, status: dpu_error_t) -> Result<()> {
    if status == DPU_OK {
        return Ok(());
    }
    Err(Error::Dpu { call, code: status, message: error_text(lib, status) })
}

fn error_text(lib: &LibDpu, status: dpu_error_t) -> String {
    let Ok(to_string) = &lib.dpu_error_to_string else { return format!("error {status}") };
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
    lib: Arc<LibDpu>,
    set: dpu_set_t,
    /// One single-DPU set per DPU, in `DPU_FOREACH` order.
    dpus: Vec<dpu_set_t>,
    ranks: Vec<Range<usize>>,
    program: *mut upmem_sys::dpu_program_t,
    /// The library is the simulator's (it has `dpu_sim_fault_reason`), so kernels load their simulated binary.
    simulated: bool,
}

// SAFETY: libdpu's sets may be used from any thread (the SDK serialises per rank); the engine is only used
// through &mut self or read-only calls.
unsafe impl Send for HwEngine {}
// SAFETY: as above.
unsafe impl Sync for HwEngine {}

impl HwEngine {
    pub fn allocate(libdpu: Option<&Path>, amount: Amount, profile: &str) -> Result<Self> {
        let lib = library(libdpu)?;
        let profile = c_string(profile)?;
        let mut set = dpu_set_t::default();
        let status = match amount {
            Amount::Dpus(count) => call!(lib, dpu_alloc(count, profile.as_ptr(), &mut set)),
            Amount::All => call!(lib, dpu_alloc(upmem_sys::DPU_ALLOCATE_ALL, profile.as_ptr(), &mut set)),
            Amount::Ranks(count) => call!(lib, dpu_alloc_ranks(count, profile.as_ptr(), &mut set)),
        };
        checked(&lib, if matches!(amount, Amount::Ranks(_)) { "dpu_alloc_ranks" } else { "dpu_alloc" }, status)?;
        let simulated = lib.dpu_sim_fault_reason.is_ok();
        let mut engine =
            HwEngine { lib, set, dpus: Vec::new(), ranks: Vec::new(), program: std::ptr::null_mut(), simulated };
        engine.enumerate()?;
        Ok(engine)
    }

    /// Lists the set's ranks and DPUs with libdpu's iterators (what DPU_RANK_FOREACH/DPU_FOREACH do).
    fn enumerate(&mut self) -> Result<()> {
        let lib = Arc::clone(&self.lib);
        let mut set = self.set;
        let mut rank_iterator = call!(lib, dpu_set_rank_iterator_from(&mut set));
        while rank_iterator.has_next {
            let mut rank = rank_iterator.next;
            let start = self.dpus.len();
            let mut dpu_iterator = call!(lib, dpu_set_dpu_iterator_from(&mut rank));
            while dpu_iterator.has_next {
                self.dpus.push(dpu_iterator.next);
                call!(lib, dpu_set_dpu_iterator_next(&mut dpu_iterator));
            }
            self.ranks.push(start..self.dpus.len());
            call!(lib, dpu_set_rank_iterator_next(&mut rank_iterator));
        }
        Ok(())
    }

    pub fn nr_dpus(&self) -> usize {
        self.dpus.len()
    }

    pub fn ranks(&self) -> &[Range<usize>] {
        &self.ranks
    }

    pub fn as_raw(&self) -> (dpu_set_t, &LibDpu) {
        (self.set, &self.lib)
    }

    pub fn load(&mut self, kernel: &Kernel) -> Result<()> {
        let (binary, which) = if self.simulated {
            (kernel.simulator_binary(), "the simulator (this libdpu is upmem-sim's)")
        } else {
            (kernel.hardware_binary(), "DPUs (install the UPMEM SDK and rebuild)")
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

    pub fn load_from_memory(&mut self, binary: &[u8]) -> Result<()> {
        let mut program = std::ptr::null_mut();
        let buffer = binary.as_ptr().cast_mut();
        let status = call!(self.lib, dpu_load_from_memory(self.set, buffer, binary.len(), &mut program));
        checked(&self.lib, "dpu_load_from_memory", status)?;
        self.program = program;
        Ok(())
    }

    pub fn symbol(&self, name: &str) -> Option<Symbol> {
        let name = CString::new(name).ok()?;
        let get_symbol = self.lib.dpu_get_symbol.as_ref().ok()?;
        // SAFETY: a zeroed dpu_symbol_t is valid; the program came from dpu_load.
        let mut symbol: upmem_sys::dpu_symbol_t = unsafe { std::mem::zeroed() };
        // SAFETY: the program handle came from dpu_load on this library; name is a C string.
        let status = unsafe { get_symbol(self.program, name.as_ptr(), &mut symbol) };
        (status == DPU_OK).then_some(Symbol::at(symbol.address, symbol.size))
    }

    fn raw_symbol(symbol: Symbol) -> upmem_sys::dpu_symbol_t {
        upmem_sys::dpu_symbol_t { address: symbol.address, size: symbol.size }
    }

    /// Writes `data[i]` to DPU i (or `data[0]` to all) with prepared buffers and one push (or a broadcast).
    /// A queued write returns before the copy is done: the caller keeps `data` alive until `sync`.
    pub fn write(&mut self, symbol: Symbol, offset: u32, data: &[&[u8]], queued: bool) -> Result<()> {
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

    pub fn read(&mut self, symbol: Symbol, offset: u32, out: &mut [&mut [u8]]) -> Result<()> {
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

    pub fn write_one(&mut self, index: usize, symbol: Symbol, offset: u32, data: &[u8]) -> Result<()> {
        let raw = Self::raw_symbol(symbol);
        let status =
            call!(self.lib, dpu_copy_to_symbol(self.dpus[index], raw, offset, data.as_ptr().cast(), data.len()));
        checked(&self.lib, "dpu_copy_to", status)
    }

    pub fn read_one(&mut self, index: usize, symbol: Symbol, offset: u32, out: &mut [u8]) -> Result<()> {
        let raw = Self::raw_symbol(symbol);
        let status =
            call!(self.lib, dpu_copy_from_symbol(self.dpus[index], raw, offset, out.as_mut_ptr().cast(), out.len()));
        checked(&self.lib, "dpu_copy_from", status)
    }

    pub fn launch(&mut self, wait: bool) -> Result<()> {
        let policy = if wait { DPU_SYNCHRONOUS } else { DPU_ASYNCHRONOUS };
        let status = call!(self.lib, dpu_launch(self.set, policy));
        if status == DPU_ERR_DPU_FAULT {
            return Err(Error::Fault(self.faults()?));
        }
        checked(&self.lib, "dpu_launch", status)
    }

    pub fn sync(&mut self) -> Result<()> {
        let status = call!(self.lib, dpu_sync(self.set));
        if status & !DPU_ERR_ASYNC_JOBS == DPU_ERR_DPU_FAULT {
            return Err(Error::Fault(self.faults()?));
        }
        checked(&self.lib, "dpu_sync", status)
    }

    pub fn poll(&mut self) -> Result<bool> {
        let (mut done, mut fault) = (false, false);
        let status = call!(self.lib, dpu_status(self.set, &mut done, &mut fault));
        checked(&self.lib, "dpu_status", status)?;
        Ok(done)
    }

    pub fn faults(&mut self) -> Result<Vec<FaultInfo>> {
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

    fn fault_reason(&self, dpu: dpu_set_t) -> String {
        let Ok(reason) = &self.lib.dpu_sim_fault_reason else {
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

    pub fn log(&mut self, index: usize) -> Result<Vec<u8>> {
        let mut data: *mut c_char = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        // SAFETY: open_memstream writes the buffer pointer and size on fclose; both outlive the stream.
        let stream = unsafe { libc::open_memstream(&mut data, &mut size) };
        if stream.is_null() {
            return Err(Error::Io { what: "open_memstream".into(), error: std::io::Error::last_os_error() });
        }
        let status = call!(self.lib, dpu_log_read(self.dpus[index], stream.cast()));
        // SAFETY: closing the stream we opened; afterwards data/size describe a malloc'd buffer we own.
        let text = unsafe {
            libc::fclose(stream);
            let text =
                if data.is_null() { Vec::new() } else { std::slice::from_raw_parts(data.cast::<u8>(), size).to_vec() };
            libc::free(data.cast());
            text
        };
        checked(&self.lib, "dpu_log_read", status)?;
        Ok(text)
    }
}

impl Drop for HwEngine {
    fn drop(&mut self) {
        if let Ok(free) = &self.lib.dpu_free {
            // SAFETY: the set came from dpu_alloc on this library and is freed once.
            let status = unsafe { free(self.set) };
            if status != DPU_OK {
                log::warn!("dpu_free failed: {}", error_text(&self.lib, status));
            }
        }
    }
}
