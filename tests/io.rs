//! Graph loaders: every malformed case is a clear error with the line, writers round-trip, and the real
//! datasets load with the documented sizes.

use std::path::{Path, PathBuf};
use std::time::Instant;

use pimgnn::io::{
    read_edge_list_csv, read_graph, read_matrix_market, read_triples_csv, write_edge_list_csv, write_matrix_market,
};
use pimgnn::{Coo, Duplicates, Error};

/// The shared datasets folder: `PIMGNN_DATASETS`, else `../shared/datasets` beside the workspace root.
fn datasets() -> PathBuf {
    let folder = std::env::var_os("PIMGNN_DATASETS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets"));
    assert!(folder.is_dir(), "datasets not found at {}: set PIMGNN_DATASETS", folder.display());
    folder
}

/// Writes `text` to a file named `name` in a fresh folder and reads it with `read`.
fn read_text(name: &str, text: &str, read: fn(&Path) -> pimgnn::Result<Coo<f32>>) -> pimgnn::Result<Coo<f32>> {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join(name);
    std::fs::write(&path, text).unwrap();
    read(&path)
}

/// Asserts that reading `text` fails at `line` with a reason containing `reason`.
#[track_caller]
fn assert_parse_error(name: &str, text: &str, read: fn(&Path) -> pimgnn::Result<Coo<f32>>, line: usize, reason: &str) {
    match read_text(name, text, read) {
        Err(Error::Parse { path, line: Some(at), reason: why }) => {
            assert!(path.ends_with(name), "path {}", path.display());
            assert_eq!(at, line, "line of `{why}`");
            assert!(why.contains(reason), "`{why}` should mention `{reason}`");
        }
        other => panic!("expected a parse error at line {line} ({reason}), got {other:?}"),
    }
}

fn entries(a: &Coo<f32>) -> Vec<(u32, u32, f32)> {
    a.rows().iter().zip(a.cols()).zip(a.values()).map(|((&r, &c), &v)| (r, c, v)).collect()
}

const MTX: fn(&Path) -> pimgnn::Result<Coo<f32>> = read_matrix_market;
const EDGES: fn(&Path) -> pimgnn::Result<Coo<f32>> = read_edge_list_csv;
const TRIPLES: fn(&Path) -> pimgnn::Result<Coo<f32>> = read_triples_csv;

#[test]
fn matrix_market_fields_and_symmetry() {
    let pattern = "%%MatrixMarket matrix coordinate pattern general\n% a comment\n3 4 2\n1 2\n3 4\n";
    let a = read_text("a.mtx", pattern, MTX).unwrap();
    assert_eq!((a.nrows(), a.ncols()), (3, 4));
    assert_eq!(entries(&a), [(0, 1, 1.0), (2, 3, 1.0)]);

    let real = "%%MatrixMarket Matrix Coordinate REAL General\n2 2 2\n\n1 1 -2.5e-1\n2 1 3\n";
    assert_eq!(entries(&read_text("r.mtx", real, MTX).unwrap()), [(0, 0, -0.25), (1, 0, 3.0)]);

    let symmetric = "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 5\n3 1 -7\n2 3 2\n";
    let s = read_text("s.mtx", symmetric, MTX).unwrap();
    assert_eq!(entries(&s), [(0, 0, 5.0), (2, 0, -7.0), (0, 2, -7.0), (1, 2, 2.0), (2, 1, 2.0)]);

    let crlf = "%%MatrixMarket matrix coordinate pattern general\r\n1 1 1\r\n1 1\r\n";
    assert_eq!(entries(&read_text("c.mtx", crlf, MTX).unwrap()), [(0, 0, 1.0)]);
}

