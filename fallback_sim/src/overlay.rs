//! Broadcasts without copies: MRAM pages shared copy-on-write by the DPUs that received the same bytes.
//!
//! A broadcast's whole pages are written once into the shared-pages file; each target DPU's overlay record
//! (`struct dpusim_overlay` in abi.h) lists the MRAM ranges backed by it, and the DPU's own pages there are
//! given back. A page of such a range is *shared* until it becomes the DPU's *own* (its bit in `owned`): when
//! the host writes into it (here) or a kernel does (the worker's fault handler copies it, `overlay.c`). Reads
//! of a shared page come from the shared-pages file. Nothing else about the DPU changes.

use std::collections::BTreeMap;
use std::ptr;

use crate::error::Result;
use crate::memory::SharedFile;

/// Page size of the sharing (`DPUSIM_PAGE_SIZE`).
pub(crate) const PAGE: usize = 4096;
/// Bytes between two DPUs' overlay records (`DPUSIM_OVERLAY_STRIDE`).
pub(crate) const STRIDE: usize = 4096;
const RANGES: usize = 4;
/// MRAM pages an overlay can describe (the 64 MiB MRAM window).
const MAX_PAGES: usize = (64 << 20) / PAGE;
/// Virtual size of the shared-pages file: sparse, only broadcast bytes cost memory.
const SHARED_FILE_SIZE: usize = 1 << 40;

/// `struct dpusim_overlay_range`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct OverlayRange {
    mram_offset: u32,
    pages: u32,
    shared_offset: u64,
}

/// `struct dpusim_overlay`.
#[repr(C)]
pub(crate) struct OverlayRecord {
    nr_ranges: u32,
    reserved: u32,
    ranges: [OverlayRange; RANGES],
    pub(crate) owned: [u8; MAX_PAGES / 8],
}

/// Bytes written once and shared by several DPUs: a page-aligned extent of the shared-pages file.
#[derive(Clone, Copy, Debug)]
struct Extent {
    length: usize,
    users: usize,
}

/// Whole pages written once by [`Overlays::share`], for DPUs to [`Overlays::attach`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct SharedPages {
    /// Where they start in the shared-pages file.
    offset: u64,
    pages: usize,
}

/// The shared-pages file, every DPU's overlay record, and who uses which extent.
pub(crate) struct Overlays {
    shared: SharedFile,
    records: SharedFile,
    /// Extents by their offset in the shared-pages file. A range may use part of one (what a later broadcast
    /// left of an earlier one): each range counts as one user of the extent that holds it.
    extents: BTreeMap<u64, Extent>,
    /// How many ranges each DPU has (only the host changes them), so that DPUs without any never touch their
    /// record: most transfers are to DPUs that share nothing.
    nr_ranges: Vec<u8>,
    next_offset: u64,
}

impl Overlays {
    pub fn new(nr_dpus: u32) -> Result<Overlays> {
        Ok(Overlays {
            shared: SharedFile::new("shared-pages", SHARED_FILE_SIZE)?,
            records: SharedFile::new("overlays", nr_dpus as usize * STRIDE)?,
            extents: BTreeMap::new(),
            nr_ranges: vec![0; nr_dpus as usize],
            next_offset: 0,
        })
    }

    pub fn shared_fd(&self) -> std::os::fd::RawFd {
        self.shared.fd()
    }

    pub fn records_fd(&self) -> std::os::fd::RawFd {
        self.records.fd()
    }

    /// Bytes of memory the shared pages and the overlay records hold.
    pub fn held_bytes(&self) -> Result<u64> {
        Ok(self.shared.held_bytes()? + self.records.held_bytes()?)
    }

    fn record(&self, dpu: u32) -> *mut OverlayRecord {
        // SAFETY: each DPU has STRIDE bytes, at least size_of::<OverlayRecord>() (checked against abi.h), and the
        // mapping is page-aligned, so the pointer is in bounds and aligned.
        unsafe { self.records.ptr().add(dpu as usize * STRIDE).cast() }
    }

