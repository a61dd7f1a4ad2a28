use pimgnn::gnn::gcn_norm;
use pimgnn::gnn::quantize::quantize_matrix;
fn main() {
    let g = pimgnn::graph::rmat(100_000, 1_000_000, 1);
    let a = gcn_norm(&g, Some(1.0)).unwrap();
    let q = quantize_matrix::<i8>(&a).unwrap();
    let m = &q.matrix;
    let rp = m.row_ptr();
    let l1: Vec<i64> = (0..m.nrows())
        .map(|r| (rp[r] as usize..rp[r + 1] as usize).map(|k| (m.values()[k] as i64).abs()).sum())
        .collect();
    for block in [64usize, 128, 256, 512] {
        let blocks = (m.nrows() + block - 1) / block;
        let mut wide: Vec<usize> = (0..blocks)
            .map(|b| l1[b * block..((b + 1) * block).min(m.nrows())].iter().filter(|&&v| v * 128 > 32767).count())
            .collect();
        wide.sort();
        println!(
            "rows {block}: wide per block max {} p99 {} p90 {} median {}",
            wide[blocks - 1],
            wide[blocks * 99 / 100],
            wide[blocks * 9 / 10],
            wide[blocks / 2]
        );
    }
}
