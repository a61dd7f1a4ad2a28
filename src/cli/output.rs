//! Checking where a command will write its result before the command runs, so that a mistyped path does not
//! throw away a long run at its end.

use std::path::Path;

use anyhow::bail;

/// Fails unless `path` (the value of `option`) names a file that can be created or replaced: not a directory,
/// in a directory that exists.
pub fn check_writable(option: &str, path: &Path) -> anyhow::Result<()> {
    if path.is_dir() {
        bail!("{option} {}: is a directory; give the path of a file to write", path.display());
    }
    let parent = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        bail!("{option} {}: the directory {} does not exist", path.display(), parent.display());
    }
    Ok(())
}
