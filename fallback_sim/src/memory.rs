//! Memory shared between the host and the worker processes: sparse memfd files mapped once on each side.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::ptr;

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

    /// Copies `data` into the file at `offset`.
    ///
    /// In a large copy, the pages the file does not hold yet (never written, or given back since) are written
    /// with `pwrite`: the kernel allocates and fills each page in one pass, where a copy through the mapping
    /// takes a page fault per 4 KiB page and zeroes every page before it is overwritten (about twice the time).
    /// Those pages are then mapped into this process in bulk ([`SharedFile::map_in`]), so that later copies run
    /// at memory speed. The pages the file holds already are copied through the mapping: mapping them again
    /// would only slow the copy down.
    ///
    /// # Safety
    /// `offset + data.len()` must be within the file, and nothing else may access that range during the call.
    pub unsafe fn write(&self, offset: usize, data: &[u8]) {
        assert!(offset + data.len() <= self.size, "write range within the file");
        let end = offset + data.len();
        let mut at = offset;
        let copy = |from: usize, to: usize| {
            let part = &data[from - offset..to - offset];
            // SAFETY: [from, to) is within the range, hence the mapping, and nobody else accesses it (guaranteed
            // by the caller).
            unsafe { ptr::copy_nonoverlapping(part.as_ptr(), self.ptr().add(from), part.len()) };
        };
        if data.len() >= FRESH_WRITE_MIN {
            // Alternately the pages held from `at` on (to the next hole) and the fresh ones (to the next data).
            while at < end {
                let Some(hole) = self.seek(at, libc::SEEK_HOLE) else { break };
                let fresh_start = hole.clamp(at, end);
                copy(at, fresh_start);
                at = fresh_start;
                if at == end {
                    break;
                }
                // A hole at `at`, so the next data is past it.
                let Some(next_data) = self.seek(at, libc::SEEK_DATA).filter(|&next| next > at) else { break };
                let fresh_end = next_data.min(end);
                at += self.write_fresh(at, &data[at - offset..fresh_end - offset]);
                copy(at, fresh_end);
                at = fresh_end;
            }
        }
        copy(at, end);
    }

    /// The first offset from `offset` on where the file holds a page (`whence` `SEEK_DATA`) or does not
    /// (`SEEK_HOLE`), which shared memory files answer from their page index; the file's size when there is
    /// none; `None` when the system cannot tell.
    fn seek(&self, offset: usize, whence: libc::c_int) -> Option<usize> {
        // SAFETY: lseek on our own descriptor only moves the file position, which nothing here uses (every read
        // and write names its offset).
        let found = unsafe { libc::lseek(self.fd(), offset as libc::off_t, whence) };
        if found >= 0 {
            return Some(found as usize);
        }
        // ENXIO from SEEK_DATA: no page from `offset` to the end.
        (std::io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO)).then_some(self.size)
    }

    /// Writes `data` at `offset` with `pwrite`, a chunk at a time, mapping each chunk in after it is written
    /// (while another thread's `pwrite` holds the file's lock, which serialises them). Returns how many bytes
    /// it wrote: all unless the system refused, and then the caller copies the rest through the mapping.
    fn write_fresh(&self, offset: usize, data: &[u8]) -> usize {
        let mut written = 0;
        while written < data.len() {
            let chunk = &data[written..(written + FRESH_WRITE_CHUNK).min(data.len())];
            // SAFETY: pwrite reads `chunk.len()` bytes from a live slice and writes our own file within its
            // size (checked by the caller); the range is ours alone (guaranteed by the caller of `write`).
            let count = unsafe {
                libc::pwrite(self.fd(), chunk.as_ptr().cast(), chunk.len(), (offset + written) as libc::off_t)
            };
            if count < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            if count <= 0 {
                break;
            }
            self.map_in(offset + written, count as usize);
            written += count as usize;
        }
        written
    }

    /// Maps the pages of `[offset, offset + length)`, which the file holds, into this process: one read of a
    /// byte per page, so that the kernel maps the pages around each fault with it (fault-around, 16 pages per
    /// fault by default), writable since the mapping is shared. Measured faster than `MADV_POPULATE_READ` (which
    /// visits every page in the kernel: 15.7 against 10.9 GB/s of mapped pages), and it needs no recent kernel.
    fn map_in(&self, offset: usize, length: usize) {
        let page = page_size();
        for at in (offset / page * page..offset + length).step_by(page) {
            // SAFETY: `at` is within the mapping (the range is within the file) and the caller of `write` owns
            // the range, so nothing writes it concurrently; a volatile read keeps the access.
            unsafe { ptr::read_volatile(self.ptr().add(at)) };
        }
    }

    /// Copies `data` into the file at `offset` (see [`SharedFile::write`]), split between the host's cores when
    /// it is large: filling fresh pages is the kernel's work per page.
    ///
    /// # Safety
    /// `offset + data.len()` must be within the file, and nothing else may access that range during the call.
    pub unsafe fn fill(&self, offset: usize, data: &[u8]) {
        assert!(offset + data.len() <= self.size, "fill range within the file");
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let chunk = data.len().div_ceil(threads).div_ceil(PARALLEL_FILL_MIN) * PARALLEL_FILL_MIN;
        if data.len() <= chunk {
            // SAFETY: guaranteed by the caller.
            unsafe { self.write(offset, data) };
            return;
        }
        std::thread::scope(|scope| {
            for (index, part) in data.chunks(chunk).enumerate() {
                // SAFETY: each part is a disjoint piece of the caller's range (guaranteed by the caller).
                scope.spawn(move || unsafe { self.write(offset + index * chunk, part) });
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

/// Copies shorter than this go through the mapping whatever the pages: below it, asking the file which pages
/// it holds costs more than it saves.
const FRESH_WRITE_MIN: usize = 64 << 10;

/// The bytes [`SharedFile::write_fresh`] writes per `pwrite`, then maps in: small enough that another thread's
/// `pwrite` runs while this one maps its pages in, large enough that the calls cost nothing.
const FRESH_WRITE_CHUNK: usize = 1 << 20;

/// The smallest part of a [`SharedFile::fill`] given a thread of its own (a multiple of any page size): below
/// it, starting a thread costs more than it saves.
const PARALLEL_FILL_MIN: usize = 4 << 20;

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: usize = 4096;

    fn contents(file: &SharedFile, offset: usize, length: usize) -> Vec<u8> {
        let mut out = vec![0u8; length];
        // SAFETY: the range is within the mapping (the tests keep it so) and no write runs concurrently.
        unsafe { ptr::copy_nonoverlapping(file.ptr().add(offset), out.as_mut_ptr(), length) };
        out
    }

    /// Whether the file holds any page of `[offset, offset + length)`.
    fn holds_data(file: &SharedFile, offset: usize, length: usize) -> bool {
        file.seek(offset, libc::SEEK_DATA).expect("SEEK_DATA on a memfd") < offset + length
    }

    fn pattern(length: usize, seed: usize) -> Vec<u8> {
        (0..length).map(|i| ((i * 31 + seed) % 251) as u8).collect()
    }

    /// A first write into fresh pages (through `pwrite`), at an offset and of a length that are not whole pages,
    /// lands exactly: its bytes in place, zeroes on both sides, and the file holds only the pages it met.
    #[test]
    fn a_first_write_into_fresh_pages_lands_with_zeroes_around_it() {
        let file = SharedFile::new("test-fresh", 64 * PAGE).unwrap();
        let (offset, data) = (3 * PAGE + 40, pattern(20 * PAGE + 24, 1));
        assert!(!holds_data(&file, 0, 64 * PAGE), "a new file holds no page");
        // SAFETY: within the file; nothing else accesses it.
        unsafe { file.write(offset, &data) };
        let end = offset + data.len();
        let (first_page, last_page) = (offset / PAGE * PAGE, end.div_ceil(PAGE) * PAGE);
        // Checked before reading through the mapping, which commits the pages it reads.
        assert!(!holds_data(&file, 0, first_page), "no page before the write");
        assert!(holds_data(&file, offset, 1) && holds_data(&file, end - 1, 1));
        assert!(!holds_data(&file, last_page, 64 * PAGE - last_page), "no page after the write");
        let around = contents(&file, 0, 64 * PAGE);
        assert!(around[..offset].iter().all(|&byte| byte == 0), "zeroes before the write");
        assert!(around[offset..end] == data[..], "the bytes written");
        assert!(around[end..].iter().all(|&byte| byte == 0), "zeroes after the write");
    }

    /// A write over pages the file holds and pages it does not (copied through the mapping) lands exactly too,
    /// and a range given back reads as zeroes and counts as fresh again.
    #[test]
    fn writes_over_held_and_fresh_pages_land_and_a_discarded_range_is_fresh_again() {
        let file = SharedFile::new("test-mixed", 64 * PAGE).unwrap();
        let first = pattern(16 * PAGE, 2);
        let second = pattern(40 * PAGE + 8, 3);
        // SAFETY: within the file; nothing else accesses it.
        unsafe {
            file.write(8 * PAGE, &first);
            file.write(PAGE + 16, &second);
        }
        let mut expected = vec![0u8; 64 * PAGE];
        expected[8 * PAGE..24 * PAGE].copy_from_slice(&first);
        expected[PAGE + 16..PAGE + 16 + second.len()].copy_from_slice(&second);
        assert!(contents(&file, 0, 64 * PAGE) == expected);

        file.discard(0, 64 * PAGE).unwrap();
        assert!(!holds_data(&file, 0, 64 * PAGE));
        assert!(contents(&file, 0, 64 * PAGE).iter().all(|&byte| byte == 0));
    }

    /// A fill split between threads, each writing fresh pages with `pwrite`, lands whole.
    #[test]
    fn a_parallel_fill_of_fresh_pages_lands_whole() {
        let length = 3 * PARALLEL_FILL_MIN + 5 * PAGE + 8;
        let file = SharedFile::new("test-fill", length + 2 * PAGE).unwrap();
        let data = pattern(length, 4);
        // SAFETY: within the file; nothing else accesses it.
        unsafe { file.fill(PAGE, &data) };
        let written = contents(&file, 0, length + 2 * PAGE);
        assert!(written[..PAGE].iter().all(|&byte| byte == 0));
        assert!(written[PAGE..PAGE + length] == data[..]);
        assert!(written[PAGE + length..].iter().all(|&byte| byte == 0));
    }
}
