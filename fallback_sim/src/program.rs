//! A simulated DPU program: the ELF file built by [`crate::KernelBuilder`], its memory images and symbols.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::Write as _;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSection, ObjectSymbol};

use upmem_types::{ChipVersion, MemoryKind, Symbol, MAX_TASKLETS, MRAM_BASE, MRAM_HEAP};

use crate::build_checks::{self, RecordedChecks};
use crate::builder::CompilerFamily;
use crate::error::{Result, SimError};
use crate::layout::{KernelInfo, ABI_VERSION, FD_FIRST_UNPLACED, KERNEL_MAGIC, MRAM_WINDOW, WRAM_BASE};

/// ELF machine number of real DPU binaries.
const EM_DPU: u16 = 245;
/// WRAM the SDK's linker script reserves per tasklet between the stacks and the heap (`__sw_cache_buffer`).
const SOFTWARE_CACHE_PER_TASKLET: u64 = 8;
/// What [`Program::path`] says of a program read with [`Program::from_bytes`], which has no file.
const FROM_MEMORY: &str = "<loaded from memory>";

/// A program built for the simulator, ready to be loaded into DPUs.
#[derive(Debug)]
pub struct Program {
    path: PathBuf,
    /// The executable of a program loaded from memory: an unlinked copy, held open for the workers to execute
    /// until the program is dropped.
    memory_image: Option<OwnedFd>,
    wram_image: Vec<u8>,
    mram_image: Vec<u8>,
    mram_used: u64,
    symbols: HashMap<String, Symbol>,
    nr_tasklets: u32,
    stack_sizes: Vec<u32>,
    static_wram: u64,
    checks: RecordedChecks,
}

