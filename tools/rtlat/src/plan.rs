// SPDX-License-Identifier: GPL-2.0

//! The plan of a measuring command, built from its options and checked
//! before anything is opened: the device, the CPUs and stages, the session
//! settings (`uapi::Config`), the sessions to run one after the other (a
//! warm-up, then the measured one) and for how long, and the outputs. The
//! lifecycle ([`crate::lifecycle`]) carries it out.

use std::{fmt, path::PathBuf, time::Duration};

use rtcore::uapi::{self, Config, Stage};

use crate::{
    cli::{self, Common, Threshold},
    exit,
    gate::Gates,
    output::Unit,
    raw, report, sysinfo,
};

/// One session of a run on the device.
#[derive(Debug, PartialEq)]
pub struct Phase {
    pub config: Config,
    /// How long it runs; `None`: until Ctrl-C.
    pub duration: Option<Duration>,
    /// The warm-up: its records and statistics are discarded.
    pub warm_up: bool,
}

/// The sessions of a run: with a warm-up, first a session of its own for
/// `warm_up` (see [`warm_up_config`]), then the measured one with `config`
/// for `duration`. The measured session is configured anew, so its
/// statistics, ring counters, missed periods, records and time line cover
/// only the measured part.
#[derive(Debug, PartialEq)]
pub struct Phases {
    pub warm_up: Option<Phase>,
    pub measured: Phase,
}

impl Phases {
    pub fn new(config: &Config, warm_up: Duration, duration: Option<Duration>) -> Self {
        let warm = (!warm_up.is_zero()).then(|| Phase {
            config: warm_up_config(config),
            duration: Some(warm_up),
            warm_up: true,
        });
        let measured = Phase {
            config: *config,
            duration,
            warm_up: false,
        };
        Self {
            warm_up: warm,
            measured,
        }
    }

    /// The session configured first.
    pub fn first(&self) -> &Phase {
        self.warm_up.as_ref().unwrap_or(&self.measured)
    }
}

/// The warm-up session's settings: those of the run, without thresholds
/// (a latency there is not a result, so it must not stop the run),
/// without `tracing_off` and without blame.
fn warm_up_config(config: &Config) -> Config {
    Config {
        threshold_ns: [0; uapi::NR_STAGES],
        flags: config.flags & !(uapi::CFG_TRACING_OFF | uapi::CFG_BLAME),
        blame_us: 0,
        ..*config
    }
}

/// Why a plan was refused.
#[derive(Debug, PartialEq)]
pub enum Refusal {
    /// The command line itself (a bad value, options that do not fit
    /// together): a usage error, exit 2.
    Usage(String),
    /// The system it would run on (a CPU offline, or beyond the CPUs the
    /// tool supports): exit 1.
    Environment(String),
}

impl Refusal {
    /// The native tool's exit status.
    pub fn exit_status(&self) -> u8 {
        match self {
            Self::Usage(_) => exit::USAGE,
            Self::Environment(_) => exit::ERROR,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(e) | Self::Environment(e) => f.write_str(e),
        }
    }
}

