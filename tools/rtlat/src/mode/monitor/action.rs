// SPDX-License-Identifier: GPL-2.0

//! What a threshold trip does in `rtlat monitor`, as rtla's
//! `--on-threshold`: keep the trace (the kernel stopped tracing at the
//! trip; the buffer is copied and tracing restarted) or run a command. The
//! monitor then goes on measuring.

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Child, Command},
};

use crate::report::Trip;

/// One `--on-threshold` action.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Copy the trace buffer to `file.N` (N the trip's number).
    Trace { file: PathBuf },
    /// Run `command` with `sh -c`, the trip in its environment.
    Shell { command: String },
}

/// Commands of `shell` actions still running at once, at most; a trip
/// beyond it runs none (and says so) rather than pile them up.
const MAX_RUNNING: usize = 8;

/// Parses `trace[,file=PATH]` or `shell,command=CMD`.
pub fn parse(s: &str) -> Result<Action, String> {
    let (kind, rest) = s.split_once(',').unwrap_or((s, ""));
    let arg = |key: &str| -> Result<Option<String>, String> {
        if rest.is_empty() {
            return Ok(None);
        }
        match rest.split_once('=') {
            Some((k, v)) if k == key && !v.is_empty() => Ok(Some(v.to_string())),
            _ => Err(format!("--on-threshold '{s}': {kind} takes {key}=VALUE")),
        }
    };
    match kind {
        "trace" => Ok(Action::Trace {
            file: arg("file")?.map_or_else(|| "rtlat_trace.txt".into(), PathBuf::from),
        }),
        "shell" => match arg("command")? {
            Some(command) => Ok(Action::Shell { command }),
            None => Err(format!("--on-threshold '{s}': shell needs command=CMD")),
        },
        _ => Err(format!(
            "--on-threshold '{s}': unknown action '{kind}' (trace[,file=PATH], shell,command=CMD)"
        )),
    }
}

impl Action {
    /// True if the kernel is to stop tracing at a trip (the trace kept).
    pub fn stops_tracing(&self) -> bool {
        matches!(self, Action::Trace { .. })
    }
}

/// Runs the actions and reaps the commands they started.
#[derive(Default)]
pub struct Actions {
    actions: Vec<Action>,
    running: Vec<Child>,
}

impl Actions {
    pub fn new(actions: &[Action]) -> Self {
        Self {
            actions: actions.to_vec(),
            running: Vec::new(),
        }
    }

    /// Runs every action for trip number `n`; what each did, one line each
    /// (for the history and stderr).
    pub fn run(&mut self, t: &Trip, n: u64) -> Vec<String> {
        self.reap();
        let mut done = Vec::new();
        for a in &self.actions {
            done.push(match a {
                Action::Trace { file } => keep_trace(file, n),
                Action::Shell { command } => {
                    if self.running.len() >= MAX_RUNNING {
                        format!("shell: not run, {MAX_RUNNING} commands still running")
                    } else {
                        match Command::new("sh")
                            .arg("-c")
                            .arg(command)
                            .env("RTLAT_TRIP_CPU", t.cpu.to_string())
                            .env("RTLAT_TRIP_STAGE", &t.stage)
                            .env("RTLAT_TRIP_NS", t.value_ns.to_string())
                            .env("RTLAT_TRIP_SEQ", t.seq.to_string())
                            .env("RTLAT_TRIP_NUMBER", n.to_string())
                            .spawn()
                        {
                            Ok(c) => {
                                let line = format!("shell: started pid {}", c.id());
                                self.running.push(c);
                                line
                            }
                            Err(e) => format!("shell: {e}"),
                        }
                    }
                }
            });
        }
        done
    }

    /// Reaps the commands that ended (called every tick).
    pub fn reap(&mut self) {
        self.running
            .retain_mut(|c| matches!(c.try_wait(), Ok(None)));
    }
}

/// Copies the trace buffer to `file.n` and restarts tracing.
fn keep_trace(file: &Path, n: u64) -> String {
    let Some(dir) = crate::trace::tracefs() else {
        return "trace: no tracefs mounted".into();
    };
    let mut dest = file.as_os_str().to_owned();
    dest.push(format!(".{n}"));
    let dest = PathBuf::from(dest);
    let copied = fs::copy(dir.join("trace"), &dest);
    let restarted = fs::write(dir.join("tracing_on"), "1");
    match (copied, restarted) {
        (Ok(_), Ok(())) => format!("trace: {}", dest.display()),
        (Err(e), _) => format!("trace: {}: {e}", dest.display()),
        (Ok(_), Err(e)) => format!("trace: {}, tracing not restarted: {e}", dest.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_parse_as_rtla_writes_them() {
        assert_eq!(
            parse("trace"),
            Ok(Action::Trace {
                file: "rtlat_trace.txt".into()
            })
        );
        assert_eq!(
            parse("trace,file=/tmp/t.txt"),
            Ok(Action::Trace {
                file: "/tmp/t.txt".into()
            })
        );
        assert_eq!(
            parse("shell,command=echo a=b"),
            Ok(Action::Shell {
                command: "echo a=b".into()
            })
        );
        assert!(parse("shell").unwrap_err().contains("command=CMD"));
        assert!(parse("trace,files=x").unwrap_err().contains("file=VALUE"));
        assert!(parse("signal,num=2")
            .unwrap_err()
            .contains("unknown action"));
        assert!(parse("trace").unwrap().stops_tracing());
        assert!(!parse("shell,command=true").unwrap().stops_tracing());
    }

    #[test]
    fn a_shell_action_sees_the_trip() {
        let dir = std::env::temp_dir().join(format!("rtlat-action-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let out = dir.join("out");
        let cmd = format!(
            "echo $RTLAT_TRIP_CPU $RTLAT_TRIP_STAGE $RTLAT_TRIP_NS $RTLAT_TRIP_SEQ $RTLAT_TRIP_NUMBER > {}",
            out.display()
        );
        let mut a = Actions::new(&[Action::Shell { command: cmd }]);
        let t = Trip {
            cpu: 3,
            stage: "irq".into(),
            value_ns: 51_000,
            seq: 77,
        };
        let lines = a.run(&t, 2);
        assert!(lines[0].starts_with("shell: started pid"), "{lines:?}");
        for c in &mut a.running {
            c.wait().unwrap();
        }
        a.reap();
        assert!(a.running.is_empty());
        assert_eq!(fs::read_to_string(&out).unwrap(), "3 irq 51000 77 2\n");
        fs::remove_dir_all(&dir).unwrap();
    }
}
