//! A spinner for steps that may take a while, and a bar for a count of them, drawn only when stderr is a
//! terminal.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Runs `step` under a spinner saying `message` (nothing is drawn off a terminal).
pub fn step<T>(message: &str, step: impl FnOnce() -> T) -> T {
    let spinner = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        spinner.set_style(style);
    }
    spinner.set_message(message.to_owned());
    spinner.enable_steady_tick(Duration::from_millis(120));
    let result = step();
    spinner.finish_and_clear();
    result
}

/// A bar over `total` steps, each shown by the message set on it (nothing is drawn off a terminal).
pub fn counter(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} ({elapsed}) {msg}") {
        bar.set_style(style);
    }
    bar
}

/// A bar over `model`'s layers, its message the layer running; [`Model::forward_reporting`]'s `layer_done` is
/// [`LayerBar::done`].
///
/// [`Model::forward_reporting`]: pimgnn::gnn::Model::forward_reporting
pub struct LayerBar {
    bar: ProgressBar,
    names: Vec<String>,
}

impl LayerBar {
    /// A bar at `model`'s first layer, saying `what` runs.
    pub fn new(what: &str, model: &pimgnn::gnn::Model) -> Self {
        let names: Vec<String> =
            model.layers().iter().map(|(name, layer)| format!("{name} {}", layer.kind())).collect();
        let bar = counter(names.len() as u64);
        bar.set_prefix(what.to_owned());
        if let Ok(style) = ProgressStyle::with_template("{prefix}: {bar:30} {pos}/{len} layers ({elapsed}) {msg}") {
            bar.set_style(style);
        }
        bar.set_message(names.first().cloned().unwrap_or_default());
        bar.enable_steady_tick(Duration::from_millis(500));
        LayerBar { bar, names }
    }

    /// Moves the bar past the layer just finished, to the next one.
    pub fn done(&self) {
        self.bar.inc(1);
        let next = self.bar.position() as usize;
        self.bar.set_message(self.names.get(next).cloned().unwrap_or_default());
    }
}

impl Drop for LayerBar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
