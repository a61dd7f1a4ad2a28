//! `cpu::spmm` against a naive dense reference on random graphs with empty rows, hub rows, sizes that are
//! multiples of nothing and F from 1 to 512: exact for integer types, to float rounding for f32.

use pimgnn::{cpu, Coo, CpuSpmm, Csr, Dense, Element, SpmmEngine};
use rand::rngs::ChaCha8Rng;
use rand::{Rng, RngExt, SeedableRng};

/// A random `rows x cols` matrix: about a third of the rows empty, a few hub rows with `hub_degree` entries
/// (repeats allowed), the rest with up to 12, values from `value`.
fn random_csr<T: Element>(
    rng: &mut ChaCha8Rng,
    rows: usize,
    cols: usize,
    hub_degree: usize,
    mut value: impl FnMut(&mut ChaCha8Rng) -> T,
) -> Csr<T> {
    let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for row in 0..rows {
        let degree = match rng.random_range(0..20) {
            _ if cols == 0 => 0,
            0..=6 => 0,
            7 => hub_degree,
            _ => rng.random_range(1..=12),
        };
        for _ in 0..degree {
            r.push(row as u32);
            c.push(rng.random_range(0..cols as u32));
            v.push(value(rng));
        }
    }
    Coo::new(rows, cols, r, c, v).unwrap().to_csr()
}

fn random_dense<T: Copy + Default>(
    rng: &mut ChaCha8Rng,
    rows: usize,
    cols: usize,
    mut value: impl FnMut(&mut ChaCha8Rng) -> T,
) -> Dense<T> {
    Dense::from_vec(rows, cols, (0..rows * cols).map(|_| value(rng)).collect()).unwrap()
}

/// `Y = A X` through a dense copy of `A`, in `f64` for floats.
fn dense_reference_f32(a: &Csr<f32>, x: &Dense<f32>) -> Vec<f64> {
    let mut dense_a = vec![0f64; a.nrows() * a.ncols()];
    for r in 0..a.nrows() {
        let (cols, values) = a.row(r);
        for (&c, &v) in cols.iter().zip(values) {
            dense_a[r * a.ncols() + c as usize] += f64::from(v);
        }
    }
    let f = x.cols();
    let mut y = vec![0f64; a.nrows() * f];
    for r in 0..a.nrows() {
        for k in 0..a.ncols() {
            let w = dense_a[r * a.ncols() + k];
            if w != 0.0 {
                for j in 0..f {
                    y[r * f + j] += w * f64::from(x.row(k)[j]);
                }
            }
        }
    }
    y
}

/// `Y = A X` through a dense copy of `A`, wrapping `i32` arithmetic as the accumulators do.
fn dense_reference_int<T: Element<Acc = i32> + Into<i32>>(a: &Csr<T>, x: &Dense<T>) -> Vec<i32> {
    let mut dense_a = vec![0i32; a.nrows() * a.ncols()];
    for r in 0..a.nrows() {
        let (cols, values) = a.row(r);
        for (&c, &v) in cols.iter().zip(values) {
            let at = r * a.ncols() + c as usize;
            dense_a[at] = dense_a[at].wrapping_add(v.into());
        }
    }
    let f = x.cols();
    let mut y = vec![0i32; a.nrows() * f];
    for r in 0..a.nrows() {
        for k in 0..a.ncols() {
            let w = dense_a[r * a.ncols() + k];
            for j in 0..f {
                y[r * f + j] = y[r * f + j].wrapping_add(w.wrapping_mul(x.row(k)[j].into()));
            }
        }
    }
    y
}

/// Shapes to test: (rows, columns, hub degree, F), covering F = 1..=512 with odd sizes.
fn cases() -> Vec<(usize, usize, usize, usize)> {
    // Hub rows of degree 12,000 (the "degree > 10,000") in a short, wide case.
    let mut cases = vec![
        (1, 1, 3, 1),
        (97, 13, 200, 512),
        (333, 331, 1_000, 65),
        (40, 301, 12_000, 17),
        (0, 5, 0, 8),
        (7, 0, 0, 3),
    ];
    cases.extend(
        [1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 100, 127, 129, 255, 257, 300].map(|f| (61, 59, 150, f)),
    );
    cases
}

