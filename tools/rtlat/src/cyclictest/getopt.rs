// SPDX-License-Identifier: GPL-2.0

//! cyclictest's options as glibc's `getopt_long` reads them with
//! cyclictest's option string and long options: short clusters,
//! `--name=value` and `--name value`, unambiguous prefixes of long names,
//! the optional arguments of `-a`, `-t`, `-A` and `--secaligned` taken
//! from the next word when it looks like one.

/// A command line `rtlat cyclictest` does not run, and why: one line, exit
/// status 2.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused(pub String);

pub(super) fn refuse<T>(msg: impl Into<String>) -> Result<T, Refused> {
    Err(Refused(msg.into()))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum HasArg {
    No,
    Required,
    Optional,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Opt {
    Affinity,
    Aligned,
    Breaktrace,
    Clock,
    DefaultSystem,
    Distance,
    Duration,
    Latency,
    Fifo,
    Histogram,
    Histofall,
    Histfile,
    Interval,
    Json,
    Laptop,
    Loops,
    MainAffinity,
    Mlockall,
    Refresh,
    Nsecs,
    Oscope,
    Priority,
    Quiet,
    Priospread,
    Relative,
    Resolution,
    Secaligned,
    System,
    Smi,
    Smp,
    Spike,
    SpikeNodes,
    Threads,
    Tracemark,
    Unbuffered,
    Verbose,
    DbgCyclictest,
    Policy,
    Help,
    PosixTimers,
    DeepestIdleState,
    FailIf,
}

use HasArg::{No, Optional, Required};

/// cyclictest's long options (rt-tests 2.10, a superset of the earlier 2.x),
/// and rtlat's gate, long only.
pub(super) const LONG: &[(&str, HasArg, Opt)] = &[
    ("affinity", Optional, Opt::Affinity),
    ("aligned", Optional, Opt::Aligned),
    ("breaktrace", Required, Opt::Breaktrace),
    ("clock", Required, Opt::Clock),
    ("default-system", No, Opt::DefaultSystem),
    ("distance", Required, Opt::Distance),
    ("duration", Required, Opt::Duration),
    ("latency", Required, Opt::Latency),
    ("fifo", Required, Opt::Fifo),
    ("histogram", Required, Opt::Histogram),
    ("histofall", Required, Opt::Histofall),
    ("histfile", Required, Opt::Histfile),
    ("interval", Required, Opt::Interval),
    ("json", Required, Opt::Json),
    ("laptop", No, Opt::Laptop),
    ("loops", Required, Opt::Loops),
    ("mainaffinity", Required, Opt::MainAffinity),
    ("mlockall", No, Opt::Mlockall),
    ("refresh_on_max", No, Opt::Refresh),
    ("nsecs", No, Opt::Nsecs),
    ("oscope", Required, Opt::Oscope),
    ("priority", Required, Opt::Priority),
    ("quiet", No, Opt::Quiet),
    ("priospread", No, Opt::Priospread),
    ("relative", No, Opt::Relative),
    ("resolution", No, Opt::Resolution),
    ("secaligned", Optional, Opt::Secaligned),
    ("system", No, Opt::System),
    ("smi", No, Opt::Smi),
    ("smp", No, Opt::Smp),
    ("spike", Required, Opt::Spike),
    ("spike-nodes", Required, Opt::SpikeNodes),
    ("threads", Optional, Opt::Threads),
    ("tracemark", No, Opt::Tracemark),
    ("unbuffered", No, Opt::Unbuffered),
    ("verbose", No, Opt::Verbose),
    ("dbg_cyclictest", No, Opt::DbgCyclictest),
    ("policy", Required, Opt::Policy),
    ("help", No, Opt::Help),
    ("posix_timers", No, Opt::PosixTimers),
    ("deepest-idle-state", Required, Opt::DeepestIdleState),
    ("fail-if", Required, Opt::FailIf),
];

/// cyclictest's option string `a::A::b:c:d:D:F:h:H:i:l:MNo:p:mqrRsSt::uvx`.
pub(super) const SHORT: &[(char, HasArg, Opt)] = &[
    ('a', Optional, Opt::Affinity),
    ('A', Optional, Opt::Aligned),
    ('b', Required, Opt::Breaktrace),
    ('c', Required, Opt::Clock),
    ('d', Required, Opt::Distance),
    ('D', Required, Opt::Duration),
    ('F', Required, Opt::Fifo),
    ('h', Required, Opt::Histogram),
    ('H', Required, Opt::Histofall),
    ('i', Required, Opt::Interval),
    ('l', Required, Opt::Loops),
    ('M', No, Opt::Refresh),
    ('N', No, Opt::Nsecs),
    ('o', Required, Opt::Oscope),
    ('p', Required, Opt::Priority),
    ('m', No, Opt::Mlockall),
    ('q', No, Opt::Quiet),
    ('r', No, Opt::Relative),
    ('R', No, Opt::Resolution),
    ('s', No, Opt::System),
    ('S', No, Opt::Smp),
    ('t', Optional, Opt::Threads),
    ('u', No, Opt::Unbuffered),
    ('v', No, Opt::Verbose),
    ('x', No, Opt::PosixTimers),
];

/// One option getopt returned.
pub(super) struct Item {
    pub(super) opt: Opt,
    /// As written, for messages (`-p`, `--priority`).
    pub(super) name: String,
    /// `optarg`.
    pub(super) value: Option<String>,
    /// Index of the word after the option's word (`optind`), where an
    /// optional argument not attached to its option is looked for.
    pub(super) next: usize,
}

/// getopt_long over `args` (without the program name): the options in
/// order, each or the error getopt reports there; and the operands with
/// their index. Stops at `--`.
pub(super) fn getopt(args: &[String]) -> (Vec<Result<Item, Refused>>, Vec<usize>) {
    let mut items = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            operands.extend(i..args.len());
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let found = match LONG.iter().find(|l| l.0 == name) {
                Some(l) => Ok(l),
                None => {
                    let cands: Vec<_> = LONG.iter().filter(|l| l.0.starts_with(name)).collect();
                    match cands.as_slice() {
                        [] => Err(format!("unknown option '--{name}'")),
                        [one] => Ok(*one),
                        many => Err(format!(
                            "option '--{name}' is ambiguous: {}",
                            many.iter()
                                .map(|l| format!("--{}", l.0))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                    }
                }
            };
            let item = found.and_then(|&(long, has, opt)| {
                let name = format!("--{long}");
                let value = match (has, inline) {
                    (No, Some(_)) => return Err(format!("option '{name}' takes no argument")),
                    (No, None) | (Optional, None) => None,
                    (_, Some(v)) => Some(v),
                    (Required, None) => match args.get(i) {
                        Some(v) => {
                            i += 1;
                            Some(v.clone())
                        }
                        None => return Err(format!("option '{name}' requires an argument")),
                    },
                };
                Ok(Item {
                    opt,
                    name,
                    value,
                    next: i,
                })
            });
            items.push(item.map_err(Refused));
            continue;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            operands.push(i - 1);
            continue;
        };
        for (at, c) in cluster.char_indices() {
            let rest = &cluster[at + c.len_utf8()..];
            let Some(&(_, has, opt)) = SHORT.iter().find(|s| s.0 == c) else {
                // glibc answers '?' for an unknown option, and cyclictest's
                // '?' is its help.
                items.push(if c == '?' {
                    Ok(Item {
                        opt: Opt::Help,
                        name: "-?".into(),
                        value: None,
                        next: i,
                    })
                } else {
                    Err(Refused(format!("unknown option '-{c}'")))
                });
                continue;
            };
            let name = format!("-{c}");
            let value = match has {
                No => None,
                Optional => (!rest.is_empty()).then(|| rest.to_string()),
                Required if !rest.is_empty() => Some(rest.to_string()),
                Required => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => {
                        items.push(Err(Refused(format!(
                            "option '{name}' requires an argument"
                        ))));
                        break;
                    }
                },
            };
            let ends = has != No;
            items.push(Ok(Item {
                opt,
                name,
                value,
                next: i,
            }));
            if ends {
                break;
            }
        }
    }
    (items, operands)
}
