//! `pimgnn train --history FILE`: each epoch's loss and accuracies as CSV (`epoch,loss,train,val,test`), the
//! columns training scripts log. An epoch's figures are those of the parameters before its step, as its loss
//! is; a mask not given leaves its column empty. Each line is written as its epoch ends, so an interrupted run
//! keeps the epochs it finished.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::train::Accuracies;

/// The CSV header.
pub const HEADER: &str = "epoch,loss,train,val,test";

/// A history file being written.
pub struct History {
    path: PathBuf,
    file: BufWriter<File>,
}

impl History {
    /// Creates (or replaces) `path` and writes the header.
    pub fn create(path: &Path) -> anyhow::Result<Self> {
        let file = File::create(path).with_context(|| format!("--history {}: creating it", path.display()))?;
        let mut history = History { path: path.to_owned(), file: BufWriter::new(file) };
        history.write_line(HEADER)?;
        Ok(history)
    }

    /// Appends epoch `epoch`'s line.
    pub fn record(&mut self, epoch: usize, loss: f32, accuracies: &Accuracies) -> anyhow::Result<()> {
        let optional = |value: Option<f64>| value.map(|v| format!("{v:.6}")).unwrap_or_default();
        let line = format!(
            "{epoch},{loss},{:.6},{},{}",
            accuracies.train,
            optional(accuracies.val),
            optional(accuracies.test)
        );
        self.write_line(&line)
    }

    fn write_line(&mut self, line: &str) -> anyhow::Result<()> {
        writeln!(self.file, "{line}")
            .and_then(|()| self.file.flush())
            .with_context(|| format!("--history {}: writing it", self.path.display()))
    }
}
