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

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}
