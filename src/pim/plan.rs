//! Partitioning plans for PIM SpMM: how `A` is cut over DPUs and how `X` reaches them, as values that can be
//! printed, parsed, costed ([`crate::pim::cost`]) and run ([`crate::pim::PimSpmm`]).
//!
//! A plan uses `row_blocks x col_blocks x feature_groups` DPUs (the rest of the set stays idle):
//!
//! - **row blocks** (1D): rows split into contiguous blocks balanced by nonzeros plus rows, cut inside long
//!   rows when [`Plan::split_rows`] is set (a hub row then spreads over several DPUs and the host adds the
//!   pieces; PyGim cuts only between rows, so one hub row can hold up every DPU);
//! - **column blocks** (2D tiles): each row block is cut into column ranges of equal width; every tile gives a
//!   partial `Y` that the host adds up;
//! - **feature groups** (PyGim's cooperative groups): the feature columns of `X` are split into groups, each
//!   group of DPUs holding all tiles and computing its slice of `Y`'s columns;
//! - **X delivery**: [`XDelivery::Whole`] sends each DPU the whole slice of `X` its tile's columns span (a
//!   broadcast when there is one slice), [`XDelivery::Referenced`] only the rows of `X` its nonzeros reference,
//!   renumbered per DPU, which for sparse graphs moves a small fraction of the bytes.

use std::fmt;
use std::str::FromStr;

use strum::VariantNames;

use crate::error::{Error, Result};
use crate::pim::abi::MAX_TASKLETS;

/// The sparse format a DPU keeps its block in (one kernel family each): `csr` or `coo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, strum::Display, strum::EnumString, strum::VariantNames)]
#[strum(serialize_all = "lowercase")]
pub enum Format {
    /// Row pointers plus (column, value) records: `dpu/spmm_csr.c`.
    Csr,
    /// (row, column, value) records sorted by row: `dpu/spmm_coo.c`.
    Coo,
}

/// Which rows of `X` a DPU receives: `whole` or `referenced`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, strum::Display, strum::EnumString, strum::VariantNames)]
#[strum(serialize_all = "lowercase")]
pub enum XDelivery {
    /// Every row of the DPU's column block (the whole `X` slice; a broadcast with one block and one group).
    Whole,
    /// Only the rows its nonzeros reference, renumbered from 0 on each DPU.
    Referenced,
}

/// A partitioning plan; see the [module documentation](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Plan {
    /// Kernel family.
    pub format: Format,
    /// Row blocks (at least 1).
    pub row_blocks: u32,
    /// Whether row blocks may cut inside a row (else only between rows).
    pub split_rows: bool,
    /// Column blocks per row block (at least 1).
    pub col_blocks: u32,
    /// Feature-column groups (at least 1).
    pub feature_groups: u32,
    /// How `X` reaches the DPUs.
    pub x: XDelivery,
    /// Tasklets per DPU given work (1 to 24).
    pub tasklets: u32,
}

impl Plan {
    /// PyGim's plan with `groups` cooperative groups: CSR, each group holding all rows (split between rows
    /// over its `nr_dpus / groups` DPUs, balanced by nonzeros) and one slice of the feature columns, the whole `X` slice sent to
    /// every DPU of the group. PyGim's default is the fewest groups whose slice fits in MRAM
    /// ([`crate::pim::cost::choose`] finds it and costs it next to its own choice).
    pub fn pygim(nr_dpus: u32, groups: u32, tasklets: u32) -> Plan {
        Plan {
            format: Format::Csr,
            row_blocks: (nr_dpus / groups.max(1)).max(1),
            split_rows: false,
            col_blocks: 1,
            feature_groups: groups.max(1),
            x: XDelivery::Whole,
            tasklets,
        }
    }

    /// Whether every DPU receives the same `X` (one column block, one feature group, whole slices), which the
    /// engine then broadcasts.
    pub fn broadcasts_x(&self) -> bool {
        self.feature_groups == 1 && self.col_blocks == 1 && self.x == XDelivery::Whole
    }

    /// DPUs the plan gives work to.
    pub fn dpus_used(&self) -> u64 {
        u64::from(self.row_blocks) * u64::from(self.col_blocks) * u64::from(self.feature_groups)
    }

    /// Checks the plan against a set of `nr_dpus` DPUs: every count at least 1, no more DPUs than the set has,
    /// 1 to 24 tasklets.
    pub fn check(&self, nr_dpus: usize) -> Result<()> {
        if self.row_blocks == 0 || self.col_blocks == 0 || self.feature_groups == 0 {
            return Err(Error::invalid(
                format!("plan {self}"),
                "row blocks, column blocks and groups must be at least 1",
            ));
        }
        if self.dpus_used() > nr_dpus as u64 {
            return Err(Error::Capacity {
                what: format!("DPUs for plan {self}"),
                needed: self.dpus_used(),
                limit: nr_dpus as u64,
            });
        }
        if !(1..=MAX_TASKLETS as u32).contains(&self.tasklets) {
            return Err(Error::invalid(
                format!("plan {self}"),
                format!("{} tasklets: the kernels run 1 to {MAX_TASKLETS}", self.tasklets),
            ));
        }
        Ok(())
    }
}