/// What a measuring command will do.
pub struct Plan {
    /// Device node.
    pub device: PathBuf,
    /// The stages measured, in order: irq, then thread, then user.
    pub stages: Vec<Stage>,
    /// The last stage measured, the one cyclictest's line shows.
    pub main_stage: Stage,
    /// The user stage: a user thread per CPU blocks in the device.
    pub user: bool,
    /// The sessions and their settings.
    pub phases: Phases,
    /// Period in µs.
    pub period_us: u64,
    /// SCHED_FIFO priority of the measuring threads.
    pub priority: u32,
    /// The thresholds, as given (or the attached session's).
    pub thresholds: Vec<Threshold>,
    /// The user stage's deadline in ns (the attached session's; 0: none).
    pub deadline_ns: u64,
    /// Call `tracing_off()` when a threshold is exceeded.
    pub tracing_off: bool,
    /// Explain the activations whose thread latency is at least this many
    /// µs (`--blame`).
    pub blame_us: Option<u32>,
    /// `--trace`: the file a threshold trip's trace goes to, and the
    /// buffer per CPU in KiB.
    pub trace: Option<(PathBuf, u32)>,
    /// Hold /dev/cpu_dma_latency at this many µs during the run.
    pub dma_latency: Option<i32>,
    /// No live output.
    pub quiet: bool,
    /// Unit of the text output.
    pub unit: Unit,
    /// Where to write the JSON report.
    pub json: Option<PathBuf>,
    /// Where to write the SVG plot.
    pub svg: Option<PathBuf>,
    /// The run-to-end gates, evaluated on the final statistics.
    pub gates: Gates,
    /// Where to write every record of the measured session, and how.
    pub raw: Option<(PathBuf, raw::Format)>,
    /// Print a status line to stderr this often (instead of the live view).
    pub interval: Option<Duration>,
    /// `--housekeeping`: the CPUs of the tool's own threads.
    pub housekeeping: Option<Vec<u32>>,
    /// `--attach`: the session is another process's (see [`Plan::attach_to`]).
    pub attach: bool,
    /// `--cpus`: the CPUs to measure on, given to the device apart from the
    /// config (any number: `Device::configure`). Empty without it: the
    /// device picks its channels (every online CPU for /dev/rtlat, the
    /// device itself for /dev/rtedu<N>), and the status says which.
    pub cpus: Vec<u32>,
}

impl Plan {
    /// Checks the options `c` against the `online` CPUs (`online_list` as the
    /// system writes it) and builds the plan.
    pub fn new(c: &Common, online: &[u32], online_list: &str) -> Result<Self, Refusal> {
        use Refusal::{Environment, Usage};
        // (Every CPU online, when none is named: checked no further.)
        let cpus = match &c.cpus {
            Some(list) => sysinfo::parse_cpu_list(list).map_err(Usage)?,
            None => online.to_vec(),
        };
        if cpus.is_empty() {
            return Err(Usage("no CPU to measure on".into()));
        }
        if c.cpus.is_some() {
            for cpu in &cpus {
                if !online.contains(cpu) {
                    return Err(Environment(format!(
                        "CPU {cpu} is not online (online: {online_list})"
                    )));
                }
            }
        }
        let mut stages = vec![Stage::Irq];
        for s in &c.stages {
            let i = cli::parse_stage(s).map_err(Usage)?;
            if !stages.contains(&i) {
                stages.push(i);
            }
        }
        let user = c.user || stages.contains(&Stage::User);
        if user && !stages.contains(&Stage::Thread) {
            return Err(Usage(
                "the user stage needs the thread stage (--stages irq,thread,user)".into(),
            ));
        }
        if user && !stages.contains(&Stage::User) {
            stages.push(Stage::User);
        }
        stages.sort_unstable();
        let main_stage = *stages.last().unwrap_or(&Stage::Irq);
        for t in &c.thresholds {
            if t.stage == Stage::User && !user {
                return Err(Usage("a user threshold needs --user".into()));
            }
            if t.stage == Stage::Thread && !stages.contains(&Stage::Thread) {
                return Err(Usage("a thread threshold needs the thread stage".into()));
            }
        }

        let housekeeping = match &c.ci.housekeeping {
            Some(list) => {
                let hk = sysinfo::parse_cpu_list(list).map_err(Usage)?;
                if hk.is_empty() {
                    return Err(Usage("--housekeeping: no CPU".into()));
                }
                if let Some(cpu) = hk.iter().find(|c| !online.contains(c)) {
                    return Err(Environment(format!(
                        "--housekeeping: CPU {cpu} is not online (online: {online_list})"
                    )));
                }
                Some(hk)
            }
            None => None,
        };
        let gates = c.ci.gates();
        // (An attached run's gates are checked against the session's
        // stages once it is known: Plan::attach_to.)
        if !c.attach {
            gates.check(&stages, user).map_err(Usage)?;
        }

        let mut config = Config {
            period_ns: c.period * 1000,
            priority: c.priority,
            // (0: the kernel's default, which fits its budget.)
            ring_records: c.ring.unwrap_or(0),
            ..Default::default()
        };
        config.stages = stages.iter().map(|s| s.bit()).sum();
        for t in &c.thresholds {
            config.threshold_ns[t.stage] = t.ns;
        }
        if c.tracing_off {
            config.flags |= uapi::CFG_TRACING_OFF;
        }
        if let Some(us) = c.blame {
            if !stages.contains(&Stage::Thread) {
                return Err(Usage(
                    "--blame explains the thread latency: it needs the thread stage".into(),
                ));
            }
            config.flags |= uapi::CFG_BLAME;
            config.blame_us = us;
        }
        config
            .validate()
            .map_err(|e| Usage(format!("invalid settings: {e:?}")))?;

        Ok(Self {
            device: c.device.clone(),
            main_stage,
            user,
            phases: Phases::new(&config, c.warm_up, c.duration),
            stages,
            period_us: c.period,
            priority: c.priority,
            thresholds: c.thresholds.clone(),
            deadline_ns: 0,
            tracing_off: c.tracing_off,
            blame_us: c.blame,
            trace: c.trace.clone().map(|p| (p, c.trace_buffer_size)),
            dma_latency: c.dma_latency,
            quiet: c.quiet,
            unit: Unit { ns: c.ns },
            json: c.json.clone(),
            svg: c.svg.clone(),
            gates,
            raw: c.ci.raw.clone().map(|p| (p, c.ci.raw_format)),
            interval: c.ci.interval,
            housekeeping,
            attach: c.attach,
            cpus: if c.cpus.is_some() { cpus } else { Vec::new() },
        })
    }

