//! Memory shared between the host and the worker processes: sparse memfd files mapped once on each side.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use memmap2::{MmapOptions, MmapRaw};

use crate::error::{Result, SimError};

/// A memfd of a given size, mapped shared into this process. Untouched pages cost nothing.
pub(crate) struct SharedFile {
    file: File,
    map: MmapRaw,
    size: usize,
}

impl SharedFile {
    pub fn new(name: &str, size: usize) -> Result<Self> {
        let c_name = CString::new(format!("upmem-sim-{name}")).expect("memfd name has no NUL");
        // SAFETY: memfd_create takes a valid NUL-terminated name and flags; it returns a new descriptor or -1.
        let fd = unsafe { libc::memfd_create(c_name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(SimError::os(format!("creating the {name} memory file"), std::io::Error::last_os_error()));
        }
        // SAFETY: fd was just returned by memfd_create and is owned by nobody else.
        let file = unsafe { File::from_raw_fd(fd) };
        file.set_len(size as u64)
            .map_err(|error| SimError::os(format!("sizing the {name} memory file to {size} bytes"), error))?;
        let map = MmapOptions::new()
            .len(size)
            .map_raw(&file)
            .map_err(|error| SimError::os(format!("mapping the {name} memory file ({size} bytes)"), error))?;
        Ok(SharedFile { file, map, size })
    }

    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    pub fn ptr(&self) -> *mut u8 {
        self.map.as_mut_ptr()
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Commits the pages of `[offset, offset + length)` in one call, so that a first write into fresh memory
    /// runs at memory speed instead of taking one page fault per 4 KiB page: `MADV_POPULATE_WRITE` (Linux
    /// 5.14+), else allocating the range in the file (`fallocate`), which leaves only the mapping to each fault.
    /// Best effort: if neither works, the write faults its pages in as before.
    pub fn populate(&self, offset: usize, length: usize) {
        static POPULATE_WRITE_UNSUPPORTED: AtomicBool = AtomicBool::new(false);
        assert!(offset + length <= self.size, "populate range within the file");
        let page = page_size();
        let start = offset / page * page;
        let end = (offset + length).div_ceil(page) * page;
        let end = end.min(self.size);
        if !POPULATE_WRITE_UNSUPPORTED.load(Ordering::Relaxed) {
            // SAFETY: madvise on a page-aligned range inside our own mapping; MADV_POPULATE_WRITE only faults
            // pages in (it does not change their contents).
            let status = unsafe { libc::madvise(self.ptr().add(start).cast(), end - start, libc::MADV_POPULATE_WRITE) };
            if status == 0 {
                return;
            }
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
                POPULATE_WRITE_UNSUPPORTED.store(true, Ordering::Relaxed);
            }
        }
        // SAFETY: allocating (mode 0) a range of our own memfd within its size keeps existing contents and
        // zero-fills holes; nothing is read or written through a reference.
        unsafe { libc::fallocate(self.fd(), 0, start as libc::off_t, (end - start) as libc::off_t) };
    }

    /// Copies `data` into the file at `offset`, committing the pages first (see [`SharedFile::populate`]). A
    /// large copy is split between the host's cores: committing fresh pages is the kernel's work per page, and
    /// it costs several times the copy itself.
    ///
    /// # Safety
    /// `offset + data.len()` must be within the file, and nothing else may access that range during the call.
    pub unsafe fn fill(&self, offset: usize, data: &[u8]) {
        assert!(offset + data.len() <= self.size, "fill range within the file");
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let chunk = data.len().div_ceil(threads).div_ceil(PARALLEL_FILL_MIN) * PARALLEL_FILL_MIN;
        // SAFETY: the range is within the mapping and nobody else accesses it (guaranteed by the caller).
        let destination = unsafe { std::slice::from_raw_parts_mut(self.ptr().add(offset), data.len()) };
        let fill_part = |start: usize, part: &mut [u8], source: &[u8]| {
            self.populate(offset + start, part.len());
            part.copy_from_slice(source);
        };
        if data.len() <= chunk {
            fill_part(0, destination, data);
            return;
        }
        std::thread::scope(|scope| {
            for (index, (part, source)) in destination.chunks_mut(chunk).zip(data.chunks(chunk)).enumerate() {
                scope.spawn(move || fill_part(index * chunk, part, source));
            }
        });
    }

    /// Gives `[offset, offset + length)` back to the system: it reads as zeros again and costs no memory.
    pub fn discard(&self, offset: usize, length: usize) -> Result<()> {
        assert!(offset + length <= self.size, "discard range within the file");
        // SAFETY: punching a hole in our own memfd within its size; no Rust reference to the range exists
        // (the memory is only accessed through raw pointers and by workers, which are idle for this DPU).
        let status = unsafe {
            libc::fallocate(
                self.fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                length as libc::off_t,
            )
        };
        if status != 0 {
            return Err(SimError::os("clearing DPU memory", std::io::Error::last_os_error()));
        }
        Ok(())
    }
}

/// The smallest part of a [`SharedFile::fill`] given a thread of its own (a multiple of any page size): below
/// it, starting a thread costs more than it saves.
const PARALLEL_FILL_MIN: usize = 4 << 20;

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}
