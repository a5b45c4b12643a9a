// SPDX-License-Identifier: GPL-2.0

//! The run of a measuring command, the same for every mode: check the
//! options against the system (the plan), hold the CPU DMA latency if asked,
//! open and configure the device, run the warm-up and the measured session,
//! collect the final statistics, write the JSON and SVG, print the mode's
//! summary. The exit status says whether a threshold was exceeded (the
//! mode says what then).

use std::process::ExitCode;

use crate::{
    cli::Common,
    collect::{self, Outcome},
    device::Device,
    exit, files, gate,
    mode::Mode,
    plan::Plan,
    raw::RawWriter,
    report::{self, StopCause},
    sched,
    session::Run,
    signals, sysinfo,
    trace::TraceFile,
};

/// Runs the measuring command of options `c` in `mode`.
pub fn run(c: &Common, mode: &dyn Mode) -> Result<ExitCode, String> {
    use rtcore::uapi::State;

    let info = sysinfo::collect();
    if !info.realtime {
        eprintln!(
            "rtlat: WARNING: '{}' is not a PREEMPT_RT kernel: the numbers do not show RT behaviour",
            info.version
        );
    }
    let mut plan = match Plan::new(c, &sysinfo::online_cpus(), &info.online_cpus) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("rtlat: error: {e}");
            return Ok(ExitCode::from(mode.refused_exit(&e)));
        }
    };

    // Ctrl-C, SIGTERM and SIGHUP end the run from here on, cleanly: one
    // that comes while the session and the trace instance are set up
    // (which takes seconds on a loaded machine) ends the run as it starts,
    // rather than killing the tool with an instance left behind.
    signals::install();
    // The raw file exists before anything is measured, or the run is refused.
    let raw = plan
        .raw
        .as_ref()
        .map(|(path, format)| RawWriter::create(path, *format))
        .transpose()?;
    // So are the JSON and SVG, and the mode's own files.
    let outputs = files::Outputs::create(plan.json.as_deref(), plan.svg.as_deref())?;
    mode.open_files()?;
    let trace_file = plan
        .trace
        .as_ref()
        .map(|(path, kb)| TraceFile::create(path, *kb))
        .transpose()?;

    // Only when asked: hold the CPU DMA latency (and report it either way).
    let _dma = plan
        .dma_latency
        .map(sysinfo::hold_cpu_dma_latency)
        .transpose()?;

    let dev = Device::open(&plan.device, false)?;
    let status = dev.status()?;
    if plan.attach {
        // Another process's session, as it runs: nothing is configured.
        if State::from_raw(status.state) != Some(State::Running) {
            return Err(format!(
                "{}: no running session to attach to",
                plan.device.display()
            ));
        }
        dev.attach(&plan.device)?;
        plan.attach_to(&dev.session_settings()?)?;
    } else {
        dev.configure(&plan.device, &plan.phases.first().config, &plan.cpus)?;
    }
    let plan = plan;
    let phases = &plan.phases;
    let cpus = dev.session_cpus()?;
    if plan.user {
        sched::lock_memory();
    }
    // The tool's own threads (this one, the status loop, and the reader it
    // starts) keep off the measured CPUs; the user threads pin themselves.
    let online = sysinfo::online_cpus();
    let (hk_cpus, chosen) = sched::housekeeping(plan.housekeeping.as_deref(), &online, &cpus);
    if let Some(cpu) = hk_cpus.iter().find(|c| cpus.contains(c)) {
        if plan.housekeeping.is_some() {
            eprintln!("rtlat: WARNING: --housekeeping includes CPU {cpu}, which is measured");
        }
    }
    sched::pin_to_set(&hk_cpus)?;
    // --trace: the run's own instance, set up before any measuring.
    let trace = trace_file.map(|f| f.prepare(&cpus)).transpose()?;
    let mut housekeeping = report::Housekeeping {
        // As the kernel applied it.
        cpus: sysinfo::format_cpu_list(&sched::affinity()),
        chosen: chosen.into(),
        ..Default::default()
    };
    let run = Run {
        dev: &dev,
        cpus: &cpus,
        plan: &plan,
        mode,
    };
    if let Some(w) = &phases.warm_up {
        // Its records were read and are dropped here, with its statistics.
        let warm = run.session(w, None)?;
        match warm.reason {
            StopCause::Duration => {}
            StopCause::Interrupted => {
                return Err("interrupted during the warm-up: nothing measured".into())
            }
            StopCause::Threshold | StopCause::Error | StopCause::Ended | StopCause::Count => {
                let why = warm.error.unwrap_or_else(|| "the session stopped".into());
                return Err(format!("during the warm-up: {why}: nothing measured"));
            }
        }
        // The owner reconfigures its stopped session: a new one, with fresh
        // statistics and ring counters, and the thresholds armed.
        dev.configure(&plan.device, &phases.measured.config, &plan.cpus)?;
    }
    // --trace: from just before the measured session.
    if let Some(t) = &trace {
        if plan.thresholds.is_empty() {
            eprintln!(
                "rtlat: WARNING: --trace keeps the trace of a threshold trip, and there is no threshold (-T): none will be saved"
            );
        }
        t.begin()?;
    }
    let ended = run.session(&phases.measured, raw)?;
    let mut failed = Vec::new();
    match trace {
        Some(t) if matches!(ended.reason, StopCause::Threshold) => match t.save() {
            Ok(line) => eprintln!("rtlat: {line}"),
            Err(e) => failed.push(e),
        },
        Some(t) => {
            drop(t);
            eprintln!("rtlat: trace: no threshold trip, none saved");
        }
        None => {}
    }
    housekeeping.reader_ran_on =
        sysinfo::format_cpu_list(&Vec::from_iter(ended.reader_ran_on.iter().copied()));
    housekeeping.status_ran_on =
        sysinfo::format_cpu_list(&Vec::from_iter(ended.status_ran_on.iter().copied()));
    let mut outcome = collect::collect(&dev, &cpus, &plan, &info, ended)?;
    outcome.report.housekeeping = Some(housekeeping);
    let peer = mode.peer_exit(outcome.report.stop.reason);
    let (code, trip_line) = verdict(&outcome, mode);
    // A file that cannot be written at the end loses only itself: the
    // others, the summary and the gates still come, and the run exits with
    // the worse of its status and 1.
    failed.extend(files::write_svg(&outcome.plotted(), &info, outputs.svg).err());
    let worst = |code: u8, failed: &[String]| {
        if failed.is_empty() {
            code
        } else {
            code.max(exit::ERROR)
        }
    };
    // The files say the status the run exits with: it is known before
    // they are written (one that fails is not written).
    outcome.report.exit_code = Some(worst(code, &failed));
    failed.extend(mode.write_files(&outcome).err());
    outcome.report.exit_code = Some(worst(code, &failed));
    failed.extend(files::write_json(&outcome.report, outputs.json).err());
    let text = mode.on_end(&outcome);
    if peer.is_some() {
        // The mode reports the run, a trip included, its peer's way; the
        // gates are the tool's.
        print!("{text}");
        eprint!("{}", gate_lines(&outcome));
        if let Some(e) = &outcome.error {
            eprintln!("rtlat: error: {e}");
        }
        for e in &failed {
            eprintln!("rtlat: error: {e}");
        }
        return Ok(ExitCode::from(worst(code, &failed)));
    }
    finish(&outcome, text, trip_line);
    for e in &failed {
        eprintln!("rtlat: error: {e}");
    }
    Ok(ExitCode::from(worst(code, &failed)))
}