    /// The DPU's ranges. The caller holds the DPU (idle, and its host access lock or `&mut self`).
    fn ranges(&self, dpu: u32) -> Vec<OverlayRange> {
        if self.nr_ranges[dpu as usize] == 0 {
            return Vec::new();
        }
        // SAFETY: the record is ours to read while the DPU is idle (see `record`).
        let record = unsafe { &*self.record(dpu) };
        record.ranges[..(record.nr_ranges as usize).min(RANGES)].to_vec()
    }

    fn is_owned(&self, dpu: u32, page: usize) -> bool {
        // SAFETY: as in `ranges`; page < MAX_PAGES since ranges lie in MRAM.
        let owned = unsafe { (*self.record(dpu)).owned[page / 8] };
        owned & (1 << (page % 8)) != 0
    }

    fn set_owned(&self, dpu: u32, page: usize, owned: bool) {
        // SAFETY: as in `ranges`: the DPU is idle and only this host thread touches its record.
        let byte = unsafe { &mut (*self.record(dpu)).owned[page / 8] };
        if owned {
            *byte |= 1 << (page % 8);
        } else {
            *byte &= !(1 << (page % 8));
        }
    }

    /// Marks `pages` pages from `first` as shared again: whole bytes at once, the partial ones bit by bit.
    fn clear_owned(&self, dpu: u32, first: usize, pages: usize) {
        let end = first + pages;
        let whole = first.div_ceil(8)..end / 8;
        if whole.start >= whole.end {
            (first..end).for_each(|page| self.set_owned(dpu, page, false));
            return;
        }
        (first..whole.start * 8).chain(whole.end * 8..end).for_each(|page| self.set_owned(dpu, page, false));
        // SAFETY: as in `ranges`; no other reference to the record exists while this one lives, and `whole` lies
        // within the bitmap since the pages lie within MRAM.
        let record = unsafe { &mut *self.record(dpu) };
        record.owned[whole].fill(0);
    }

    /// The shared pages of `dpu` that meet `[offset, offset + length)` of MRAM: (MRAM offset, shared-file
    /// offset) of each page. Only the pages inside the range are visited, so a small write costs little
    /// however large the DPU's broadcasts are.
    fn shared_pages(&self, dpu: u32, offset: u64, length: usize) -> Vec<(usize, usize)> {
        let (start, end) = (offset as usize, offset as usize + length);
        let mut pages = Vec::new();
        for range in self.ranges(dpu) {
            let first = range.mram_offset as usize / PAGE;
            let met = (start / PAGE).max(first)..end.div_ceil(PAGE).min(first + range.pages as usize);
            for page in met.filter(|&page| !self.is_owned(dpu, page)) {
                pages.push((page * PAGE, range.shared_offset as usize + (page - first) * PAGE));
            }
        }
        pages
    }

    /// Before the host writes `[offset, offset + length)` of `dpu`'s MRAM (slice `mram_base` of `mram`): the
    /// shared pages it meets become the DPU's own, copied first unless the write covers them whole.
    pub fn make_own(&self, dpu: u32, mram: &SharedFile, mram_base: usize, offset: u64, length: usize) {
        self.own_pages(dpu, mram, mram_base, offset, length, true);
    }

    /// The shared pages of `dpu` that meet `[offset, offset + length)` become its own, copied whole when
    /// `written_after` is false (nothing will overwrite them), else copied only where the range leaves part of
    /// a page as it was.
    fn own_pages(
        &self,
        dpu: u32,
        mram: &SharedFile,
        mram_base: usize,
        offset: u64,
        length: usize,
        written_after: bool,
    ) {
        let (start, end) = (offset as usize, offset as usize + length);
        for (at, shared) in self.shared_pages(dpu, offset, length) {
            if !(written_after && start <= at && at + PAGE <= end) {
                // SAFETY: both pages lie within their files (ranges are within MRAM and their extents), the DPU
                // is idle and the caller holds it, so nothing else writes the destination.
                unsafe {
                    ptr::copy_nonoverlapping(self.shared.ptr().add(shared), mram.ptr().add(mram_base + at), PAGE)
                };
            }
            self.set_owned(dpu, at / PAGE, true);
        }
    }