    /// `--attach`: the running session another process owns, measured as
    /// it is (`session`: its settings as the device reports them); the
    /// tool starts no user thread of its own. The report gives the
    /// session's period, stages, priority, thresholds and deadline. A
    /// `--fail-if` on a stage the session does not measure is refused.
    pub fn attach_to(&mut self, session: &Config) -> Result<(), String> {
        self.stages = Stage::ALL
            .into_iter()
            .filter(|&s| s != Stage::Response && session.stages & s.bit() != 0)
            .collect();
        self.main_stage = *self.stages.last().unwrap_or(&Stage::Irq);
        self.period_us = session.period_ns / 1000;
        self.user = false;
        // (A module older than the tool does not say: the tool's default.)
        if session.priority != 0 {
            self.priority = session.priority;
        }
        self.thresholds = Stage::ALL
            .into_iter()
            .filter(|&s| session.threshold_ns[s] != 0)
            .map(|stage| Threshold {
                stage,
                ns: session.threshold_ns[stage],
            })
            .collect();
        self.deadline_ns = session.deadline_ns;
        let config = Config {
            period_ns: session.period_ns,
            stages: session.stages,
            ..Default::default()
        };
        self.phases = Phases::new(&config, Duration::ZERO, self.phases.measured.duration);
        match self
            .gates
            .unmeasured(&self.stages, self.stages.contains(&Stage::User))
        {
            None => Ok(()),
            Some(g) => Err(format!(
                "--fail-if '{g}': the session attached to does not measure the {} stage",
                g.stage.name()
            )),
        }
    }

    /// The stages whose statistics are collected at the end: those measured,
    /// and the response time with the user stage.
    pub fn reported_stages(&self) -> Vec<Stage> {
        let mut all = self.stages.clone();
        if self.stages.contains(&Stage::User) {
            all.push(Stage::Response);
        }
        all
    }

