//! The benchmarks' quick mode: `PIMGNN_BENCH_QUICK=1` runs the same code on smaller inputs with fewer
//! repetitions, so that CI can run every benchmark (its figures are not the ones to quote). Included with
//! `#[path]` by every `cargo bench` target of the workspace, so that they read the variable one way.

/// The variable that asks for the quick mode.
pub const VARIABLE: &str = "PIMGNN_BENCH_QUICK";

/// Whether `PIMGNN_BENCH_QUICK` is `1` (unset, empty or `0`: the full benchmark); says so on stderr once.
///
/// # Panics
/// On any other value, which would otherwise silently run the full benchmark.
pub fn is_quick() -> bool {
    static QUICK: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *QUICK.get_or_init(|| {
        let quick = match std::env::var(VARIABLE).as_deref() {
            Err(std::env::VarError::NotPresent) | Ok("" | "0") => false,
            Ok("1") => true,
            Ok(other) => panic!("{VARIABLE}={other}: expected 1 (quick) or 0 (full)"),
            Err(std::env::VarError::NotUnicode(value)) => {
                panic!("{VARIABLE}={value:?}: expected 1 (quick) or 0 (full)")
            }
        };
        if quick {
            eprintln!("{VARIABLE}=1: quick mode, smaller inputs and fewer repetitions (figures not to quote)");
        }
        quick
    })
}

/// `full`, or `quick` in the quick mode.
pub fn pick<T>(full: T, quick: T) -> T {
    if is_quick() {
        quick
    } else {
        full
    }
}