#[test]
fn malformed_matrix_market_files_say_where_and_why() {
    let banner = "%%MatrixMarket matrix coordinate real general\n";
    assert_parse_error("e.mtx", "", MTX, 1, "empty file");
    assert_parse_error("b.mtx", "%MatrixMarket matrix coordinate real general\n1 1 0\n", MTX, 1, "bad banner");
    assert_parse_error("b.mtx", "%%MatrixMarket matrix coordinate real\n1 1 0\n", MTX, 1, "5 words");
    assert_parse_error("b.mtx", "%%MatrixMarket matrix array real general\n1 1\n", MTX, 1, "`array`");
    assert_parse_error("b.mtx", "%%MatrixMarket matrix coordinate complex general\n", MTX, 1, "`complex`");
    assert_parse_error("b.mtx", "%%MatrixMarket matrix coordinate real hermitian\n", MTX, 1, "`hermitian`");
    assert_parse_error("t.mtx", &format!("{banner}% only comments\n"), MTX, 2, "no size line");
    assert_parse_error("t.mtx", &format!("{banner}3 3\n"), MTX, 2, "found 2 fields");
    assert_parse_error("t.mtx", &format!("{banner}3 x 1\n"), MTX, 2, "columns: `x`");
    assert_parse_error("t.mtx", &format!("{banner}3 3 -1\n"), MTX, 2, "entries: `-1`");
    let square = "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n";
    assert_parse_error("s.mtx", square, MTX, 2, "must be square");
    // Wrong counts, in both directions.
    assert_parse_error(
        "c.mtx",
        &format!("{banner}3 3 3\n1 1 1\n2 2 1\n"),
        MTX,
        4,
        "declares 3 entries, the file has 2",
    );
    assert_parse_error("c.mtx", &format!("{banner}3 3 1\n1 1 1\n2 2 1\n"), MTX, 4, "more entries than the 1");
    // Fields.
    assert_parse_error("f.mtx", &format!("{banner}3 3 1\n1 1\n"), MTX, 3, "the value is missing");
    assert_parse_error("f.mtx", &format!("{banner}3 3 1\n1 1 1 1\n"), MTX, 3, "more than 3 fields");
    assert_parse_error("f.mtx", &format!("{banner}3 3 1\n1 a 1\n"), MTX, 3, "column index: `a`");
    assert_parse_error("f.mtx", &format!("{banner}3 3 1\n1 1 one\n"), MTX, 3, "value: `one` is not a number");
    let integer = "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n";
    assert_parse_error("f.mtx", integer, MTX, 3, "`1.5` is not an integer");
    // Indices.
    assert_parse_error(
        "i.mtx",
        &format!("{banner}3 3 1\n0 1 1\n"),
        MTX,
        3,
        "row index 0: Matrix Market indices start at 1",
    );
    assert_parse_error("i.mtx", &format!("{banner}3 3 1\n1 4 1\n"), MTX, 3, "column index 4 out of range 1..=3");
    assert_parse_error("i.mtx", &format!("{banner}3 3 1\n-1 1 1\n"), MTX, 3, "row index: `-1`");
}

#[test]
fn malformed_csv_files_say_where_and_why() {
    assert_parse_error("e.csv", "", EDGES, 1, "empty file");
    assert_parse_error("h.csv", "id_1\n0\n", EDGES, 1, "header must name 2 columns");
    assert_parse_error("h.csv", "id_1,\n", EDGES, 1, "header must name 2 columns");
    assert_parse_error("h.csv", "0,1\n1,2\n", EDGES, 1, "missing header");
    assert_parse_error("f.csv", "id_1,id_2\n0,1\n2\n", EDGES, 3, "expected 2 comma-separated fields, found 1");
    assert_parse_error("f.csv", "id_1,id_2\n0,1,2\n", EDGES, 2, "found 3");
    assert_parse_error("f.csv", "id_1,id_2\n0,\n", EDGES, 2, "id_2: `` is not a non-negative integer");
    assert_parse_error("f.csv", "id_1,id_2\nx,1\n", EDGES, 2, "id_1: `x`");
    assert_parse_error("f.csv", "id_1,id_2\n-3,1\n", EDGES, 2, "id_1: `-3`");
    assert_parse_error("f.csv", "id_1,id_2\n0,99999999999\n", EDGES, 2, "id_2: 99999999999 exceeds the limit");
    assert_parse_error("t.csv", "node_id,feature_id\n", TRIPLES, 1, "header must name 3 columns");
    assert_parse_error("t.csv", "node_id,feature_id,value\n1,2,abc\n", TRIPLES, 2, "value: `abc` is not a number");
    assert_parse_error("t.csv", "node_id,feature_id,value\n1,2\n", TRIPLES, 2, "found 2");
}

#[test]
fn sizes_ids_and_values_beyond_their_limits_are_refused() {
    let banner = "%%MatrixMarket matrix coordinate real general\n";
    let rows = format!("{banner}1000000000000 3 0\n");
    assert_parse_error("d.mtx", &rows, MTX, 2, "rows: 1000000000000 exceeds the limit 4294967295");
    let columns = format!("{banner}3 99999999999999999999999 0\n");
    assert_parse_error("d.mtx", &columns, MTX, 2, "columns: 99999999999999999999999 exceeds the limit 4294967295");
    // The largest declared size is taken as declared, without allocating anything for it.
    let largest = read_text("d.mtx", &format!("{banner}4294967295 4294967295 1\n4294967295 1 2\n"), MTX).unwrap();
    assert_eq!((largest.nrows(), largest.ncols()), (4294967295, 4294967295));

    for value in ["nan", "inf", "-infinity", "1e39"] {
        let reason = format!("value: `{value}` is not a finite number");
        assert_parse_error("v.mtx", &format!("{banner}3 3 1\n1 1 {value}\n"), MTX, 3, &reason);
        let triples = format!("node_id,feature_id,value\n0,0,1\n1,2,{value}\n");
        assert_parse_error("v.csv", &triples, TRIPLES, 3, &format!("value: `{value}` is not a finite number"));
    }

    // An id of u32::MAX would make a matrix of 2^32 rows, one more than 32-bit indices can count.
    assert_parse_error("i.csv", "id_1,id_2\n4294967295,0\n", EDGES, 2, "id_1: 4294967295 exceeds the limit 4294967294");
    let largest = read_text("i.csv", "id_1,id_2\n4294967294,0\n", EDGES).unwrap();
    assert_eq!(largest.nrows(), 4294967295);
}

