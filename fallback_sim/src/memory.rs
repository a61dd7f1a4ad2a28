//! Memory shared between the host and the worker processes: sparse memfd files mapped once on each side.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::fs::MetadataExt;
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

    /// Bytes of memory the file holds: its pages written and not given back since.
    pub fn held_bytes(&self) -> Result<u64> {
        let metadata = self.file.metadata().map_err(|error| SimError::os("measuring a memory file", error))?;
        // st_blocks counts 512-byte units whatever the file system's block size.
        Ok(metadata.blocks() * 512)
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
        let copy = |from: usize, to: usize| {
            let part = &data[from - offset..to - offset];
            // SAFETY: [from, to) is within the range, hence the mapping, and nobody else accesses it (guaranteed
            // by the caller).
            unsafe { ptr::copy_nonoverlapping(part.as_ptr(), self.ptr().add(from), part.len()) };
        };
        if data.len() < HOLE_SEEK_MIN {
            copy(offset, end);
            return;
        }
        self.for_each_extent(offset, end, |from, to, held| {
            let written = if held { 0 } else { self.write_fresh(from, &data[from - offset..to - offset]) };
            copy(from + written, to);
        });
    }

    /// Copies `out.len()` bytes of the file at `offset` into `out`.
    ///
    /// In a large read, the ranges the file does not hold (never written, or given back since) are filled with
    /// zeroes in `out` instead of read through the mapping: a read fault on a shared memory mapping allocates a
    /// zeroed page and adds it to the file (only private mappings get the shared zero page), so reading back
    /// memory nothing wrote would commit all of it (64 MiB read from each of 2,048 DPUs: 128 GiB of zeroes).
    /// The ranges the file holds are copied through the mapping. A short read copies through the mapping
    /// whatever the pages: it can commit a few pages at most, and asking the file costs more than the copy.
    ///
    /// # Safety
    /// `offset + out.len()` must be within the file, and nothing may write that range during the call.
    pub unsafe fn read(&self, offset: usize, out: &mut [u8]) {
        assert!(offset + out.len() <= self.size, "read range within the file");
        if out.len() < HOLE_SEEK_MIN {
            // SAFETY: guaranteed by the caller.
            unsafe { self.copy_out(offset, out) };
            return;
        }
        self.for_each_extent(offset, offset + out.len(), |from, to, held| {
            let part = &mut out[from - offset..to - offset];
            if held {
                // SAFETY: [from, to) is within the range (guaranteed by the caller).
                unsafe { self.copy_out(from, part) };
            } else {
                part.fill(0);
            }
        });
    }

    /// Copies `out.len()` bytes at `offset` through the mapping.
    ///
    /// # Safety
    /// As for [`SharedFile::read`].
    unsafe fn copy_out(&self, offset: usize, out: &mut [u8]) {
        // SAFETY: the range is within the mapping and nothing writes it (guaranteed by the caller).
        unsafe { ptr::copy_nonoverlapping(self.ptr().add(offset), out.as_mut_ptr(), out.len()) };
    }

    /// Calls `visit(from, to, held)` for consecutive parts of `[offset, end)`, in order: `held` when the file
    /// holds the pages of `[from, to)`, not when it holds none of them (a hole: never written, or given back).
    /// When the system cannot tell, a part counts as held, which costs memory, never bytes.
    ///
    /// The cost grows with the range, not with what lies around it: which pages are in memory is asked of the
    /// page tables and page cache (`mincore`), a window at a time; a run of pages not in memory is either a hole
    /// or swapped out, which `SEEK_DATA` tells apart (it counts swapped pages as data). `SEEK_HOLE` is not used:
    /// it walks every page held from the offset on, far past the range when neighbouring DPUs' memories are
    /// full (measured: 4.5 ms to find the end of a 1 MiB read in a file of 512 MiB held).
    fn for_each_extent(&self, offset: usize, end: usize, mut visit: impl FnMut(usize, usize, bool)) {
        // Memory nothing wrote, the common case of a large range with no page held: one question answers it.
        match self.seek(offset, libc::SEEK_DATA) {
            None => return visit(offset, end, true),
            Some(data) if data >= end => return visit(offset, end, false),
            Some(_) => {}
        }
        let page = page_size();
        let mut residency = [0u8; EXTENT_QUERY_PAGES];
        let mut window = offset / page * page;
        while window < end {
            let window_end = (window + EXTENT_QUERY_PAGES * page).min(end.div_ceil(page) * page);
            let pages = (window_end - window) / page;
            // SAFETY: the window is page-aligned and within the mapping (the range is within the file, and the
            // mapping covers whole pages); mincore writes one byte per page, `pages` <= EXTENT_QUERY_PAGES.
            let status =
                unsafe { libc::mincore(self.ptr().add(window).cast(), window_end - window, residency.as_mut_ptr()) };
            if status != 0 {
                return visit(window.max(offset), end, true);
            }
            let in_memory = |index: usize| residency[index] & 1 != 0;
            let mut index = 0;
            while index < pages {
                let run_end = (index..pages).find(|&other| in_memory(other) != in_memory(index)).unwrap_or(pages);
                let (from, to) = ((window + index * page).max(offset), (window + run_end * page).min(end));
                if in_memory(index) {
                    visit(from, to, true);
                } else {
                    self.visit_not_in_memory(from, to, page, &mut visit);
                }
                index = run_end;
            }
            window = window_end;
        }
    }

    /// [`SharedFile::for_each_extent`] over `[from, to)`, whose pages are not in memory: holes, and the pages
    /// swapped out among them, which are held.
    fn visit_not_in_memory(&self, from: usize, to: usize, page: usize, visit: &mut impl FnMut(usize, usize, bool)) {
        let mut at = from;
        while at < to {
            match self.seek(at, libc::SEEK_DATA) {
                None => return visit(at, to, true),
                Some(data) if data >= to => return visit(at, to, false),
                Some(data) => {
                    if data > at {
                        visit(at, data, false);
                    }
                    let page_end = ((data / page + 1) * page).min(to);
                    visit(data, page_end, true);
                    at = page_end;
                }
            }
        }
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

/// Copies shorter than this, into or out of the file, go through the mapping whatever the pages: below it,
/// asking the file which pages it holds costs more than it saves.
const HOLE_SEEK_MIN: usize = 64 << 10;

/// Pages [`SharedFile::for_each_extent`] asks about per `mincore` call (1 MiB of 4 KiB pages, on the stack).
const EXTENT_QUERY_PAGES: usize = 256;

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

    /// A read over pages the file holds and holes, across several `mincore` windows and at an offset and a
    /// length that are not whole pages, returns the bytes written and zeroes, and commits none of the holes.
    #[test]
    fn a_read_over_held_pages_and_holes_commits_no_hole() {
        let pages = 3 * EXTENT_QUERY_PAGES;
        let file = SharedFile::new("test-read", pages * PAGE).unwrap();
        let mut expected = vec![0u8; pages * PAGE];
        for (offset, length, seed) in
            [(3 * PAGE + 40, 20 * PAGE, 5), (300 * PAGE, 10 * PAGE + 8, 6), (700 * PAGE, 8, 7)]
        {
            let data = pattern(length, seed);
            // SAFETY: within the file; nothing else accesses it.
            unsafe { file.write(offset, &data) };
            expected[offset..offset + length].copy_from_slice(&data);
        }
        let held = file.held_bytes().unwrap();
        let (offset, length) = (100, pages * PAGE - 200);
        let mut out = vec![0xAA; length];
        // SAFETY: within the file; nothing else accesses it.
        unsafe { file.read(offset, &mut out) };
        assert!(out == expected[offset..offset + length], "the bytes written and zeroes around them");
        assert_eq!(file.held_bytes().unwrap(), held, "the read committed no page");
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