    /// The report's account of what was asked; `cpus` are those the
    /// device sampled.
    pub fn settings(&self, cpus: &[u32]) -> report::Settings {
        report::Settings {
            period_us: self.period_us as f64,
            cpus: cpus.to_vec(),
            stages: self.stages.iter().map(|s| s.name().to_string()).collect(),
            priority: self.priority,
            thresholds_us: self
                .thresholds
                .iter()
                .map(|t| (t.stage.name().to_string(), t.ns as f64 / 1000.0))
                .collect(),
            duration_s: self.phases.measured.duration.map(|d| d.as_secs_f64()),
            warm_up_s: self
                .phases
                .warm_up
                .as_ref()
                .and_then(|w| w.duration)
                .map_or(0.0, |d| d.as_secs_f64()),
            user_threads: self.user,
            deadline_us: (self.deadline_ns != 0).then_some(self.deadline_ns as f64 / 1000.0),
            dma_latency_us: self.dma_latency,
            tracing_off: self.tracing_off,
            blame_us: self.blame_us,
            trace: self.trace.as_ref().map(|(p, _)| p.display().to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Cmd};

    fn armed() -> Config {
        let mut c = Config {
            period_ns: 200_000,
            priority: 90,
            ring_records: 1024,
            stages: Stage::Irq.bit() | Stage::Thread.bit() | Stage::User.bit(),
            flags: uapi::CFG_TRACING_OFF,
            ..Default::default()
        };
        c.threshold_ns[Stage::Thread] = 50_000;
        c.threshold_ns[Stage::User] = 80_000;
        c
    }

    #[test]
    fn without_warm_up_one_measured_session() {
        let d = Some(Duration::from_secs(10));
        let phases = Phases::new(&armed(), Duration::ZERO, d);
        assert!(phases.warm_up.is_none());
        assert_eq!(
            phases.measured,
            Phase {
                config: armed(),
                duration: d,
                warm_up: false
            }
        );
        assert_eq!(phases.first(), &phases.measured);
    }

    #[test]
    fn warm_up_is_a_session_of_its_own_without_thresholds() {
        let d = Some(Duration::from_secs(10));
        let phases = Phases::new(&armed(), Duration::from_secs(3), d);
        assert_eq!(phases.first(), phases.warm_up.as_ref().unwrap());
        let Phases { warm_up, measured } = phases;
        let warm = warm_up.expect("a warm-up session");
        assert!(warm.warm_up);
        assert_eq!(warm.duration, Some(Duration::from_secs(3)));
        // Nothing armed: no threshold, no tracing_off ...
        assert_eq!(warm.config.threshold_ns, [0; uapi::NR_STAGES]);
        assert_eq!(warm.config.flags & uapi::CFG_TRACING_OFF, 0);
        assert_eq!(warm.config.validate(), Ok(()));
        // ... and otherwise what is measured.
        let a = armed();
        assert_eq!(
            Config {
                threshold_ns: a.threshold_ns,
                flags: a.flags,
                ..warm.config
            },
            a
        );
        // The measured session: the settings as asked, for the whole --duration.
        assert_eq!(
            measured,
            Phase {
                config: a,
                duration: d,
                warm_up: false
            }
        );
    }

    /// The plan of `rtlat run ARGS` on a system with CPUs 0-3 online.
    fn plan(args: &str) -> Result<Plan, Refusal> {
        let argv = ["rtlat", "run"].into_iter().chain(args.split_whitespace());
        let Cmd::Run(c) = Cli::try_parse_from(argv).unwrap().cmd else {
            unreachable!()
        };
        Plan::new(&c, &[0, 1, 2, 3], "0-3")
    }

    /// The default session (no `--cpus`, no `--ring`) of `rtlat run` and
    /// `rtlat monitor` on machines of more than 256 online CPUs, sized as
    /// the kernel sizes it: the config the tool sends, decoded, over every
    /// online CPU (the device's choice). Its rings fit the kernel's budget,
    /// shrunk no further than they must.
    #[test]
    fn the_default_session_fits_the_ring_budget_past_256_cpus() {
        for (n, ring) in [(257u32, 2048u32), (1024, 1024), (4096, 256), (8192, 128)] {
            let online: Vec<u32> = (0..n).collect();
            let list = format!("0-{}", n - 1);
            let commons = [
                match Cli::try_parse_from(["rtlat", "run"]).unwrap().cmd {
                    Cmd::Run(c) => c,
                    _ => unreachable!(),
                },
                match Cli::try_parse_from(["rtlat", "monitor"]).unwrap().cmd {
                    Cmd::Monitor(a) => a.common(),
                    _ => unreachable!(),
                },
            ];
            for c in &commons {
                let p = Plan::new(c, &online, &list).unwrap();
                assert!(p.cpus.is_empty(), "{n} CPUs: the device picks them");
                let mut b = [0u8; uapi::CONFIG_SIZE];
                p.phases.measured.config.encode(&mut b);
                let config = Config::decode(&b).unwrap();
                let mut chans = 0usize;
                config
                    .session_cpus(&[], n, |_| true, |_| chans += 1)
                    .unwrap();
                assert_eq!(chans, n as usize);
                let got = config.ring_records_for(chans);
                assert_eq!(got, Some(ring), "{n} CPUs");
                let total = |r: u32| chans as u64 * u64::from(r) * uapi::RECORD_SIZE as u64;
                assert!(total(ring) <= uapi::RING_TOTAL_MAX_BYTES, "{n} CPUs");
                assert!(total(2 * ring) > uapi::RING_TOTAL_MAX_BYTES, "{n} CPUs");
            }
        }
    }

    #[test]
    fn attached_the_session_says_what_is_measured() {
        let mut p = plan("--attach -d 5s").unwrap();
        assert!(p.attach);
        let bits = Stage::Irq.bit() | Stage::Thread.bit() | Stage::User.bit();
        let mut session = Config {
            period_ns: 20_000_000,
            stages: bits,
            priority: 80,
            deadline_ns: 5_000_000,
            ..Default::default()
        };
        session.threshold_ns[Stage::User] = 2_000_000;
        p.attach_to(&session).unwrap();
        assert_eq!(p.stages, [Stage::Irq, Stage::Thread, Stage::User]);
        assert_eq!(p.main_stage, Stage::User);
        assert_eq!(p.reported_stages().last(), Some(&Stage::Response));
        assert_eq!(p.period_us, 20_000);
        // Its user stage is the application's: no thread of the tool's.
        assert!(!p.user);
        assert_eq!(p.phases.measured.duration, Some(Duration::from_secs(5)));
        assert!(p.phases.warm_up.is_none());
        // The report says what the session was set to.
        let s = p.settings(&[1]);
        assert_eq!((s.priority, s.deadline_us), (80, Some(5000.0)));
        assert_eq!(s.thresholds_us.get("user"), Some(&2000.0));
        assert_eq!(s.thresholds_us.len(), 1);
        p.attach_to(&Config {
            period_ns: 1_000_000,
            stages: Stage::Irq.bit(),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            (p.stages.as_slice(), p.main_stage),
            ([Stage::Irq].as_slice(), Stage::Irq)
        );
        assert_eq!(p.reported_stages(), [Stage::Irq]);
        assert_eq!(p.settings(&[1]).deadline_us, None);
        // A gate on a stage of the session's is taken; on one it does not
        // measure, refused once the session is known.
        let user = Config {
            period_ns: 1_000_000,
            stages: bits,
            ..Default::default()
        };
        let mut p = plan("--attach --fail-if response.p99>1ms").unwrap();
        p.attach_to(&user).unwrap();
        let mut p = plan("--attach --fail-if user.max>1ms").unwrap();
        let irq_only = Config {
            stages: Stage::Irq.bit(),
            ..user
        };
        let e = p.attach_to(&irq_only).unwrap_err();
        assert!(
            e.contains("'user.max>1ms'") && e.contains("does not measure the user stage"),
            "{e}"
        );
    }

    #[test]
    fn stages_and_settings_from_the_options() {
        let p = plan("--cpus 1,3 --user -p 200 -P 90 -T thread=50 -T user=80 --tracing-off --ring 1024 --warm-up 2")
            .unwrap();
        assert_eq!(p.stages, [Stage::Irq, Stage::Thread, Stage::User]);
        assert_eq!(p.main_stage, Stage::User);
        assert!(p.user);
        assert_eq!(
            p.reported_stages(),
            [Stage::Irq, Stage::Thread, Stage::User, Stage::Response]
        );
        assert_eq!(p.phases.measured.config, armed());
        assert_eq!(p.cpus, [1, 3]);
        assert_eq!(p.phases.measured.duration, None);
        assert!(p.phases.warm_up.is_some());
        let s = p.settings(&[1, 3]);
        assert_eq!(s.thresholds_us["user"], 80.0);
        assert_eq!(s.warm_up_s, 2.0);

        // Without --cpus, the device picks the CPUs; irq alone is irq-only.
        let p = plan("--stages irq").unwrap();
        assert_eq!(p.stages, [Stage::Irq]);
        assert_eq!(p.main_stage, Stage::Irq);
        assert!(p.cpus.is_empty());
        assert!(p.phases.warm_up.is_none());
    }

    #[test]
    fn refused_plans() {
        use Refusal::{Environment, Usage};
        let err = |args| plan(args).err().unwrap();
        let usage = |m: &str| Usage(m.to_string());
        let env = |m: &str| Environment(m.to_string());
        assert_eq!(err("--cpus 7"), env("CPU 7 is not online (online: 0-3)"));
        assert_eq!(err("--cpus 3-1"), usage("bad CPU range '3-1'"));
        assert_eq!(err("--cpus ,"), usage("no CPU to measure on"));
        assert!(matches!(err("--cpus abc"), Usage(_)));
        assert_eq!(
            err("--stages foo"),
            usage("unknown stage 'foo' (irq, thread, user)")
        );
        let needs_thread =
            usage("the user stage needs the thread stage (--stages irq,thread,user)");
        assert_eq!(err("--stages irq --user"), needs_thread);
        assert_eq!(err("--stages user"), needs_thread);
        assert_eq!(err("-T user=5"), usage("a user threshold needs --user"));
        assert_eq!(
            err("--stages irq -T thread=5"),
            usage("a thread threshold needs the thread stage")
        );
        // A ring the kernel would refuse is refused by the parser, in words.
        let Err(ring) = Cli::try_parse_from(["rtlat", "run", "--ring", "3"]) else {
            panic!("--ring 3 parsed");
        };
        assert!(
            ring.to_string()
                .contains("'3' records: a power of two from 1 to 1048576"),
            "{ring}"
        );
        assert_eq!(
            err("--housekeeping 2,9"),
            env("--housekeeping: CPU 9 is not online (online: 0-3)")
        );
        assert!(matches!(err("--housekeeping="), Usage(_)));
        assert_eq!(
            plan("--housekeeping 2-3").unwrap().housekeeping,
            Some(vec![2, 3])
        );
        assert_eq!(
            err("--fail-if response.p99>1ms"),
            usage("--fail-if 'response.p99>1ms': the response stage is not measured (--user)")
        );
        assert_eq!(
            err("--fail-if user.max>10us"),
            usage("--fail-if 'user.max>10us': the user stage is not measured (--user)")
        );
        assert_eq!(
            err("--stages irq --fail-if thread.max>1ms"),
            usage("--fail-if 'thread.max>1ms': the thread stage is not measured")
        );
        assert_eq!((usage("").exit_status(), env("").exit_status()), (2, 1));
    }
}
