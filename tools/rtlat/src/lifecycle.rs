// SPDX-License-Identifier: GPL-2.0

//! The run of a measuring command, the same for every mode: check the
//! options against the system (the plan), hold the CPU DMA latency if asked,
//! open and configure the device, run the warm-up and the measured session,
//! collect the final statistics, write the JSON and SVG, print the mode's
//! summary. The exit status says whether a threshold was exceeded.

use std::process::ExitCode;

use rtcore::uapi;

use crate::{
    cli::Common,
    collect::{self, Outcome},
    device::Device,
    files,
    mode::Mode,
    plan::Plan,
    sched,
    session::Run,
    signals, sysinfo,
};

/// Runs the measuring command of options `c` in `mode`.
pub fn run(c: &Common, mode: &dyn Mode) -> Result<ExitCode, String> {
    let info = sysinfo::collect();
    if !info.realtime {
        eprintln!(
            "rtlat: WARNING: '{}' is not a PREEMPT_RT kernel: the numbers do not show RT behaviour",
            info.version
        );
    }
    let plan = Plan::new(c, &sysinfo::online_cpus(), &info.online_cpus)?;

    // Only when asked: hold the CPU DMA latency (and report it either way).
    let _dma = plan
        .dma_latency
        .map(sysinfo::hold_cpu_dma_latency)
        .transpose()?;

    let dev = Device::open(&plan.device, false)?;
    dev.status()?;
    let phases = &plan.phases;
    dev.configure(&plan.device, &phases.first().config)?;
    let cpus: Vec<u32> = {
        let st = dev.status()?;
        (0..uapi::MAX_CPUS as u32)
            .filter(|&i| st.cpus[i as usize / 64] & (1 << (i % 64)) != 0)
            .collect()
    };
    if plan.user {
        sched::lock_memory();
    }
    signals::install();
    let run = Run {
        dev: &dev,
        cpus: &cpus,
        plan: &plan,
        mode,
    };
    if let Some(w) = &phases.warm_up {
        // Its records were read and are dropped here, with its statistics.
        match run.session(w)?.reason {
            "duration" => {}
            "interrupted" => return Err("interrupted during the warm-up: nothing measured".into()),
            _ => return Err("the session stopped during the warm-up: nothing measured".into()),
        }
        // The owner reconfigures its stopped session: a new one, with fresh
        // statistics and ring counters, and the thresholds armed.
        dev.configure(&plan.device, &phases.measured.config)?;
    }
    let ended = run.session(&phases.measured)?;
    let outcome = collect::collect(&dev, &cpus, &plan, &info, ended)?;
    files::write_json(&outcome)?;
    files::write_svg(&outcome, &info)?;
    mode.write_files(&outcome)?;
    let text = mode.on_end(&outcome);
    if let Some(code) = mode.peer_exit() {
        print!("{text}");
        return Ok(ExitCode::from(code));
    }
    Ok(finish(&outcome, text))
}

/// Prints the summary `text` and, if a threshold was exceeded, where; exit
/// status 2 then.
fn finish(o: &Outcome<'_>, text: String) -> ExitCode {
    print!("{text}");
    match &o.report.stop.trip {
        Some(t) => {
            println!(
                "rtlat: threshold exceeded on CPU {} ({} stage): {} ns at activation {}",
                t.cpu, t.stage, t.value_ns, t.seq
            );
            ExitCode::from(2)
        }
        None => ExitCode::SUCCESS,
    }
}
