//! The profile the hardware backend gives `dpu_alloc`: the caller's, with `backend=hw` unless it names a backend.
//!
//! Without a backend in its profile, libdpu uses the hardware when the driver has ranks and otherwise falls back
//! to the SDK's functional simulator, printing "Fallback to SIMULATOR backend as no hardware device was found and
//! no explicit backend is provided" (the SDK 2025.1's libdpu, `determine_backend_type_from_complete_profile`).
//! A set the caller asked to run on DPUs must never land there. libdpu reads the profile as
//! `$UPMEM_PROFILE_BASE`, then the argument, then `$UPMEM_PROFILE` (`dpu_properties_load_from_profile`), and a
//! key given again replaces the earlier value (`dpu_properties_add`), so the argument's `backend=hw` overrides a
//! `backend=` in `$UPMEM_PROFILE_BASE`, and one in `$UPMEM_PROFILE` overrides it.

/// The profile key naming libdpu's backend, and the value of the hardware.
const BACKEND_KEY: &str = "backend";
const HARDWARE: &str = "hw";

/// The last `backend=` value of `profile` (comma-separated `key=value` entries).
fn backend_of(profile: &str) -> Option<&str> {
    profile
        .split(',')
        .filter_map(|entry| entry.split_once('='))
        .filter(|(key, _)| key.trim() == BACKEND_KEY)
        .map(|(_, value)| value.trim())
        .next_back()
}

/// The profile for an allocation on the hardware: `argument`, with `backend=hw` added unless it names a backend.
pub(crate) fn for_hardware(argument: &str) -> String {
    if backend_of(argument).is_some() {
        return argument.to_owned();
    }
    match argument.trim() {
        "" => format!("{BACKEND_KEY}={HARDWARE}"),
        given => format!("{given},{BACKEND_KEY}={HARDWARE}"),
    }
}

/// The backend libdpu will use for `argument`, with the variable or argument that names it; `None` when none does.
pub(crate) fn effective_backend(
    argument: &str,
    base: Option<&str>,
    extra: Option<&str>,
) -> Option<(String, &'static str)> {
    [(extra, "UPMEM_PROFILE"), (Some(argument), "the profile argument"), (base, "UPMEM_PROFILE_BASE")]
        .into_iter()
        .find_map(|(profile, origin)| backend_of(profile?).map(|backend| (backend.to_owned(), origin)))
}

/// As [`effective_backend`], with `$UPMEM_PROFILE_BASE` and `$UPMEM_PROFILE` from the environment.
pub(crate) fn effective_backend_here(argument: &str) -> Option<(String, &'static str)> {
    let base = std::env::var("UPMEM_PROFILE_BASE").ok();
    let extra = std::env::var("UPMEM_PROFILE").ok();
    effective_backend(argument, base.as_deref(), extra.as_deref())
}

/// Whether `backend` is the hardware's.
pub(crate) fn is_hardware(backend: &str) -> bool {
    backend == HARDWARE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hardware_is_named_unless_the_caller_names_a_backend() {
        assert_eq!(for_hardware(""), "backend=hw");
        assert_eq!(for_hardware("nrThreadsPerRank=1"), "nrThreadsPerRank=1,backend=hw");
        assert_eq!(for_hardware("backend=simulator,nrThreadsPerRank=1"), "backend=simulator,nrThreadsPerRank=1");
    }

    #[test]
    fn the_last_backend_in_libdpus_reading_order_wins() {
        let hardware = for_hardware("");
        assert_eq!(
            effective_backend(&hardware, Some("backend=simulator"), None),
            Some(("hw".into(), "the profile argument"))
        );
        assert_eq!(
            effective_backend(&hardware, None, Some("backend=simulator")),
            Some(("simulator".into(), "UPMEM_PROFILE"))
        );
        assert_eq!(
            effective_backend("a=1", Some("backend=cas, b=2"), Some("c=3")),
            Some(("cas".into(), "UPMEM_PROFILE_BASE"))
        );
        assert_eq!(effective_backend("backend=hw,backend=simulator", None, None).unwrap().0, "simulator");
        assert_eq!(effective_backend("", None, None), None);
    }
}
