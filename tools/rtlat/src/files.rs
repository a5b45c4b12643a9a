// SPDX-License-Identifier: GPL-2.0

//! The files a run writes when asked: the JSON report (`--json`) and the SVG
//! plot (`--svg`), the histogram of every CPU and stage and the main stage's
//! worst latency per time slot, and with `--blame` what made each CPU late.
//!
//! An output file is created before anything is measured ([`Output`]): a
//! path that cannot be written refuses the run at once, not at its end.

use std::{
    fs::{self, File},
    path::{Path, PathBuf},
};

use rtcore::uapi::Stage;

use crate::{
    blame::{Part, Worst},
    device::StageStats,
    plot,
    report::{CpuReport, Report},
    stream::{Stream, POINT_PPM},
    sysinfo::SysInfo,
};

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

/// What the SVG plot shows of a run.
pub struct Plotted<'a> {
    /// Per CPU, then per stage reported: the statistics and histogram.
    pub stats: &'a [StageStats],
    /// What the reader collected: the timelines of the main stage.
    pub stream: &'a Stream,
    /// The stage of the timelines.
    pub main_stage: Stage,
    pub period_us: u64,
    /// The report's CPUs, whose blame is drawn if `blame`.
    pub cpus: &'a [CpuReport],
    pub blame: bool,
}

/// Writes the JSON report to `out`, if asked.
pub fn write_json(report: &Report, out: Option<Output>) -> Result<(), String> {
    if let Some(out) = out {
        let s = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
        out.write((s + "\n").as_bytes())?;
    }
    Ok(())
}

/// Writes the SVG plot to `out`, if asked; its title names the system of
/// `info`.
pub fn write_svg(o: &Plotted<'_>, info: &SysInfo, out: Option<Output>) -> Result<(), String> {
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
        let stage = o.main_stage.name();
        times.push(series(format!("cpu{cpu} {stage} max"), |p| p.1));
        times.push(series(
            format!("cpu{cpu} {stage} p{}", f64::from(POINT_PPM) / 1e4),
            |p| p.2,
        ));
    }
    let blame = if o.blame {
        blame_panels(o.cpus)
    } else {
        plot::BlamePanels::default()
    };
    let title = format!(
        "rtlat on {} ({}), period {} µs",
        info.release, info.machine, o.period_us
    );
    let tmp = out.tmp().to_string_lossy();
    // The error names the file asked for, not the temporary one.
    plot::write_svg_with_blame(&tmp, &title, &hists, &times, &blame)
        .map_err(|e| e.replacen(&*tmp, &out.path.to_string_lossy(), 1))?;
    out.commit()
}

/// The sources a CPU's bar of late time names, most first; the others are
/// one segment.
const SHARE_SOURCES: usize = 5;

/// The worst activations the SVG shows, of all CPUs.
const WORST_BARS: usize = 8;

