// SPDX-License-Identifier: GPL-2.0

//! What a threshold trip does in `rtlat monitor`, as rtla's
//! `--on-threshold` (the actions parsed by [`crate::cli::action`]): keep
//! the trace (the kernel stopped tracing at the trip; the buffer is copied
//! and tracing restarted) or run a command. The monitor then goes on
//! measuring.

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Child, Command},
};

use crate::{cli::action::Action, report::Trip};

/// Commands of `shell` actions still running at once, at most; a trip
/// beyond it runs none (and says so) rather than pile them up.
const MAX_RUNNING: usize = 8;

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
