//! What the benchmarks share to measure PyTorch side by side with pimgnn: running a Python script on a workload
//! written to a directory, reading its result lines, and this process's resource usage.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context as _};

use super::progress;

/// Checks that `python` imports `modules`, writes `script` into `dir` as `file_name`, runs it with `dir` and
/// `extra` as arguments (showing `step` while it runs), and returns its standard output.
pub(super) fn run_script(
    python: &str,
    modules: &[&str],
    dir: &Path,
    (file_name, script): (&str, &str),
    extra: &[String],
    step: &str,
) -> anyhow::Result<String> {
    let imports = format!("import {}", modules.join(", "));
    match Command::new(python).args(["-c", &imports]).output() {
        Ok(output) if output.status.success() => {}
        Ok(_) => bail!("{python} cannot import {}", modules.join(", ")),
        Err(error) => bail!("cannot run {python}: {error}"),
    }
    let path = dir.join(file_name);
    std::fs::write(&path, script).with_context(|| format!("writing {}", path.display()))?;
    let output = progress::step(step, || Command::new(python).arg(&path).arg(dir).args(extra).output())
        .with_context(|| format!("running {}", path.display()))?;
    if !output.status.success() {
        bail!("{file_name} failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The result lines of a script's output: `name field...` gives the fields, `name unavailable reason` the reason.
pub(super) fn result_lines(stdout: &str) -> impl Iterator<Item = (&str, Result<Vec<&str>, String>)> {
    stdout.lines().filter_map(|line| {
        let (name, rest) = line.split_once(' ')?;
        let fields = match rest.strip_prefix("unavailable ") {
            Some(reason) => Err(reason.to_owned()),
            None => Ok(rest.split(' ').collect()),
        };
        Some((name, fields))
    })
}

/// Resource usage of this process (`RUSAGE_SELF`) or of its finished children (`RUSAGE_CHILDREN`).
fn usage(who: libc::c_int) -> anyhow::Result<libc::rusage> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage writes a whole `rusage` through the valid pointer it is given and returns 0 on success.
    let status = unsafe { libc::getrusage(who, usage.as_mut_ptr()) };
    if status != 0 {
        bail!("getrusage failed: {}", std::io::Error::last_os_error());
    }
    // SAFETY: getrusage succeeded, so it initialised `usage`.
    Ok(unsafe { usage.assume_init() })
}

/// CPU time used by this process so far, all threads, user and system.
pub(super) fn process_cpu_time() -> anyhow::Result<Duration> {
    let usage = usage(libc::RUSAGE_SELF)?;
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Ok(time(usage.ru_utime) + time(usage.ru_stime))
}

/// The largest resident set this process (`RUSAGE_SELF`) or one of its finished children (`RUSAGE_CHILDREN`)
/// has had, in bytes.
pub(super) fn peak_memory_bytes(who: libc::c_int) -> anyhow::Result<u64> {
    // Linux reports kibibytes.
    Ok(u64::try_from(usage(who)?.ru_maxrss).unwrap_or(0) * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_give_fields_or_the_reason() {
        let out = "noise\nfast 1.5 2.5\nslow unavailable no GPU here\n";
        let lines: Vec<_> = result_lines(out).collect();
        assert_eq!(lines, vec![("fast", Ok(vec!["1.5", "2.5"])), ("slow", Err("no GPU here".to_owned()))]);
    }
}