    /// After the host read `out` from `[offset, ...)` of `dpu`'s own MRAM: the parts on shared pages come from
    /// the shared-pages file instead. Those are copied through the mapping, which commits nothing: an extent's
    /// pages are all written when it is made ([`Overlays::share`]) and given back only with the extent.
    pub fn read_shared(&self, dpu: u32, offset: u64, out: &mut [u8]) {
        let (start, end) = (offset as usize, offset as usize + out.len());
        for (at, shared) in self.shared_pages(dpu, offset, out.len()) {
            let from = start.max(at);
            let to = end.min(at + PAGE);
            // SAFETY: [from, to) lies in the shared page (offset `shared + from - at`, within its extent) and in
            // `out` (offset `from - start`); nothing writes shared pages while DPUs use them.
            unsafe {
                ptr::copy_nonoverlapping(
                    self.shared.ptr().add(shared + from - at),
                    out.as_mut_ptr().add(from - start),
                    to - from,
                )
            };
        }
    }

    /// Writes `data` (whole pages) once into a new extent of the shared-pages file.
    pub fn share(&mut self, data: &[u8]) -> SharedPages {
        let offset = self.next_offset;
        let length = data.len().div_ceil(PAGE) * PAGE;
        self.next_offset += length as u64;
        // SAFETY: the extent [offset, offset + length) is new (the bump pointer only grows), so nobody reads it
        // yet, and within the sparse file, which is far larger than any run's broadcasts.
        unsafe { self.shared.fill(offset as usize, data) };
        self.extents.insert(offset, Extent { length, users: 0 });
        SharedPages { offset, pages: data.len() / PAGE }
    }

    /// Writes `data` (whole pages) again into the extent that backs `[mram_offset, mram_offset + data.len())`
    /// of every DPU of `dpus` and of no other DPU: a broadcast repeated with new bytes, as a GNN sends each
    /// layer's features, reuses its pages instead of filling fresh ones (a fresh page costs a fault, several
    /// times the copy), and no range changes. The pages the DPUs had made their own there are shared again and
    /// given back. `mram_base` gives a DPU's slice of `mram`. Returns false, changing nothing, when no such
    /// extent exists.
    pub fn rewrite(
        &mut self,
        dpus: &[u32],
        mram: &SharedFile,
        mram_base: impl Fn(u32) -> usize,
        mram_offset: u64,
        data: &[u8],
    ) -> Result<bool> {
        let pages = data.len() / PAGE;
        let same_range =
            |range: &OverlayRange| u64::from(range.mram_offset) == mram_offset && range.pages as usize == pages;
        let Some(&first) = dpus.first() else { return Ok(false) };
        let Some(shared) = self.ranges(first).iter().find(|range| same_range(range)).map(|range| range.shared_offset)
        else {
            return Ok(false);
        };
        if self.extents.get(&shared).is_none_or(|extent| extent.users != dpus.len()) {
            return Ok(false);
        }
        // Every user of the extent is a target exactly once, with the same range.
        let mut named = vec![false; self.nr_ranges.len()];
        for &dpu in dpus {
            let uses = self.ranges(dpu).iter().any(|range| same_range(range) && range.shared_offset == shared);
            if !uses || std::mem::replace(&mut named[dpu as usize], true) {
                return Ok(false);
            }
        }
        // SAFETY: the extent holds `data.len()` bytes (its range has as many pages) and only the DPUs of `dpus`
        // read it, all idle and held by the caller.
        unsafe { self.shared.fill(shared as usize, data) };
        let first_page = mram_offset as usize / PAGE;
        for &dpu in dpus {
            if self.any_owned(dpu, first_page, pages) {
                mram.discard(mram_base(dpu) + mram_offset as usize, data.len())?;
                self.clear_owned(dpu, first_page, pages);
            }
        }
        Ok(true)
    }

    /// Whether any of `pages` pages from `first` is the DPU's own: whole bytes at once, the partial ones bit by
    /// bit.
    fn any_owned(&self, dpu: u32, first: usize, pages: usize) -> bool {
        let end = first + pages;
        let whole = first.div_ceil(8)..end / 8;
        if whole.start >= whole.end {
            return (first..end).any(|page| self.is_owned(dpu, page));
        }
        // SAFETY: as in `ranges`; `whole` lies within the bitmap since the pages lie within MRAM.
        let record = unsafe { &*self.record(dpu) };
        let owned = &record.owned[whole.clone()];
        // An OR of every byte (which compiles to vector code) rather than a search: most bitmaps are all zero.
        owned.iter().fold(0, |any, &byte| any | byte) != 0
            || (first..whole.start * 8).chain(whole.end * 8..end).any(|page| self.is_owned(dpu, page))
    }