/// `csr:rows=2048,split=yes,cols=1,groups=1,x=referenced,tasklets=16`, the form [`Plan::from_str`] reads.
impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:rows={},split={},cols={},groups={},x={},tasklets={}",
            self.format,
            self.row_blocks,
            if self.split_rows { "yes" } else { "no" },
            self.col_blocks,
            self.feature_groups,
            self.x,
            self.tasklets
        )
    }
}

/// Parses the [`Display`](fmt::Display) form; keys after the format may come in any order, and omitted ones
/// default to `split=yes`, 1 column block, 1 group, `x=referenced` and 16 tasklets; `rows` is required.
impl FromStr for Plan {
    type Err = Error;

    fn from_str(text: &str) -> Result<Plan> {
        let bad = |reason: String| Error::invalid(format!("plan '{text}'"), reason);
        let (format, rest) = text.split_once(':').unwrap_or((text, ""));
        let format = format
            .parse()
            .map_err(|_| bad(format!("format '{format}': expected {}", Format::VARIANTS.join(" or "))))?;
        let mut plan = Plan {
            format,
            row_blocks: 0,
            split_rows: true,
            col_blocks: 1,
            feature_groups: 1,
            x: XDelivery::Referenced,
            tasklets: 16,
        };
        for pair in rest.split(',').filter(|pair| !pair.is_empty()) {
            let (key, value) = pair.split_once('=').ok_or_else(|| bad(format!("'{pair}': expected key=value")))?;
            let number = || value.parse::<u32>().map_err(|_| bad(format!("{key}={value}: not a count")));
            match key {
                "rows" => plan.row_blocks = number()?,
                "cols" => plan.col_blocks = number()?,
                "groups" => plan.feature_groups = number()?,
                "tasklets" => plan.tasklets = number()?,
                "split" => {
                    plan.split_rows = match value {
                        "yes" => true,
                        "no" => false,
                        _ => return Err(bad(format!("split={value}: expected yes or no"))),
                    }
                }
                "x" => {
                    plan.x = value
                        .parse()
                        .map_err(|_| bad(format!("x={value}: expected {}", XDelivery::VARIANTS.join(" or "))))?
                }
                _ => return Err(bad(format!("unknown key '{key}' (rows, split, cols, groups, x, tasklets)"))),
            }
        }
        if plan.row_blocks == 0 {
            return Err(bad("rows=N (at least 1) is required".into()));
        }
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_round_trips() {
        let plan = Plan {
            format: Format::Coo,
            row_blocks: 100,
            split_rows: false,
            col_blocks: 3,
            feature_groups: 4,
            x: XDelivery::Whole,
            tasklets: 11,
        };
        assert_eq!(plan.to_string().parse::<Plan>().unwrap(), plan);
        assert_eq!(
            "csr:rows=8".parse::<Plan>().unwrap(),
            Plan { row_blocks: 8, split_rows: true, x: XDelivery::Referenced, ..Plan::pygim(8, 1, 16) }
        );
    }

    #[test]
    fn bad_plans_say_why() {
        for (text, needle) in [
            ("ell:rows=2", "format"),
            ("csr:rows=x", "not a count"),
            ("csr:cols=2", "rows=N"),
            ("csr:rows=2,z=1", "unknown key"),
        ] {
            match text.parse::<Plan>() {
                Err(Error::Invalid { what, reason }) => {
                    assert_eq!(what, format!("plan '{text}'"));
                    assert!(reason.contains(needle), "{text}: {reason}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        let too_big = Plan::pygim(64, 1, 16);
        match too_big.check(63) {
            Err(Error::Capacity { what, needed: 64, limit: 63 }) => {
                assert_eq!(what, format!("DPUs for plan {too_big}"))
            }
            other => panic!("{other:?}"),
        }
        let too_many_tasklets = Plan::pygim(4, 2, 25);
        match too_many_tasklets.check(4) {
            Err(Error::Invalid { what, reason }) => {
                assert_eq!(what, format!("plan {too_many_tasklets}"));
                assert_eq!(reason, format!("25 tasklets: the kernels run 1 to {MAX_TASKLETS}"));
            }
            other => panic!("{other:?}"),
        }
        let no_rows = Plan { row_blocks: 0, ..Plan::pygim(4, 2, 16) };
        match no_rows.check(4) {
            Err(Error::Invalid { reason, .. }) => {
                assert_eq!(reason, "row blocks, column blocks and groups must be at least 1");
            }
            other => panic!("{other:?}"),
        }
    }
}
