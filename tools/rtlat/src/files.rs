// SPDX-License-Identifier: GPL-2.0

//! The files a run writes when asked: the JSON report (`--json`) and the SVG
//! plot (`--svg`), the histogram of every CPU and stage and the main stage's
//! worst latency per time slot.
//!
//! An output file is created before anything is measured ([`Output`]): a
//! path that cannot be written refuses the run at once, not at its end.

use std::{
    fs::{self, File},
    path::{Path, PathBuf},
};

use crate::{collect::Outcome, plot, stream::POINT_PPM, sysinfo::SysInfo};

/// An output file of a run: created empty beside its target (a hidden
/// temporary file in the same directory) when the run starts, and renamed
/// onto the target once written at the end. Dropped unwritten, the
/// temporary file is removed and the target left as it was.
#[derive(Debug)]
pub struct Output {
    path: PathBuf,
    tmp: PathBuf,
}

impl Output {
    /// Creates the temporary file of `path`; an error names `path`.
    pub fn create(path: &Path) -> Result<Self, String> {
        let name = path
            .file_name()
            .filter(|_| !path.as_os_str().is_empty())
            .ok_or_else(|| format!("'{}': not a file name", path.display()))?;
        if path.is_dir() {
            return Err(format!("{}: Is a directory", path.display()));
        }
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        let tmp = dir.unwrap_or(Path::new(".")).join(format!(
            ".{}.rtlat-{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        File::create(&tmp).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Self {
            path: path.to_path_buf(),
            tmp,
        })
    }

    /// The temporary file, for a writer that takes a path.
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// Writes `bytes` to the file.
    pub fn write(self, bytes: &[u8]) -> Result<(), String> {
        fs::write(&self.tmp, bytes).map_err(|e| format!("{}: {e}", self.path.display()))?;
        self.commit()
    }

    /// Renames the temporary file, written, onto the target.
    pub fn commit(self) -> Result<(), String> {
        fs::rename(&self.tmp, &self.path).map_err(|e| format!("{}: {e}", self.path.display()))
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        // Gone once committed; otherwise not to be left behind.
        let _ = fs::remove_file(&self.tmp);
    }
}

/// The `--json` and `--svg` files of a run, created before it measures.
#[derive(Debug, Default)]
pub struct Outputs {
    pub json: Option<Output>,
    pub svg: Option<Output>,
}

impl Outputs {
    /// Creates the files `json` and `svg` name, if any.
    pub fn create(json: Option<&Path>, svg: Option<&Path>) -> Result<Self, String> {
        Ok(Self {
            json: json.map(Output::create).transpose()?,
            svg: svg.map(Output::create).transpose()?,
        })
    }
}

/// Writes the JSON report to `out`, if asked.
pub fn write_json(o: &Outcome<'_>, out: Option<Output>) -> Result<(), String> {
    if let Some(out) = out {
        let s = serde_json::to_string_pretty(&o.report).map_err(|e| e.to_string())?;
        out.write((s + "\n").as_bytes())?;
    }
    Ok(())
}

/// Writes the SVG plot to `out`, if asked; its title names the system of
/// `info`.
pub fn write_svg(o: &Outcome<'_>, info: &SysInfo, out: Option<Output>) -> Result<(), String> {
    let Some(out) = out else {
        return Ok(());
    };
    let hists: Vec<plot::HistSeries> = o
        .stats
        .iter()
        .filter(|x| x.stats.count > 0)
        .map(|x| {
            plot::HistSeries::from_buckets(format!("cpu{} {}", x.cpu, x.stage.name()), &x.buckets)
        })
        .collect();
    // Per CPU the worst latency of each time bucket and its percentile.
    let mut times: Vec<plot::TimeSeries> = Vec::new();
    for (cpu, tl) in &o.stream.timelines {
        let pts = tl.points();
        let series = |name: String, pick: fn(&(u64, u64, u64, u64)) -> u64| plot::TimeSeries {
            name,
            points: pts
                .iter()
                .map(|p| (p.0 as f64 / 1e9, pick(p) as f64 / 1000.0))
                .collect(),
        };
        let stage = o.plan.main_stage.name();
        times.push(series(format!("cpu{cpu} {stage} max"), |p| p.1));
        times.push(series(
            format!("cpu{cpu} {stage} p{}", f64::from(POINT_PPM) / 1e4),
            |p| p.2,
        ));
    }
    let title = format!(
        "rtlat on {} ({}), period {} µs",
        info.release, info.machine, o.plan.period_us
    );
    let tmp = out.tmp().to_string_lossy();
    // The error names the file asked for, not the temporary one.
    plot::write_svg(&tmp, &title, &hists, &times)
        .map_err(|e| e.replacen(&*tmp, &out.path.to_string_lossy(), 1))?;
    out.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_is_created_at_once_and_written_at_the_end() {
        let dir = std::env::temp_dir().join(format!("rtlat-output-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        for bad in ["", "/nonexistent/x.json"] {
            let e = Output::create(Path::new(bad)).unwrap_err();
            assert!(e.contains(bad) && e.lines().count() == 1, "{e}");
        }
        assert!(Output::create(&dir).unwrap_err().contains("Is a directory"));

        let target = dir.join("r.json");
        fs::write(&target, "old").unwrap();
        let out = Output::create(&target).unwrap();
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 2, "the file beside it");
        drop(out);
        assert_eq!(fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            1,
            "nothing left behind"
        );

        Output::create(&target).unwrap().write(b"new").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);

        // The directory went away during the run: an error naming the file.
        let sub = dir.join("sub");
        fs::create_dir_all(&sub).unwrap();
        let out = Output::create(&sub.join("x.svg")).unwrap();
        fs::remove_dir_all(&sub).unwrap();
        let e = out.write(b"x").unwrap_err();
        assert!(e.contains("x.svg"), "{e}");
        let _ = fs::remove_dir_all(&dir);
    }
}
