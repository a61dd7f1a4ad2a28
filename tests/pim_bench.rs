//! `pimgnn bench spmm`'s engine on a small graph: every feature width gives a row whose PIM result matches
//! the CPU, whose plan beats or equals PyGim's default in prediction, and the table prints them.

use pimgnn::bench::{self, PlanChoice, SpmmBenchConfig};
use upmem::sim::Schedule;
use upmem::BackendKind;

#[test]
fn bench_rows_match_the_cpu_and_print() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("edges.csv");
    let edges: String = (0..500).map(|i| format!("{},{}\n{},{}\n", i, (i * 37) % 500, i, (i + 1) % 500)).collect();
    std::fs::write(&graph, format!("id_1,id_2\n{edges}")).unwrap();
    let config = SpmmBenchConfig {
        graph: Some(graph),
        features: vec![3, 20],
        dpus: 16,
        tasklets: 11,
        plan: PlanChoice::Auto,
        backend: BackendKind::Simulator,
        schedules: vec![Schedule::Modelled, Schedule::Fast],
    };
    let a = bench::load_graph(&config).unwrap();
    // Each listed edge goes both ways, except the four self-loops (36 i = 0 mod 500).
    assert_eq!((a.nrows(), a.nnz()), (500, 1996));
    let rows = bench::run(&config, &a).unwrap();
    let widths_and_schedules: Vec<_> = rows.iter().map(|row| (row.features, row.schedule)).collect();
    let (modelled, fast) = (Some(Schedule::Modelled), Some(Schedule::Fast));
    assert_eq!(widths_and_schedules, [(3, modelled), (3, fast), (20, modelled), (20, fast)]);
    for row in &rows {
        assert!(row.max_relative_error < 1e-5, "F = {}: error {}", row.features, row.max_relative_error);
        let pygim = row.pygim.expect("PyGim's default fits").total();
        assert!(row.fastest.prediction.total() <= pygim);
    }
    let table = bench::table(&rows).to_string();
    assert!(table.contains("tasklets=11") && table.contains("kernel") && table.contains("fast"), "{table}");
}

#[test]
fn malformed_graph_files_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("bad.csv");
    std::fs::write(&graph, "id_1,id_2\n0,1\n2,x\n").unwrap();
    let config = SpmmBenchConfig {
        graph: Some(graph),
        features: vec![1],
        dpus: 1,
        tasklets: 1,
        plan: PlanChoice::Auto,
        backend: BackendKind::Simulator,
        schedules: vec![Schedule::Modelled, Schedule::Fast],
    };
    let message = bench::load_graph(&config).unwrap_err().to_string();
    assert!(message.contains("bad.csv:3") && message.contains("`x`"), "{message}");
}
