// SPDX-License-Identifier: GPL-2.0

//! `--on-threshold ACTION` of `rtlat monitor`, as rtla writes it: the
//! parsed value ([`crate::cmd::monitor`] carries it out).

use std::path::PathBuf;

/// One `--on-threshold` action.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Copy the trace buffer to `file.N` (N the trip's number).
    Trace { file: PathBuf },
    /// Run `command` with `sh -c`, the trip in its environment.
    Shell { command: String },
}

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
}
