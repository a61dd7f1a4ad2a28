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

/// What the predicted column shows for a phase: its modelled time, or for a host step its wall time here, marked
/// as such (that is what the totals count); setup steps are in no total.
enum Predicted {
    Modelled(Duration),
    HostAtWall(Duration),
    NotCounted,
}

impl Predicted {
    fn of(phase: &Phase) -> Predicted {
        phase.predicted.map_or(Predicted::HostAtWall(phase.wall), Predicted::Modelled)
    }

    fn cell(&self) -> String {
        match self {
            Predicted::Modelled(time) => millis(*time),
            Predicted::HostAtWall(time) => format!("{} (host, wall)", millis(*time)),
            Predicted::NotCounted => "-".to_owned(),
        }
    }
}

/// Rows per layer and phase: wall time here and predicted time on UPMEM hardware (when the engine models it).
pub fn timings(setup: &[Phase], layers: &[LayerReport]) -> Table {
    let all: Vec<Phase> = layers.iter().flat_map(|l| l.phases.iter().cloned()).collect();
    let modelled = predicted(&all).is_some();
    let mut table = table::with_header(["layer", "step", "wall (ms)", "predicted on PIM hardware (ms)"]);
    let mut row = |layer: &str, step: &str, wall: Duration, predicted: Predicted| {
        table.add_row([
            Cell::new(layer),
            Cell::new(step),
            Cell::new(millis(wall)).set_alignment(CellAlignment::Right),
            Cell::new(predicted.cell()).set_alignment(CellAlignment::Right),
        ]);
    };
    let counted = |phase: &Phase| if modelled { Predicted::of(phase) } else { Predicted::NotCounted };
    let total = |phases: &[Phase]| predicted(phases).map_or(Predicted::NotCounted, Predicted::Modelled);
    for phase in setup {
        row("setup", &phase.name, phase.wall, Predicted::NotCounted);
    }
    let mut wall = Duration::ZERO;
    for layer in layers {
        let title = format!("{} {} {} -> {}\n{}", layer.name, layer.kind, layer.widths.0, layer.widths.1, layer.order);
        for (at, phase) in layer.phases.iter().enumerate() {
            row(if at == 0 { &title } else { "" }, &phase.name, phase.wall, counted(phase));
        }
        row("", "layer total", layer.wall(), total(&layer.phases));
        wall += layer.wall();
    }
    row("all layers", "inference total", wall, total(&all));
    table::fit_to_terminal(&mut table);
    table
}