    /// Backs `dpu`'s MRAM from `mram_offset` (page-aligned) with `shared`.
    /// Earlier ranges it overlaps are cut to their parts outside the new range, which stay shared (a layer's
    /// narrower features sent over a wider layer's leave the rest shared, not copied per DPU); when the DPU
    /// lacks range slots for those parts, they become its own instead. The DPU's own pages in the new range are
    /// given back (unless `own_pages_possible` says the DPU has none there: giving back an empty range still
    /// costs a system call). Returns false, changing nothing, when the DPU has no free range slot (the caller
    /// then copies).
    pub fn attach(
        &mut self,
        dpu: u32,
        mram: &SharedFile,
        mram_base: usize,
        mram_offset: u64,
        shared: SharedPages,
        own_pages_possible: bool,
    ) -> Result<bool> {
        let SharedPages { offset: shared, pages } = shared;
        let length = pages * PAGE;
        let ranges = self.ranges(dpu);
        let in_use = ranges.len();
        let overlapping: Vec<OverlayRange> = ranges
            .into_iter()
            .filter(|range| {
                let start = u64::from(range.mram_offset);
                start < mram_offset + length as u64 && mram_offset < start + range_bytes(range)
            })
            .collect();
        let free = RANGES - in_use + overlapping.len();
        if free == 0 {
            return Ok(false);
        }
        let new_end = mram_offset + length as u64;
        let parts: Vec<OverlayRange> =
            overlapping.iter().flat_map(|range| parts_outside(range, mram_offset, new_end)).collect();
        // The parts of the earlier ranges that the new one does not replace keep their bytes: still shared when
        // the slots allow (taken before the earlier ranges are dropped, so their extents stay), else own.
        let keep_shared = parts.len() < free;
        if keep_shared {
            parts.iter().for_each(|part| self.use_extent(part.shared_offset));
        } else {
            for part in &parts {
                self.own_pages(dpu, mram, mram_base, part.mram_offset.into(), range_bytes(part) as usize, false);
            }
        }
        for range in overlapping {
            self.remove(dpu, range)?;
        }
        if keep_shared {
            parts.into_iter().for_each(|part| self.push_range(dpu, part));
        }
        if own_pages_possible {
            mram.discard(mram_base + mram_offset as usize, length)?;
        }
        self.clear_owned(dpu, mram_offset as usize / PAGE, pages);
        self.use_extent(shared);
        // A free slot exists: checked above (with the parts kept shared, `keep_shared` left one).
        self.push_range(
            dpu,
            OverlayRange { mram_offset: mram_offset as u32, pages: pages as u32, shared_offset: shared },
        );
        Ok(true)
    }

    /// Appends `range` to `dpu`'s record; the caller has counted it as a user of its extent.
    fn push_range(&mut self, dpu: u32, range: OverlayRange) {
        // SAFETY: as in `ranges`; no other reference to the record exists while this one lives.
        let record = unsafe { &mut *self.record(dpu) };
        record.ranges[record.nr_ranges as usize] = range;
        record.nr_ranges += 1;
        self.nr_ranges[dpu as usize] += 1;
    }

    /// The offset of the extent holding `shared` (a range's start in the shared-pages file).
    fn extent_of(&self, shared: u64) -> Option<u64> {
        let (&start, extent) = self.extents.range(..=shared).next_back()?;
        (shared < start + extent.length as u64).then_some(start)
    }

    /// Counts one more range using the extent that holds `shared`.
    fn use_extent(&mut self, shared: u64) {
        if let Some(extent) = self.extent_of(shared).and_then(|start| self.extents.get_mut(&start)) {
            extent.users += 1;
        }
    }