#[test]
fn f32_matches_the_dense_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for (rows, cols, hub, f) in cases() {
        let a = random_csr(&mut rng, rows, cols, hub, |rng| rng.random_range(-1.0f32..1.0));
        let x = random_dense(&mut rng, cols, f, |rng| rng.random_range(-1.0f32..1.0));
        let y = cpu::spmm(&a, &x).unwrap();
        let reference = dense_reference_f32(&a, &x);
        for (at, (&got, &want)) in y.as_slice().iter().zip(&reference).enumerate() {
            // Each output sums at most `hub` products of magnitude < 1 in f32.
            let tolerance = 1e-6 * (hub as f64 + 12.0);
            assert!((f64::from(got) - want).abs() <= tolerance, "{rows}x{cols} F={f} at {at}: {got} vs {want}");
        }
    }
}

#[test]
fn integer_types_match_exactly() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for (rows, cols, hub, f) in cases() {
        let a = random_csr(&mut rng, rows, cols, hub, |rng| rng.random::<i8>());
        let x = random_dense(&mut rng, cols, f, |rng| rng.random::<i8>());
        assert_eq!(cpu::spmm(&a, &x).unwrap().as_slice(), dense_reference_int(&a, &x), "i8 {rows}x{cols} F={f}");

        let a = random_csr(&mut rng, rows, cols, hub, |rng| rng.random::<i16>());
        let x = random_dense(&mut rng, cols, f, |rng| rng.random::<i16>());
        assert_eq!(cpu::spmm(&a, &x).unwrap().as_slice(), dense_reference_int(&a, &x), "i16 {rows}x{cols} F={f}");

        // Full-range i32 overflows: the wrapping must match too.
        let a = random_csr(&mut rng, rows, cols, hub, |rng| rng.random::<i32>());
        let x = random_dense(&mut rng, cols, f, |rng| rng.random::<i32>());
        assert_eq!(cpu::spmm(&a, &x).unwrap().as_slice(), dense_reference_int(&a, &x), "i32 {rows}x{cols} F={f}");
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    // Hub rows of degree 12,000 among 1,000 rows: unequal chunks for every thread count.
    let a = random_csr(&mut rng, 1_000, 4_000, 12_000, |rng| rng.random_range(-1.0f32..1.0));
    let x = random_dense(&mut rng, 4_000, 13, |rng| rng.random_range(-1.0f32..1.0));
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| cpu::spmm(&a, &x).unwrap())
    };
    let one = run(1);
    for threads in [2, 3, 8] {
        assert_eq!(run(threads), one, "{threads} threads");
    }
}

#[test]
fn transposed_product_matches_the_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let a = random_csr(&mut rng, 71, 45, 300, |rng| rng.random::<i16>());
    let x = random_dense(&mut rng, 71, 19, |rng| rng.random::<i16>());
    assert_eq!(cpu::spmm_transposed(&a, &x).unwrap().as_slice(), dense_reference_int(&a.transpose(), &x));
}

#[test]
fn the_cpu_engine_reports_its_phase() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let a = random_csr(&mut rng, 50, 50, 100, |rng| rng.random::<i8>());
    let x = random_dense(&mut rng, 50, 9, |rng| rng.random::<i8>());
    let mut engine = CpuSpmm::new(a.clone());
    assert_eq!(engine.shape(), (50, 50));
    assert_eq!(engine.spmm(&x).unwrap().as_slice(), dense_reference_int(&a, &x));
    assert_eq!(engine.last_phases().len(), 1);
    // Keep the generator in use so every test draws from its own stream.
    let _ = rng.next_u32();
}
