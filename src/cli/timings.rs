//! The per-layer, per-phase timing table.

use std::time::Duration;

use crate::cli::table;
use comfy_table::{Cell, CellAlignment, Table};
use pimgnn::gnn::LayerReport;
use pimgnn::Phase;

fn millis(duration: Duration) -> String {
    format!("{:.2}", duration.as_secs_f64() * 1e3)
}

/// The predicted time of `phases` on a PIM server: the modelled time of the PIM phases and the wall time of
/// the host's, or nothing when no phase is modelled.
pub fn predicted(phases: &[Phase]) -> Option<Duration> {
    phases.iter().any(|p| p.predicted.is_some()).then(|| phases.iter().map(|p| p.predicted.unwrap_or(p.wall)).sum())
}

/// Rows per layer and phase: wall time here and predicted time on UPMEM hardware (when the engine models it).
pub fn timings(setup: &[Phase], layers: &[LayerReport]) -> Table {
    let mut table =
        table::with_header(["layer", "step", "wall (ms)", "predicted on PIM hardware (ms; host steps at wall time)"]);
    let mut row = |layer: &str, step: &str, wall: Duration, predicted: Option<Duration>| {
        table.add_row([
            Cell::new(layer),
            Cell::new(step),
            Cell::new(millis(wall)).set_alignment(CellAlignment::Right),
            Cell::new(predicted.map_or_else(|| "-".to_owned(), millis)).set_alignment(CellAlignment::Right),
        ]);
    };
    for phase in setup {
        row("setup", &phase.name, phase.wall, phase.predicted);
    }
    let mut total = Duration::ZERO;
    for layer in layers {
        let title = format!("{} {} {} -> {}\n{}", layer.name, layer.kind, layer.widths.0, layer.widths.1, layer.order);
        for (at, phase) in layer.phases.iter().enumerate() {
            row(if at == 0 { &title } else { "" }, &phase.name, phase.wall, phase.predicted);
        }
        row("", "layer total", layer.wall(), predicted(&layer.phases));
        total += layer.wall();
    }
    let all: Vec<Phase> = layers.iter().flat_map(|l| l.phases.iter().cloned()).collect();
    row("all layers", "inference total", total, predicted(&all));
    table::fit_to_terminal(&mut table);
    table
}
