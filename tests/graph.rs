//! Graph generators: the same seed gives the same graph on any thread count, and (pinned here) on any
//! platform.

use pimgnn::graph::{erdos_renyi, erdos_renyi_gnp, rmat, try_rmat, RmatParams};
use pimgnn::Csr;

fn with_threads<R: Send>(threads: usize, run: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(run)
}

/// An order-sensitive digest of a graph's structure (FNV-1a over row pointers and column indices).
fn digest(g: &Csr<f32>) -> u64 {
    g.row_ptr()
        .iter()
        .chain(g.col_idx())
        .fold(0xcbf2_9ce4_8422_2325, |hash, &v| (hash ^ u64::from(v)).wrapping_mul(0x0100_0000_01b3))
}

#[test]
fn thread_count_does_not_change_the_graph() {
    // 150,000 edges take several blocks of samples, so threads share the work.
    let one = with_threads(1, || rmat(50_000, 150_000, 11));
    for threads in [2, 5] {
        assert_eq!(with_threads(threads, || rmat(50_000, 150_000, 11)), one, "{threads} threads");
    }
    let one = with_threads(1, || erdos_renyi(20_000, 150_000, 11));
    assert_eq!(with_threads(3, || erdos_renyi(20_000, 150_000, 11)), one);
    let one = with_threads(1, || erdos_renyi_gnp(10_000, 0.001, 11).unwrap());
    assert_eq!(with_threads(3, || erdos_renyi_gnp(10_000, 0.001, 11).unwrap()), one);
}

/// Pins the generated graphs: a change here changes every seeded test and benchmark that uses them, on every
/// platform, and must be deliberate.
#[test]
fn graphs_are_pinned_across_platforms_and_versions() {
    assert_eq!(digest(&rmat(1_000, 5_000, 7)), RMAT_DIGEST);
    let plain = RmatParams { permute: false, ..RmatParams::default() };
    assert_eq!(digest(&try_rmat(1_000, 5_000, 7, &plain).unwrap()), RMAT_UNPERMUTED_DIGEST);
    assert_eq!(digest(&erdos_renyi(1_000, 5_000, 7)), ERDOS_RENYI_DIGEST);
    assert_eq!(digest(&erdos_renyi_gnp(1_000, 0.005, 7).unwrap()), GNP_DIGEST);
}

const RMAT_DIGEST: u64 = 13264372716104440316;
const RMAT_UNPERMUTED_DIGEST: u64 = 2736919647155101924;
const GNP_DIGEST: u64 = 7805828651057312101;
const ERDOS_RENYI_DIGEST: u64 = 116075471349058372;