/// The blame panels of `cpus`: the worst activations of them all (the
/// CPUs' kept ones, at most [`WORST_BARS`]), each a bar of its parts, the
/// interrupt's then the thread's as the analysis lists them; and each
/// CPU's top sources' shares of its late time.
fn blame_panels(cpus: &[CpuReport]) -> plot::BlamePanels {
    let us = |source: String, ns: u64| plot::Segment {
        source,
        value: ns as f64 / 1000.0,
    };
    let parts = |parts: &[Part], other_ns: u64| {
        parts
            .iter()
            .map(|p| us(p.source.label(), p.ns))
            .chain((other_ns > 0).then(|| us(plot::OTHERS.into(), other_ns)))
            .collect::<Vec<_>>()
    };
    let mut worst: Vec<(u32, &Worst)> = cpus
        .iter()
        .filter_map(|c| Some((c.cpu, c.blame.as_ref()?)))
        .flat_map(|(cpu, b)| b.worst.iter().chain(&b.next_worst).map(move |w| (cpu, w)))
        .collect();
    // (Stable: a CPU's own order stays.)
    worst.sort_by_key(|(_, w)| std::cmp::Reverse(w.thread_ns));
    let worst = worst
        .into_iter()
        .take(WORST_BARS)
        .map(|(cpu, w)| {
            let mut segments = parts(&w.irq, w.irq_other_ns);
            let irq_parts = segments.len();
            segments.extend(parts(&w.thread, w.thread_other_ns));
            plot::Bar {
                name: format!("cpu{cpu} #{}", w.seq),
                segments,
                irq_parts,
            }
        })
        .collect();
    let shares = cpus
        .iter()
        .filter_map(|c| Some((c.cpu, c.blame.as_ref()?)))
        .filter(|(_, b)| !b.culprits.is_empty())
        .map(|(cpu, b)| {
            let share = |source: String, ns: u64| plot::Segment {
                source,
                value: 100.0 * ns as f64 / b.late_ns.max(1) as f64,
            };
            let mut segments: Vec<plot::Segment> = b
                .culprits
                .iter()
                .take(SHARE_SOURCES)
                .map(|c| share(c.source.label(), c.ns))
                .collect();
            let rest = b.other_ns
                + b.culprits
                    .iter()
                    .skip(SHARE_SOURCES)
                    .map(|c| c.ns)
                    .sum::<u64>();
            if rest > 0 {
                segments.push(share(plot::OTHERS.into(), rest));
            }
            plot::Bar {
                name: format!("cpu{cpu}"),
                segments,
                irq_parts: 0,
            }
        })
        .collect();
    plot::BlamePanels { worst, shares }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect;

    /// The SVG of a run of `rtlat run ARGS` whose report is the sample's,
    /// with the blame of `blame::tests::sample()` on CPU 0.
    fn svg(args: &[&str]) -> String {
        let plan = collect::tests::plan(args, &[0, 1, 2, 3]);
        let o = collect::tests::outcome(&plan);
        let dir =
            std::env::temp_dir().join(format!("rtlat-svg-{}-{}", std::process::id(), args.len()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.svg");
        let out = Output::create(&path).unwrap();
        write_svg(&o.plotted(), &crate::sysinfo::collect(), Some(out)).unwrap();
        let s = fs::read_to_string(&path).unwrap();
        let _ = fs::remove_dir_all(&dir);
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        s
    }

    #[test]
    fn the_svg_has_the_blame_panels_with_blame() {
        let s = svg(&["--blame"]);
        assert!(s.contains("Worst activations: what ran"), "the breakdown");
        assert!(s.contains("Late time per CPU, by source"), "the shares");
        // The legend names every source, each once, with its colour; the
        // worst's IRQ part of noise/1 and its thread part are the same
        // colour, and so is its share; the next worst, hog's, the same.
        let b = crate::blame::tests::sample();
        let texts: Vec<&str> = s
            .split("</text>")
            .filter_map(|t| Some(t.rsplit_once('>')?.1.trim()))
            .collect();
        for c in &b.culprits {
            let label = c.source.label();
            let n = texts.iter().filter(|&&t| t == label).count();
            assert_eq!(n, 1, "{label} in the legend once");
        }
        // (The SVG backend writes a rectangle's colour as its fill.)
        let rects = |color: &str| {
            s.split("<rect")
                .skip(1)
                .filter(|r| r.split('>').next().unwrap().contains(color))
                .count()
        };
        // noise/1: its IRQ part, its thread part, its share, its swatch;
        // hog the same in the next worst.
        assert_eq!(rects("fill=\"#1F77B4\""), 4, "{s}");
        assert_eq!(rects("fill=\"#FF7F0E\""), 4);
        // virtio0: the same but for the thread part; rtlat/1 too.
        assert_eq!(rects("fill=\"#2CA02C\""), 3);
        assert_eq!(rects("fill=\"#D62728\""), 3);
        // The interrupts marked where the IRQ latencies end (0.6 and 0.1
        // µs), the bars' ends at the thread latencies (19.0 and 4.0 µs),
        // worst first.
        for t in [
            "interrupt at 0.6 µs",
            "interrupt at 0.1 µs",
            "19.0 µs",
            "4.0 µs",
        ] {
            assert!(texts.contains(&t), "{t}: {s}");
        }
        // The bars' names, the worst on top: its label's y the smaller.
        let y = |t: &str| -> f64 {
            let (tag, _) = s
                .split("</text>")
                .filter_map(|x| x.rsplit_once('>'))
                .find(|(_, text)| text.trim() == t)
                .unwrap();
            let at = tag.rfind(" y=\"").unwrap() + 4;
            tag[at..].split('"').next().unwrap().parse().unwrap()
        };
        assert!(y("cpu0 #9") < y("cpu0 #12"), "{s}");
        assert!(texts.contains(&"cpu0"), "the shares' bar");
    }

    #[test]
    fn the_svg_has_no_blame_panel_without_blame() {
        // The sample report has a blame: a run without --blame shows none.
        let s = svg(&[]);
        assert!(s.contains("Worst latency per interval"));
        assert!(!s.contains("Worst activations") && !s.contains("noise/1"));
        assert!(s.contains("height=\"900\""), "the two panels' height");
    }

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
