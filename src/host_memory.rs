//! The host's memory, to refuse up front what cannot fit in it: a small input can declare sizes (a Matrix
//! Market size line, one large id, a layer width) far beyond what it holds, and building them would exhaust the
//! memory (the process killed, or an allocation failure that aborts) instead of failing with an error.

use crate::error::{Error, Result};

/// Fails with [`Error::Capacity`] when `what` needs more `bytes` than the host has memory; passes when the
/// system does not say how much it has.
pub fn check(what: impl FnOnce() -> String, bytes: u64) -> Result<()> {
    match physical_bytes() {
        Some(limit) if bytes > limit => Err(Error::Capacity { what: what(), needed: bytes, limit }),
        _ => Ok(()),
    }
}

/// The host's physical memory in bytes, when the system says.
#[cfg(target_os = "linux")]
pub fn physical_bytes() -> Option<u64> {
    // SAFETY: `sysconf` only reads system settings; it returns -1 for a setting the system does not know.
    let (pages, page_size) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    (pages > 0 && page_size > 0).then(|| pages as u64 * page_size as u64)
}

/// The host's physical memory in bytes, when the system says (not known here).
#[cfg(not(target_os = "linux"))]
pub fn physical_bytes() -> Option<u64> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn what_exceeds_the_host_memory_is_refused() {
        let error = check(|| "host memory (bytes) for everything".into(), u64::MAX).expect_err("accepted");
        assert!(matches!(error, Error::Capacity { needed: u64::MAX, .. }), "{error:?}");
        assert!(error.to_string().starts_with("host memory (bytes) for everything: needs"), "{error}");
        assert!(check(|| unreachable!("only an error is described"), 1 << 20).is_ok());
    }
}
