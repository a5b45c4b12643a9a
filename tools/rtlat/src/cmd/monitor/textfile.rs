// SPDX-License-Identifier: GPL-2.0

//! `rtlat monitor --textfile DIR`: DIR/rtlat.prom for node_exporter's
//! textfile collector, in Prometheus' classic text format, written to a
//! temporary file (a name the collector ignores) and renamed over it, so a
//! scrape never reads half of it.

use std::{
    fs,
    path::{Path, PathBuf},
};

use crate::files::Output;

/// The file the collector reads.
pub const NAME: &str = "rtlat.prom";

/// Checks that `dir` is a directory.
pub fn check(dir: &Path) -> Result<(), String> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(format!("--textfile {}: not a directory", dir.display())),
        Err(e) => Err(format!("--textfile {}: {e}", dir.display())),
    }
}

/// Writes `text` to `dir`/[`NAME`] (an [`Output`]: a hidden temporary file
/// renamed over it, removed on a failure); the path written.
pub fn write(dir: &Path, text: &str) -> Result<PathBuf, String> {
    let dest = dir.join(NAME);
    Output::create(&dest)
        .and_then(|o| o.write(text.as_bytes()))
        .map_err(|e| format!("--textfile {e}"))?;
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_whole_by_rename() {
        let d = std::env::temp_dir().join(format!("rtlat-textfile-{}", std::process::id()));
        fs::create_dir_all(&d).unwrap();
        check(&d).unwrap();
        let p = write(&d, "a 1\n").unwrap();
        let p2 = write(&d, "a 2\n").unwrap();
        assert_eq!(p, p2);
        assert_eq!(fs::read_to_string(&p).unwrap(), "a 2\n");
        // Nothing else left in the directory.
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        assert!(check(&p).unwrap_err().ends_with("not a directory"));
        fs::remove_dir_all(&d).unwrap();
    }
}
