// SPDX-License-Identifier: GPL-2.0

//! `rtlat monitor --history FILE`: one JSON line per snapshot, appended
//! and flushed at once; before a line would take the file beyond its size,
//! FILE becomes FILE.1 (FILE.1 FILE.2, ..., the oldest beyond the count
//! kept removed) and a new FILE is started. SIGHUP reopens FILE, for a
//! rotation done by someone else (logrotate).

use std::{
    fs::{self, File, OpenOptions},
    io::Write,
    path::{Path, PathBuf},
};

/// The history file.
pub struct History {
    path: PathBuf,
    max_bytes: u64,
    keep: u32,
    file: File,
    size: u64,
}

fn open(path: &Path) -> Result<(File, u64), String> {
    let f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("--history {}: {e}", path.display()))?;
    let size = f
        .metadata()
        .map_err(|e| format!("--history {}: {e}", path.display()))?
        .len();
    Ok((f, size))
}

/// `path` with `.n` appended.
fn numbered(path: &Path, n: u32) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(format!(".{n}"));
    PathBuf::from(p)
}

impl History {
    /// Opens (or creates) `path` for appending.
    pub fn open(path: &Path, max_bytes: u64, keep: u32) -> Result<Self, String> {
        let (file, size) = open(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            max_bytes,
            keep,
            file,
            size,
        })
    }

    /// Reopens the file at its path (SIGHUP).
    pub fn reopen(&mut self) -> Result<(), String> {
        (self.file, self.size) = open(&self.path)?;
        Ok(())
    }

    /// Appends `line` and a newline, rotating first if needed.
    pub fn append(&mut self, line: &str) -> Result<(), String> {
        let len = line.len() as u64 + 1;
        if self.size > 0 && self.size + len > self.max_bytes {
            self.rotate()?;
        }
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        self.file
            .write_all(&buf)
            .map_err(|e| format!("--history {}: {e}", self.path.display()))?;
        self.size += len;
        Ok(())
    }

    fn rotate(&mut self) -> Result<(), String> {
        let err = |e: std::io::Error| format!("--history {}: rotate: {e}", self.path.display());
        if self.keep == 0 {
            fs::remove_file(&self.path).map_err(err)?;
        } else {
            for n in (1..self.keep).rev() {
                let from = numbered(&self.path, n);
                if from.exists() {
                    fs::rename(&from, numbered(&self.path, n + 1)).map_err(err)?;
                }
            }
            fs::rename(&self.path, numbered(&self.path, 1)).map_err(err)?;
        }
        (self.file, self.size) = open(&self.path)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rtlat-hist-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn rotates_by_size_and_keeps_n() {
        let d = tmp("rot");
        let p = d.join("h.jsonl");
        let mut h = History::open(&p, 100, 2).unwrap();
        let line = "x".repeat(39); // 40 bytes a line: two fit in 100.
        for _ in 0..9 {
            h.append(&line).unwrap();
        }
        // 9 lines: h.jsonl has the 9th; .1 the 7th and 8th; .2 the 5th
        // and 6th; the older ones are gone.
        let lines = |p: &Path| fs::read_to_string(p).unwrap().lines().count();
        assert_eq!(lines(&p), 1);
        assert_eq!(lines(&numbered(&p, 1)), 2);
        assert_eq!(lines(&numbered(&p, 2)), 2);
        assert!(!numbered(&p, 3).exists());
        for f in [p.clone(), numbered(&p, 1), numbered(&p, 2)] {
            assert!(fs::metadata(&f).unwrap().len() <= 100);
        }
        // A line longer than the size still goes somewhere, alone.
        h.append(&"y".repeat(500)).unwrap();
        assert_eq!(lines(&p), 1);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn reopen_follows_a_rename() {
        let d = tmp("hup");
        let p = d.join("h.jsonl");
        let mut h = History::open(&p, 1 << 20, 1).unwrap();
        h.append("{\"a\":1}").unwrap();
        fs::rename(&p, d.join("moved")).unwrap();
        h.append("{\"a\":2}").unwrap();
        h.reopen().unwrap();
        h.append("{\"a\":3}").unwrap();
        assert_eq!(
            fs::read_to_string(d.join("moved")).unwrap(),
            "{\"a\":1}\n{\"a\":2}\n"
        );
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":3}\n");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_unwritable_history_is_one_line() {
        let e = History::open(Path::new("/nonexistent/dir/h.jsonl"), 10, 1)
            .err()
            .unwrap();
        assert_eq!(
            e,
            "--history /nonexistent/dir/h.jsonl: No such file or directory (os error 2)"
        );
    }
}