impl Program {
    /// Reads a simulated DPU binary.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Program> {
        let path = path.as_ref();
        let bytes = fs::read(path).map_err(|error| SimError::os(format!("reading {}", path.display()), error))?;
        let absolute = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        Self::parse(absolute, &bytes)
    }

    /// Reads a simulated DPU binary held in memory. The workers execute a copy that has no name in any directory,
    /// so nothing is left behind however the process ends.
    pub fn from_bytes(bytes: &[u8]) -> Result<Program> {
        let mut program = Self::parse(PathBuf::from(FROM_MEMORY), bytes)?;
        program.memory_image = Some(unlinked_executable(bytes)?);
        Ok(program)
    }

    fn parse(path: PathBuf, bytes: &[u8]) -> Result<Program> {
        let invalid = |reason: String| SimError::InvalidProgram { path: path.clone(), reason };
        if bytes.len() >= 20 && bytes[..4] == *b"\x7fELF" && u16::from_le_bytes([bytes[18], bytes[19]]) == EM_DPU {
            return Err(SimError::HardwareBinary(path));
        }
        let file = object::File::parse(bytes).map_err(|error| invalid(format!("not an ELF executable ({error})")))?;
        let section_data = |name: &str| -> Result<Option<(u64, Vec<u8>, u64)>> {
            match file.section_by_name(name) {
                None => Ok(None),
                Some(section) => {
                    let data =
                        section.uncompressed_data().map_err(|error| invalid(format!("section {name}: {error}")))?;
                    Ok(Some((section.address(), data.into_owned(), section.size())))
                }
            }
        };
        let Some((wram_address, wram_image, _)) = section_data(".dpu_wram")? else {
            return Err(invalid("no .dpu_wram section (build it with upmem-sim's KernelBuilder)".into()));
        };
        if wram_address != WRAM_BASE {
            return Err(invalid(format!("WRAM linked at {wram_address:#x}, expected {WRAM_BASE:#x}")));
        }
        let (_, mram_image, _) = section_data(".dpu_mram")?.unwrap_or((MRAM_BASE, Vec::new(), 0));
        let checks = section_data(build_checks::SECTION)?
            .map(|(_, text, _)| RecordedChecks::parse(&String::from_utf8_lossy(&text)))
            .unwrap_or_default();

        let mut symbols = HashMap::new();
        let mut info_address = None;
        for symbol in file.symbols() {
            let Ok(name) = symbol.name() else { continue };
            let address = symbol.address();
            if name == "__dpusim_kernel_info" {
                info_address = Some(address);
            }
            // MRAM's end address included: a symbol there marks the end of variables that fill MRAM, such as
            // the heap symbol of a program whose MRAM variables take all 64 MiB (an empty heap, which the SDK's
            // linker script allows: its `.mram` may end exactly at the end of the `mram` region).
            let memory = if (WRAM_BASE..WRAM_BASE + (1 << 20)).contains(&address) {
                MemoryKind::Wram
            } else if (MRAM_BASE..=MRAM_BASE + MRAM_WINDOW).contains(&address) {
                MemoryKind::Mram
            } else {
                continue;
            };
            let dpu_address = match memory {
                MemoryKind::Wram => address - WRAM_BASE,
                MemoryKind::Mram => address,
            };
            symbols.entry(name.to_owned()).or_insert(Symbol {
                address: dpu_address as u32,
                size: symbol.size() as u32,
                memory,
            });
        }
        let heap = symbols.get(MRAM_HEAP).ok_or_else(|| invalid(format!("no {MRAM_HEAP} symbol")))?;
        let mram_used = heap.offset();
        let static_wram = symbols.get("__dpusim_wram_static_end").map_or(wram_image.len() as u64, Symbol::offset);

        let info_address =
            info_address.ok_or_else(|| invalid("no __dpusim_kernel_info (not built by upmem-sim)".into()))?;
        let info =
            read_kernel_info(&file, info_address).ok_or_else(|| invalid("unreadable __dpusim_kernel_info".into()))?;
        if info.magic != KERNEL_MAGIC || info.abi_version != ABI_VERSION {
            return Err(invalid(format!(
                "built for simulator ABI {} (this is ABI {ABI_VERSION}); rebuild it",
                info.abi_version
            )));
        }
        // A chip with the most threads bounds every program; the DPUs' own chip is checked at load.
        let widest = ChipVersion::V1A;
        if info.nr_tasklets == 0 || info.nr_tasklets > widest.hardware_threads() {
            return Err(SimError::TooManyTasklets { path, nr_tasklets: info.nr_tasklets, chip: widest });
        }
        Ok(Program {
            path,
            memory_image: None,
            wram_image,
            mram_image,
            mram_used,
            symbols,
            nr_tasklets: info.nr_tasklets,
            stack_sizes: info.stack_sizes[..info.nr_tasklets as usize].to_vec(),
            static_wram,
            checks,
        })
    }

    /// Where the program was read from: its file, or `<loaded from memory>` for a program read with
    /// [`Program::from_bytes`], which has none.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file the workers execute: the program's own, or `/proc/self/fd/N` for a program loaded from memory,
    /// whose descriptor `N` is at least [`FD_FIRST_UNPLACED`], so that it names the same file in a worker
    /// until the worker's `exec`.
    pub(crate) fn executable(&self) -> PathBuf {
        match &self.memory_image {
            Some(image) => PathBuf::from(format!("/proc/self/fd/{}", image.as_raw_fd())),
            None => self.path.clone(),
        }
    }

    /// `NR_TASKLETS` the program was built with.
    pub fn nr_tasklets(&self) -> u32 {
        self.nr_tasklets
    }

    /// Nominal WRAM stack of each tasklet.
    pub fn stack_sizes(&self) -> &[u32] {
        &self.stack_sizes
    }

    /// WRAM taken by globals (rodata, data, `__host`, bss), the tasklets' nominal stacks and the SDK's 8-byte
    /// software-cache buffer per tasklet (`.data.sw_cache` of the SDK's linker script, before
    /// `__sys_heap_pointer_reset`): where the heap starts.
    pub fn wram_used(&self) -> u64 {
        let stacks = self.stack_sizes.iter().map(|&size| u64::from(size)).sum::<u64>();
        self.static_wram.next_multiple_of(8) + stacks + SOFTWARE_CACHE_PER_TASKLET * u64::from(self.nr_tasklets)
    }

    /// MRAM taken by `__mram` and `__mram_noinit` variables: the MRAM heap's offset.
    pub fn mram_used(&self) -> u64 {
        self.mram_used
    }

    /// The initial WRAM contents (from WRAM address 0); the rest of WRAM starts zeroed.
    pub(crate) fn wram_image(&self) -> &[u8] {
        &self.wram_image
    }

    /// The initial contents of `__mram` variables (from MRAM offset 0).
    pub(crate) fn mram_image(&self) -> &[u8] {
        &self.mram_image
    }

    /// Looks a symbol up by name, as `dpu_get_symbol` does: the MRAM heap symbol's size is the rest of MRAM
    /// (`mram_size` minus its offset).
    pub fn symbol(&self, name: &str, mram_size: u64) -> Option<Symbol> {
        let mut symbol = *self.symbols.get(name)?;
        if name == MRAM_HEAP {
            symbol.size = mram_size.saturating_sub(symbol.offset()) as u32;
        }
        Some(symbol)
    }

    /// All DPU symbols (WRAM and MRAM) by name.
    pub fn symbols(&self) -> impl Iterator<Item = (&str, &Symbol)> {
        self.symbols.iter().map(|(name, symbol)| (name.as_str(), symbol))
    }

    /// The program's size in DPU instructions as estimated when it was built (`None` for a binary built before
    /// the estimate existed).
    pub fn iram_estimate(&self) -> Option<u32> {
        self.checks.iram_instructions
    }

    /// The family of the host C compiler that built the program, whose code the simulator counts (`None` for a
    /// binary built before builds recorded it).
    pub fn host_compiler(&self) -> Option<CompilerFamily> {
        self.checks.host_compiler
    }

    /// The `__host` and MRAM variables whose layout differs on a DPU, as the build warned of them.
    pub fn layout_differences(&self) -> &[String] {
        &self.checks.layout_differences
    }

    /// What strict mode refuses to load, because a DPU would not run it as the simulator does: a program too
    /// large for the IRAM of `chip`'s DPUs, or with variables the host reaches by name laid out differently on a
    /// DPU.
    pub(crate) fn check_strict(&self, chip: ChipVersion) -> Result<()> {
        let available = chip.iram_instructions();
        if let Some(estimated) = self.iram_estimate().filter(|&instructions| instructions > available) {
            return Err(SimError::IramOverflow { path: self.path.clone(), estimated, available });
        }
        if !self.checks.layout_differences.is_empty() {
            return Err(SimError::LayoutMismatch {
                path: self.path.clone(),
                differences: self.checks.layout_differences.clone(),
            });
        }
        Ok(())
    }

    /// Checks that the program fits DPUs with these memory sizes.
    pub(crate) fn check_fits(&self, wram_size: u64, mram_size: u64) -> Result<()> {
        if self.wram_used() > wram_size {
            return Err(SimError::WramOverflow {
                path: self.path.clone(),
                needed: self.wram_used(),
                available: wram_size,
            });
        }
        if self.mram_used > mram_size {
            return Err(SimError::MramOverflow {
                path: self.path.clone(),
                needed: self.mram_used,
                available: mram_size,
            });
        }
        Ok(())
    }

    /// Checks that DPUs of this chip version have a thread for each of the program's tasklets (libdpu's
    /// `dpu_load` refuses such a program with `DPU_ERR_TOO_MANY_TASKLETS`).
    pub(crate) fn check_threads(&self, chip: ChipVersion) -> Result<()> {
        if self.nr_tasklets > chip.hardware_threads() {
            return Err(SimError::TooManyTasklets { path: self.path.clone(), nr_tasklets: self.nr_tasklets, chip });
        }
        Ok(())
    }
}