#[test]
fn edge_lists_keep_what_they_list() {
    let text = "id_1,id_2\n0,3\n\n3,0\n2,2\n0,3\r\n";
    let a = read_text("g.csv", text, EDGES).unwrap();
    assert_eq!((a.nrows(), a.ncols()), (4, 4));
    assert_eq!(entries(&a), [(0, 3, 1.0), (3, 0, 1.0), (2, 2, 1.0), (0, 3, 1.0)]);
    // Symmetrised and deduplicated: the undirected simple graph with its self-loop.
    let g = a.symmetrized().unwrap().to_csr().deduplicated(Duplicates::KeepFirst);
    assert_eq!(entries(&g.to_coo()), [(0, 3, 1.0), (2, 2, 1.0), (3, 0, 1.0)]);
    assert_eq!(read_text("h.csv", "id_1,id_2\n", EDGES).unwrap().nrows(), 0);

    let t = read_text("t.csv", "node_id,feature_id,value\n2,5,0.5\n0,1,-2\n", TRIPLES).unwrap();
    assert_eq!((t.nrows(), t.ncols()), (3, 6));
    assert_eq!(entries(&t), [(2, 5, 0.5), (0, 1, -2.0)]);
}

#[test]
fn writers_round_trip() {
    let folder = tempfile::tempdir().unwrap();
    let a = Coo::new(4, 5, vec![3, 0, 0, 2], vec![4, 0, 0, 1], vec![0.1, -3.5e-8, 7.0, f32::MAX]).unwrap();
    let mtx = folder.path().join("a.mtx");
    write_matrix_market(&mtx, &a).unwrap();
    assert_eq!(read_matrix_market(&mtx).unwrap(), a);
    assert_eq!(read_graph(&mtx).unwrap(), a);

    let edges = Coo::new(6, 6, vec![5, 0, 2, 2], vec![1, 4, 2, 0], vec![1.0; 4]).unwrap();
    let csv = folder.path().join("a.csv");
    write_edge_list_csv(&csv, &edges).unwrap();
    assert_eq!(read_edge_list_csv(&csv).unwrap(), edges);
    assert_eq!(read_graph(&csv).unwrap(), edges);
}

#[test]
fn cora_loads_as_documented() {
    let cora = datasets().join("cora");
    let graph = read_matrix_market(&cora.join("graph.mtx")).unwrap();
    assert_eq!((graph.nrows(), graph.ncols(), graph.nnz()), (2708, 2708, 10_556));
    let csr = graph.to_csr();
    // Every undirected edge appears in both directions: A equals its transpose.
    assert_eq!(csr.deduplicated(Duplicates::Sum), csr.transpose().deduplicated(Duplicates::Sum));
    let features = read_matrix_market(&cora.join("features.mtx")).unwrap();
    assert_eq!((features.nrows(), features.ncols(), features.nnz()), (2708, 1433, 49_216));
}

#[test]
fn github_edges_load_fast_and_symmetrise() {
    let path = datasets().join("github/edges.csv");
    let started = Instant::now();
    let edges = read_edge_list_csv(&path).unwrap();
    let elapsed = started.elapsed();
    assert_eq!((edges.nrows(), edges.nnz()), (37_700, 289_003));
    // The release-mode goal is well under a second; debug builds get slack.
    let limit = if cfg!(debug_assertions) { 5.0 } else { 0.5 };
    assert!(elapsed.as_secs_f64() < limit, "loading took {elapsed:?}");
    let graph = edges.symmetrized().unwrap().to_csr().deduplicated(Duplicates::KeepFirst);
    assert_eq!(graph.nnz(), 2 * 289_003);
    let max_degree = (0..graph.nrows()).map(|r| graph.row(r).0.len()).max().unwrap();
    assert_eq!(max_degree, 9_458);
}

#[test]
fn twitch_features_load_as_triples() {
    let features = read_triples_csv(&datasets().join("twitch/features.csv")).unwrap();
    assert_eq!((features.nrows(), features.ncols()), (7_126, 3_170));
}

#[test]
fn repeated_pairs_and_self_loops_are_tolerated() {
    let wikipedia = read_edge_list_csv(&datasets().join("wikipedia/edges.csv")).unwrap();
    assert_eq!(wikipedia.nnz(), 180_020);
    let self_loops = wikipedia.rows().iter().zip(wikipedia.cols()).filter(|(r, c)| r == c).count();
    assert_eq!(self_loops, 145);
    let facebook = read_edge_list_csv(&datasets().join("facebook/edges.csv")).unwrap();
    assert_eq!((facebook.nrows(), facebook.nnz()), (22_470, 171_002));
}
