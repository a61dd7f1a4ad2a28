//! What the UPMEM kernel driver says about this machine's DPU ranks, read from sysfs without allocating any.
//!
//! The driver (`dpu_rank` devices) exposes one directory per rank in `/sys/class/dpu_rank`, with the attributes
//! `nb_ci` (control interfaces: chips) and `nb_dpus_per_ci`, which the SDK's hardware backend reads for the
//! rank's shape (their names are in the SDK 2025.1's libdpuhw), and `is_owned`, which the driver sets while a
//! process holds the rank open (the SDK allocates a rank by opening its device node; the driver refuses a second
//! owner). libdpu has no call that counts free DPUs, so this is how free DPUs are counted. The counts are
//! nominal: the SDK disables the DPUs it finds faulty once it owns a rank, so a few fewer may be usable.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// Where the driver lists its ranks.
pub const RANK_CLASS_DIR: &str = "/sys/class/dpu_rank";

/// The driver's view of the machine's ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RankInventory {
    /// The rank class directory does not exist: the UPMEM driver is not loaded, or the machine has no UPMEM
    /// DIMMs.
    NoDriver {
        /// The directory looked at.
        dir: PathBuf,
    },
    /// The driver is loaded but exposes no rank.
    NoRank {
        /// The directory looked at.
        dir: PathBuf,
    },
    /// The ranks the driver exposes, in name order.
    Ranks {
        /// The directory looked at.
        dir: PathBuf,
        /// Each rank.
        ranks: Vec<DriverRank>,
    },
}

/// One rank as the driver describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverRank {
    /// Its name (`dpu_rank0`, ...).
    pub name: String,
    /// Its nominal DPUs (`nb_ci` x `nb_dpus_per_ci`), `None` when unreadable.
    pub dpus: Option<u32>,
    /// Whether a process owns it (`is_owned`), `None` when unreadable.
    pub owned: Option<bool>,
}

impl RankInventory {
    /// The ranks in `/sys/class/dpu_rank`.
    pub fn of_this_machine() -> RankInventory {
        Self::read(Path::new(RANK_CLASS_DIR))
    }

    /// The ranks listed in `dir`, a directory laid out as the driver's rank class.
    pub fn read(dir: &Path) -> RankInventory {
        let dir = dir.to_path_buf();
        let Ok(entries) = fs::read_dir(&dir) else { return RankInventory::NoDriver { dir } };
        let mut ranks: Vec<DriverRank> = entries
            .filter_map(|entry| entry.ok())
            .map(|entry| DriverRank::read(&entry.path(), entry.file_name().to_string_lossy().into_owned()))
            .collect();
        if ranks.is_empty() {
            return RankInventory::NoRank { dir };
        }
        ranks.sort_by_key(|rank| natural_key(&rank.name));
        RankInventory::Ranks { dir, ranks }
    }

    /// The ranks listed (none without a driver).
    pub fn ranks(&self) -> &[DriverRank] {
        match self {
            RankInventory::Ranks { ranks, .. } => ranks,
            _ => &[],
        }
    }

    /// Whether the driver exposes at least one rank.
    pub fn has_device(&self) -> bool {
        !self.ranks().is_empty()
    }

    /// Ranks no process owns (a rank whose `is_owned` is unreadable counts as owned).
    pub fn free_ranks(&self) -> usize {
        self.ranks().iter().filter(|rank| rank.owned == Some(false)).count()
    }

    /// Nominal DPUs of the free ranks, `None` when a free rank's size is unreadable.
    pub fn free_dpus(&self) -> Option<u32> {
        self.ranks().iter().filter(|rank| rank.owned == Some(false)).map(|rank| rank.dpus).sum()
    }

    /// Nominal DPUs of every rank, `None` when a rank's size is unreadable.
    pub fn total_dpus(&self) -> Option<u32> {
        self.ranks().iter().map(|rank| rank.dpus).sum()
    }
}