    /// Drops `range` from `dpu`'s record, and its extent when no range uses it any more.
    fn remove(&mut self, dpu: u32, range: OverlayRange) -> Result<()> {
        // SAFETY: as in `ranges`; no other reference to the record exists while this one lives.
        let record = unsafe { &mut *self.record(dpu) };
        let count = (record.nr_ranges as usize).min(RANGES);
        let same = |r: &OverlayRange| {
            (r.mram_offset, r.pages, r.shared_offset) == (range.mram_offset, range.pages, range.shared_offset)
        };
        if let Some(slot) = record.ranges[..count].iter().position(same) {
            record.ranges[slot] = record.ranges[count - 1];
            record.nr_ranges -= 1;
            self.nr_ranges[dpu as usize] -= 1;
        }
        self.release(range.shared_offset)
    }

    fn release(&mut self, shared: u64) -> Result<()> {
        let Some(start) = self.extent_of(shared) else { return Ok(()) };
        let Some(extent) = self.extents.get_mut(&start) else { return Ok(()) };
        extent.users = extent.users.saturating_sub(1);
        if extent.users == 0 {
            let length = extent.length;
            self.extents.remove(&start);
            self.shared.discard(start as usize, length)?;
        }
        Ok(())
    }

    /// Drops every range of `dpu` (its MRAM is being cleared) and gives back extents nobody uses.
    pub fn detach_all(&mut self, dpu: u32) -> Result<()> {
        if self.nr_ranges[dpu as usize] == 0 {
            return Ok(());
        }
        for range in self.ranges(dpu) {
            self.remove(dpu, range)?;
        }
        // SAFETY: as in `ranges`; no other reference to the record exists while this one lives.
        unsafe { (*self.record(dpu)).owned = [0; MAX_PAGES / 8] };
        Ok(())
    }

    /// Gives back an extent that `share` made but no DPU took.
    pub fn forget_if_unused(&mut self, shared: SharedPages) -> Result<()> {
        let shared = shared.offset;
        if self.extents.get(&shared).is_some_and(|extent| extent.users == 0) {
            let length = self.extents.remove(&shared).map_or(0, |extent| extent.length);
            self.shared.discard(shared as usize, length)?;
        }
        Ok(())
    }
}

fn range_bytes(range: &OverlayRange) -> u64 {
    u64::from(range.pages) * PAGE as u64
}

/// The parts of `range` before `start` and from `end` on (page-aligned MRAM offsets), still backed by the same
/// pages of its extent.
fn parts_outside(range: &OverlayRange, start: u64, end: u64) -> Vec<OverlayRange> {
    let (first, last) = (u64::from(range.mram_offset), u64::from(range.mram_offset) + range_bytes(range));
    let part = |from: u64, to: u64| OverlayRange {
        mram_offset: from as u32,
        pages: ((to - from) / PAGE as u64) as u32,
        shared_offset: range.shared_offset + (from - first),
    };
    let mut parts = Vec::new();
    if first < start {
        parts.push(part(first, start.min(last)));
    }
    if end < last {
        parts.push(part(end.max(first), last));
    }
    parts
}

/// Whether a broadcast is worth sharing: at least this many whole pages.
pub(crate) const MIN_SHARED_PAGES: usize = 16;

