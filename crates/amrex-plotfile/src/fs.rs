//! File-system helpers of the reader and the writer: whole text files read and written
//! with errors that name the path, and the paths of a plotfile (a suffix on a VisMF
//! prefix; paths read from a file kept inside the plotfile directory).

use alloc::string::String;
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
