//! What a rank's DPUs are: their chip version and hardware threads, from the rank's description
//! (`dpu_get_description(dpu_rank_from_set(rank))`, whose `hw.signature.chip_id` and `hw.dpu.nr_of_threads` the
//! SDK's hardware backend fills from the driver).

use upmem_sys::dpu_set_t;
use upmem_types::ChipVersion;

use super::library::Library;
use crate::error::{Error, Result};

/// The chip of a set's DPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Silicon {
    pub chip: ChipVersion,
    /// Threads per DPU, as the rank reports them (the chip version's count on UPMEM's DIMMs).
    pub hardware_threads: u32,
}

/// The chip of `rank` (a one-rank set from the rank iterator).
pub(crate) fn of_rank(lib: &Library, rank: dpu_set_t) -> Result<Silicon> {
    let (Ok(rank_from_set), Ok(get_description)) = (&lib.dpu.dpu_rank_from_set, &lib.dpu.dpu_get_description) else {
        return Err(Error::MissingFunction("dpu_get_description"));
    };
    // SAFETY: `rank` is a one-rank set of an allocated set; both calls only read the library's rank records, and
    // the description they return is owned by the rank, which outlives this call.
    let description = unsafe { get_description(rank_from_set(rank)) };
    if description.is_null() {
        return Err(Error::MissingFunction("dpu_get_description"));
    }
    // SAFETY: a non-null description points at the rank's `struct _dpu_description_t`, whose layout the
    // bindings declare as the SDK's.
    let hw = unsafe { (*description).hw };
    let chip = ChipVersion::from_chip_id(hw.signature.chip_id);
    // A backend that leaves the count out (0) has the chip's.
    let hardware_threads = match u32::from(hw.dpu.nr_of_threads) {
        0 => chip.hardware_threads(),
        threads => threads,
    };
    Ok(Silicon { chip, hardware_threads })
}

/// The chip that bounds every rank of a set: the one with the fewest threads (a server's ranks are one kind).
pub(crate) fn of_ranks(ranks: impl IntoIterator<Item = Silicon>) -> Option<Silicon> {
    ranks.into_iter().min_by_key(|silicon| silicon.hardware_threads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rank_with_fewest_threads_bounds_the_set() {
        let v1a = Silicon { chip: ChipVersion::V1A, hardware_threads: 24 };
        let v1b = Silicon { chip: ChipVersion::V1B, hardware_threads: 16 };
        assert_eq!(of_ranks([v1a, v1b, v1a]), Some(v1b));
        assert_eq!(of_ranks([]), None);
    }
}
