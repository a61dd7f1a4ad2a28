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