fn read_kernel_info(file: &object::File<'_>, address: u64) -> Option<KernelInfo> {
    let section = file.section_by_name(".dpusim.info")?;
    let data = section.data().ok()?;
    let start = usize::try_from(address.checked_sub(section.address())?).ok()?;
    let bytes = data.get(start..start + std::mem::size_of::<KernelInfo>())?;
    let word = |index: usize| u32::from_le_bytes(bytes[index * 4..index * 4 + 4].try_into().expect("4 bytes"));
    let mut stack_sizes = [0; MAX_TASKLETS];
    for (tasklet, size) in stack_sizes.iter_mut().enumerate() {
        *size = word(4 + tasklet);
    }
    Some(KernelInfo {
        magic: word(0),
        abi_version: word(1),
        nr_tasklets: word(2),
        stdout_capacity: word(3),
        stack_sizes,
    })
}

/// An executable copy of `bytes` that no directory names: written to a temporary file, opened read-only and
/// unlinked before this returns, so that only a crash within this function could leave the file behind. The
/// descriptor is close-on-exec and at least [`FD_FIRST_UNPLACED`] (see [`Program::executable`]).
fn unlinked_executable(bytes: &[u8]) -> Result<OwnedFd> {
    let os_error = |error| SimError::os("writing a DPU program to a temporary file", error);
    let mut file = tempfile::Builder::new()
        .prefix("upmem-sim-program-")
        .permissions(fs::Permissions::from_mode(0o700))
        .tempfile()
        .map_err(os_error)?;
    file.write_all(bytes).map_err(os_error)?;
    let reader = File::open(file.path()).map_err(os_error)?;
    // Closes the writable descriptor (a file open for writing cannot be executed: ETXTBSY) and unlinks the file.
    file.close().map_err(os_error)?;
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own; it returns a new descriptor or -1.
    let raised = unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_DUPFD_CLOEXEC, FD_FIRST_UNPLACED) };
    if raised < 0 {
        return Err(os_error(std::io::Error::last_os_error()));
    }
    // SAFETY: `raised` was just returned by fcntl and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(raised) })
}