/// The whole pages of `[offset, offset + length)`: (first page-aligned offset, number of pages).
pub(crate) fn whole_pages(offset: u64, length: usize) -> (u64, usize) {
    let start = (offset as usize).div_ceil(PAGE) * PAGE;
    let end = (offset as usize + length) / PAGE * PAGE;
    (start as u64, end.saturating_sub(start) / PAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A broadcast repeated to the same DPUs and range takes no new extent: the pages they share are written
    /// again, and those a DPU had made its own are shared again.
    #[test]
    fn a_repeated_broadcast_rewrites_its_extent_in_place() {
        const DPUS: u32 = 3;
        const MRAM: usize = 1 << 20;
        let mut overlays = Overlays::new(DPUS).unwrap();
        let mram = SharedFile::new("test-mram", DPUS as usize * MRAM).unwrap();
        let dpus: Vec<u32> = (0..DPUS).collect();
        let first = vec![1u8; 16 * PAGE];
        let shared = overlays.share(&first);
        for &dpu in &dpus {
            assert!(overlays.attach(dpu, &mram, dpu as usize * MRAM, 0, shared, false).unwrap());
        }
        overlays.make_own(1, &mram, MRAM, 4096, 8);
        assert!(overlays.any_owned(1, 0, 16));

        let second = vec![2u8; 16 * PAGE];
        assert!(overlays.rewrite(&dpus, &mram, |dpu| dpu as usize * MRAM, 0, &second).unwrap());
        assert_eq!(overlays.extents.len(), 1, "no new extent");
        assert_eq!(overlays.next_offset, (16 * PAGE) as u64, "no new pages");
        assert!(!overlays.any_owned(1, 0, 16), "DPU 1's page is shared again");
        let mut out = vec![0u8; 16 * PAGE];
        overlays.read_shared(0, 0, &mut out);
        assert!(out == second);

        // Not every user of the extent: nothing is rewritten.
        assert!(!overlays.rewrite(&dpus[..2], &mram, |dpu| dpu as usize * MRAM, 0, &first).unwrap());
        assert!(!overlays.rewrite(&[0, 0, 1], &mram, |dpu| dpu as usize * MRAM, 0, &first).unwrap());
        overlays.read_shared(2, 0, &mut out);
        assert!(out == second);
    }

    /// Attaching gives back the DPU's own pages under the new range when it may have some, and skips the
    /// system call when the caller knows it has none; the DPU reads the shared bytes either way.
    #[test]
    fn attach_gives_back_own_pages_only_when_there_may_be_some() {
        let mut overlays = Overlays::new(2).unwrap();
        let mram = SharedFile::new("test-mram", 2 * 16 * PAGE).unwrap();
        let own = |dpu: usize| {
            let mut byte = 0u8;
            // SAFETY: reading one byte inside the file's mapping; nothing writes it concurrently.
            unsafe { std::ptr::copy_nonoverlapping(mram.ptr().add(dpu * 16 * PAGE), &mut byte, 1) };
            byte
        };
        for dpu in 0..2 {
            // SAFETY: writing one byte inside the file's mapping; nothing reads it concurrently.
            unsafe { mram.ptr().add(dpu * 16 * PAGE).write(7) };
        }
        let shared = overlays.share(&[9u8; 16 * PAGE]);
        assert!(overlays.attach(0, &mram, 0, 0, shared, true).unwrap());
        assert!(overlays.attach(1, &mram, 16 * PAGE, 0, shared, false).unwrap());
        assert_eq!(own(0), 0, "DPU 0's own page was given back");
        assert_eq!(own(1), 7, "DPU 1's was left alone");
        for dpu in 0..2 {
            let mut out = [0u8; 8];
            overlays.read_shared(dpu, 0, &mut out);
            assert_eq!(out, [9; 8], "DPU {dpu} reads the shared bytes");
        }
    }

    /// A broadcast over the middle of an earlier one leaves the earlier one's head and tail shared (no page
    /// becomes the DPU's own, no copy), reading the earlier bytes; its extent lives while those parts use it.
    #[test]
    fn a_broadcast_inside_an_earlier_one_keeps_its_head_and_tail_shared() {
        let mut overlays = Overlays::new(1).unwrap();
        let mram = SharedFile::new("test-mram", 64 * PAGE).unwrap();
        let wide = overlays.share(&[1u8; 48 * PAGE]);
        assert!(overlays.attach(0, &mram, 0, 0, wide, false).unwrap());
        let narrow = overlays.share(&[2u8; 16 * PAGE]);
        assert!(overlays.attach(0, &mram, 0, (16 * PAGE) as u64, narrow, true).unwrap());
        assert_eq!(overlays.ranges(0).len(), 3, "head, new range, tail");
        assert!(!overlays.any_owned(0, 0, 48), "nothing copied into the DPU's own pages");
        let mut out = vec![0u8; 48 * PAGE];
        overlays.read_shared(0, 0, &mut out);
        assert!(out[..16 * PAGE].iter().all(|&b| b == 1), "head: the earlier bytes");
        assert!(out[16 * PAGE..32 * PAGE].iter().all(|&b| b == 2), "the new bytes");
        assert!(out[32 * PAGE..].iter().all(|&b| b == 1), "tail: the earlier bytes");
        assert_eq!(overlays.extents.len(), 2);

        // Dropping everything gives both extents back.
        overlays.detach_all(0).unwrap();
        assert!(overlays.extents.is_empty());
    }
}
