//! File-system helpers of the reader and the writer: whole text files read and written
//! with errors that name the path, the paths of a plotfile (a suffix on a VisMF prefix;
//! paths read from a file kept inside the plotfile directory), and the directory a
//! plotfile or checkpoint is written in before it takes its name; positional reads and
//! writes, with which threads read and write the FABs of one file at once.

use alloc::format;
use alloc::string::String;
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{PlotfileError, io_err};

pub(crate) fn read_text(path: &Path) -> Result<String, PlotfileError> {
    std::fs::read_to_string(path).map_err(io_err(path))
}

/// Whether a path read from a file stays inside the directory it is joined to: relative,
/// non-empty, and made only of plain names (no `..`, `.`, root or drive prefix). Symbolic
/// links inside the plotfile are the writer's own business.
pub(crate) fn confined(path: &str) -> bool {
    use std::path::Component;
    !path.is_empty()
        && !path.contains('\\')
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// `<prefix>` + `suffix` (`Level_0/Cell` + `_H`).
pub(crate) fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

pub(crate) fn write_text(path: &Path, text: &str) -> Result<(), PlotfileError> {
    std::fs::write(path, text).map_err(io_err(path))
}

/// Where a directory is written before it takes its name: `<dir>.partial`, beside it.
/// Every rank computes the same path.
///
/// # Errors
/// [`PlotfileError::Argument`] if `dir` has no final name (`/`, `..`, an empty path).
pub(crate) fn staging_path(dir: &Path) -> Result<PathBuf, PlotfileError> {
    if dir.file_name().is_none() {
        return Err(PlotfileError::Argument(format!(
            "{} names no directory to write (it has no final name)",
            dir.display()
        )));
    }
    Ok(with_suffix(dir, ".partial"))
}

/// Rank 0's first step of a write: an empty staging directory `staging` (a leftover of a
/// write that never finished is removed: it was never complete) with `Level_0` to
/// `Level_{nlev-1}` inside, AMReX's `PreBuildDirectorHierarchy` under another name.
pub(crate) fn make_staging(staging: &Path, nlev: usize) -> Result<(), PlotfileError> {
    if staging.exists() {
        std::fs::remove_dir_all(staging).map_err(io_err(staging))?;
    }
    std::fs::create_dir_all(staging).map_err(io_err(staging))?;
    for lev in 0..nlev {
        let ldir = staging.join(format!("Level_{lev}"));
        std::fs::create_dir(&ldir).map_err(io_err(&ldir))?;
    }
    Ok(())
}

/// Rank 0's last step of a write: an existing `dir` is moved aside to
/// `<dir>.old.<unique>` (AMReX's `UtilRenameDirectoryToOld`), then the complete
/// `staging` directory is renamed to `dir`. A write that stops before this leaves `dir`
/// as it was. Returns where the old directory went.
pub(crate) fn publish(staging: &Path, dir: &Path) -> Result<Option<PathBuf>, PlotfileError> {
    let mut moved = None;
    if std::fs::symlink_metadata(dir).is_ok() {
        let old = with_suffix(dir, &format!(".old.{}", unique()));
        std::fs::rename(dir, &old).map_err(io_err(dir))?;
        moved = Some(old);
    }
    std::fs::rename(staging, dir).map_err(io_err(staging))?;
    Ok(moved)
}

/// A string no earlier call in any process is likely to have returned: the time in
/// nanoseconds and the process id, in hexadecimal (AMReX's `UniqueString` is random).
fn unique() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{nanos:x}{:x}", std::process::id())
}

/// Fills `buf` from `file` at byte `offset` (a positional read: no shared cursor).
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let n = read_at_most(file, buf, offset)?;
    if n < buf.len() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("the file ends after {n} of them"),
        ));
    }
    Ok(())
}

/// Reads into `buf` from `file` at byte `offset` until `buf` is full or the file ends;
/// returns the bytes read.
pub(crate) fn read_at_most(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(file, &mut buf[done..], offset + done as u64);
        #[cfg(windows)]
        let n =
            std::os::windows::fs::FileExt::seek_read(file, &mut buf[done..], offset + done as u64);
        #[cfg(not(any(unix, windows)))]
        let n: std::io::Result<usize> = {
            let _ = (file, offset);
            Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "positional reads are not available on this platform",
            ))
        };
        match n {
            Ok(0) => break,
            Ok(k) => done += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Writes all of `buf` into `file` at byte `offset` (a positional write: no shared
/// cursor, so threads can write the parts of one file at once).
pub(crate) fn write_all_at(file: &File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let at = offset + done as u64;
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::write_at(file, &buf[done..], at);
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_write(file, &buf[done..], at);
        #[cfg(not(any(unix, windows)))]
        let n: std::io::Result<usize> = {
            let _ = (file, at);
            Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "positional writes are not available on this platform",
            ))
        };
        match n {
            Ok(0) => return Err(std::io::Error::from(std::io::ErrorKind::WriteZero)),
            Ok(k) => done += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