/// The exit status of the run `o` in `mode`, and the line the tool prints
/// after the mode's text if a threshold stopped it (none where the mode
/// has a peer status). The mode says how a trip reads and what it exits
/// with (rtla's 2 for the timerlat front end, 3 for the native tool).
pub(crate) fn verdict(o: &Outcome<'_>, mode: &dyn Mode) -> (u8, Option<String>) {
    let trip = o.report.stop.trip.as_ref().map(|t| mode.on_trip(t));
    let peer = mode.peer_exit(o.report.stop.reason);
    let code = exit_status(
        peer,
        trip.as_ref().map(|(_, s)| *s),
        collect::exit_status(&o.report),
        o.report.gates.iter().any(|g| !g.passed),
    );
    // (A mode with a peer status reports a trip in its own text.)
    (code, trip.filter(|_| peer.is_none()).map(|(line, _)| line))
}

/// The gates' lines, for stderr.
pub(crate) fn gate_lines(o: &Outcome<'_>) -> String {
    gate::summary(&o.report.gates, o.plan.unit.ns)
}

/// The exit status of a run: the mode's `peer` status where it has one
/// (it reports a trip its peer's way), else the `tool`'s status from the
/// report, a trip's as the mode says (`trip`). A peer's 0 would hide a
/// failed gate (`gate_failed`): the gate's status then.
fn exit_status(peer: Option<u8>, trip: Option<u8>, tool: u8, gate_failed: bool) -> u8 {
    match (peer, trip, tool) {
        (Some(exit::OK), _, _) if gate_failed => exit::GATE,
        (Some(code), _, _) => code,
        (None, Some(code), exit::THRESHOLD) => code,
        (None, _, code) => code,
    }
}

/// Prints the summary `text`, where a threshold was exceeded the mode's
/// `trip_line`, the missed periods and dropped records (never silent: on
/// stderr), and the gates.
fn finish(o: &Outcome<'_>, text: String, trip_line: Option<String>) {
    print!("{text}");
    if let Some(line) = trip_line {
        print!("{line}");
    }
    let r = &o.report;
    if let Some(us) = o.plan.blame_us {
        for c in &r.cpus {
            if let Some(b) = &c.blame {
                print!("{}", crate::blame::text(c.cpu, b, us, o.plan.unit));
            }
        }
    }
    if r.totals.missed > 0 || r.totals.dropped > 0 || o.plan.gates.any() {
        eprintln!(
            "rtlat: {} missed periods, {} dropped records",
            r.totals.missed, r.totals.dropped
        );
    }
    eprint!("{}", gate_lines(o));
    if let Some(e) = r.raw.as_ref().and_then(|raw| raw.error.as_ref()) {
        eprintln!("rtlat: error: raw records: {e}");
    }
    if let Some(e) = &o.error {
        eprintln!("rtlat: error: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_the_files_say_is_the_one_the_tool_exits_with() {
        // rtlat cyclictest: cyclictest's 0 after a -b break (not the
        // tool's 3), 1 for a run cut short.
        assert_eq!(exit_status(Some(0), Some(3), exit::THRESHOLD, false), 0);
        assert_eq!(exit_status(Some(1), None, exit::ERROR, false), 1);
        // A failed gate is never the peer's 0, after a break or not; the
        // peer's 1 stays.
        assert_eq!(exit_status(Some(0), Some(3), exit::THRESHOLD, true), 4);
        assert_eq!(exit_status(Some(0), None, exit::GATE, true), 4);
        assert_eq!(exit_status(Some(1), None, exit::ERROR, true), 1);
        // The timerlat front end's trip is rtla's 2; the tool's own else.
        assert_eq!(exit_status(None, Some(2), exit::THRESHOLD, true), 2);
        assert_eq!(exit_status(None, Some(2), exit::ERROR, false), 1);
        assert_eq!(exit_status(None, None, exit::GATE, true), 4);
        assert_eq!(exit_status(None, None, exit::OK, false), 0);
    }
}
