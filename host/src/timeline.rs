//! Predicted hardware time of a program run: every transfer and launch of a [`LoadedSet`](crate::LoadedSet),
//! in order, with its wall time here and its modelled time on a UPMEM server.
//!
//! The model ([`TransferModel`]: PrIM's per-rank bandwidths, serial copies, ranks in parallel, a launch's
//! overhead plus the slowest DPU's modelled cycles) and its sources are documented in [`upmem_types::transfer_model`];
//! on hardware the DPUs' cycles are not known here, so a launch has no prediction.

use std::fmt;
use std::time::Duration;

pub use upmem_types::{Operation, TransferModel};

/// One transfer or launch of a set, as it ran here and as modelled on hardware.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// What it did.
    pub operation: Operation,
    /// Bytes moved to or from each DPU (0 for a launch).
    pub bytes_per_dpu: u64,
    /// DPUs it involved.
    pub dpus: usize,
    /// Wall time here (on the simulator: emulation time, not a prediction).
    pub wall: Duration,
    /// Modelled time on a UPMEM server; `None` for a launch on hardware (its cycles are not known) or one whose
    /// statistics a later launch overwrote before they were read.
    pub predicted: Option<Duration>,
}

/// The transfers and launches of a set in the order they ran; see [`LoadedSet::timeline`](crate::LoadedSet::timeline).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    events: Vec<Event>,
}

impl Timeline {
    /// The events, oldest first.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Total predicted hardware time: the events run one after the other.
    pub fn predicted(&self) -> Duration {
        self.events.iter().filter_map(|event| event.predicted).sum()
    }

    /// Total wall time of the events.
    pub fn wall(&self) -> Duration {
        self.events.iter().map(|event| event.wall).sum()
    }

    /// Predicted hardware time of the events of one operation.
    pub fn predicted_of(&self, operation: Operation) -> Duration {
        self.events.iter().filter(|event| event.operation == operation).filter_map(|event| event.predicted).sum()
    }

    pub(crate) fn push(&mut self, event: Event) {
        self.events.push(event);
    }

    /// The last launch, to complete its prediction once its statistics are known.
    pub(crate) fn last_launch_mut(&mut self) -> Option<&mut Event> {
        self.events.iter_mut().rev().find(|event| event.operation == Operation::Launch)
    }
}

/// One line per event, then the totals.
impl fmt::Display for Timeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |duration: Duration| duration.as_secs_f64() * 1e3;
        writeln!(
            f,
            "{:>5}  {:<14} {:>14} {:>6} {:>12} {:>16}",
            "#", "operation", "bytes/DPU", "DPUs", "wall ms", "predicted hw ms"
        )?;
        for (index, event) in self.events.iter().enumerate() {
            let predicted = event.predicted.map_or_else(|| "-".to_owned(), |p| format!("{:.3}", ms(p)));
            writeln!(
                f,
                "{index:>5}  {:<14} {:>14} {:>6} {:>12.3} {predicted:>16}",
                event.operation.to_string(),
                event.bytes_per_dpu,
                event.dpus,
                ms(event.wall)
            )?;
        }
        write!(
            f,
            "{:>5}  {:<14} {:>14} {:>6} {:>12.3} {:>16.3}",
            "",
            "total",
            "",
            "",
            ms(self.wall()),
            ms(self.predicted())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeline_totals_what_is_predicted() {
        let mut timeline = Timeline::default();
        let event = |operation, predicted| Event {
            operation,
            bytes_per_dpu: 8,
            dpus: 2,
            wall: Duration::from_millis(5),
            predicted,
        };
        timeline.push(event(Operation::Push, Some(Duration::from_millis(1))));
        timeline.push(event(Operation::Launch, None));
        timeline.push(event(Operation::Launch, Some(Duration::from_millis(2))));
        assert_eq!(timeline.predicted(), Duration::from_millis(3));
        assert_eq!(timeline.predicted_of(Operation::Launch), Duration::from_millis(2));
        assert_eq!(timeline.wall(), Duration::from_millis(15));
        let table = timeline.to_string();
        assert!(table.contains("push") && table.contains("total"), "{table}");
    }
}