impl DriverRank {
    fn read(dir: &Path, name: String) -> DriverRank {
        let number =
            |attribute: &str| -> Option<u32> { fs::read_to_string(dir.join(attribute)).ok()?.trim().parse().ok() };
        let dpus = number("nb_ci").zip(number("nb_dpus_per_ci")).map(|(cis, per_ci)| cis * per_ci);
        DriverRank { name, dpus, owned: number("is_owned").map(|owned| owned != 0) }
    }
}

/// Orders `dpu_rank2` before `dpu_rank10`.
fn natural_key(name: &str) -> (String, u64) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, number) = name.split_at(name.len() - digits);
    (stem.to_owned(), number.parse().unwrap_or(0))
}

fn count(value: Option<u32>) -> String {
    value.map_or_else(|| "an unknown number of".to_owned(), |value| value.to_string())
}

impl fmt::Display for RankInventory {
    /// Starts with "no UPMEM device found" when there is none.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RankInventory::NoDriver { dir } => write!(
                f,
                "no UPMEM device found: {} does not exist (the UPMEM kernel driver is not loaded, or this machine \
                 has no UPMEM DIMMs)",
                dir.display()
            ),
            RankInventory::NoRank { dir } => write!(
                f,
                "no UPMEM device found: {} is empty (the UPMEM driver is loaded but found no DPU rank)",
                dir.display()
            ),
            RankInventory::Ranks { dir, ranks } => write!(
                f,
                "the UPMEM driver lists {} ranks ({} DPUs), of which {} free ({} DPUs; counted from is_owned, \
                 nb_ci and nb_dpus_per_ci in {}; DPUs found faulty are disabled when allocated, so a few fewer may \
                 be usable)",
                ranks.len(),
                count(self.total_dpus()),
                self.free_ranks(),
                count(self.free_dpus()),
                dir.display()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(class: &Path, name: &str, owned: &str, cis: &str) {
        let dir = class.join(name);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("is_owned"), owned).unwrap();
        fs::write(dir.join("nb_ci"), cis).unwrap();
        fs::write(dir.join("nb_dpus_per_ci"), "8\n").unwrap();
    }

    #[test]
    fn free_dpus_are_those_of_the_ranks_no_process_owns() {
        let class = tempfile::tempdir().unwrap();
        rank(class.path(), "dpu_rank10", "0\n", "8\n");
        rank(class.path(), "dpu_rank2", "1\n", "8\n");
        rank(class.path(), "dpu_rank0", "0\n", "4\n");
        let inventory = RankInventory::read(class.path());
        let names: Vec<&str> = inventory.ranks().iter().map(|rank| rank.name.as_str()).collect();
        assert_eq!(names, ["dpu_rank0", "dpu_rank2", "dpu_rank10"]);
        assert_eq!((inventory.free_ranks(), inventory.free_dpus(), inventory.total_dpus()), (2, Some(96), Some(160)));
        let text = inventory.to_string();
        assert!(text.contains("3 ranks (160 DPUs), of which 2 free (96 DPUs;"), "{text}");
    }

    #[test]
    fn no_driver_and_no_rank_say_that_no_device_is_found() {
        let class = tempfile::tempdir().unwrap();
        let empty = RankInventory::read(class.path());
        assert_eq!(empty, RankInventory::NoRank { dir: class.path().to_path_buf() });
        assert!(empty.to_string().starts_with("no UPMEM device found:") && empty.to_string().contains("is empty"));
        let absent = RankInventory::read(&class.path().join("dpu_rank"));
        assert!(!absent.has_device() && absent.to_string().contains("driver is not loaded"), "{absent}");
    }

    #[test]
    fn an_unreadable_size_makes_the_count_unknown_and_an_unreadable_owner_counts_as_owned() {
        let class = tempfile::tempdir().unwrap();
        rank(class.path(), "dpu_rank0", "0", "garbage");
        fs::create_dir_all(class.path().join("dpu_rank1")).unwrap();
        let inventory = RankInventory::read(class.path());
        assert_eq!((inventory.free_ranks(), inventory.free_dpus()), (1, None));
        assert!(inventory.to_string().contains("of which 1 free (an unknown number of DPUs;"), "{inventory}");
    }
}
