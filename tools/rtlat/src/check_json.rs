// SPDX-License-Identifier: GPL-2.0

//! `rtlat check-json`: a report parses as this tool's schema and version,
//! and its numbers agree with each other.

use std::{fs, path::Path, process::ExitCode};

use crate::report::{self, Report};

/// Checks the report in `file` (a run's, or a benchmark's `bench.json`);
/// says why it is refused, if it is.
pub fn check(file: &Path) -> ExitCode {
    if let Some(code) = crate::bench_check::check_json(file) {
        return code;
    }
    match fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|s| serde_json::from_str::<Report>(&s).map_err(|e| e.to_string()))
    {
        Ok(r)
            if r.schema == report::SCHEMA
                && report::SCHEMA_VERSIONS_READ.contains(&r.schema_version) =>
        {
            match r.consistency() {
                Ok(()) => {
                    println!(
                        "{}: valid {} v{} report, {} CPUs, consistent",
                        file.display(),
                        r.schema,
                        r.schema_version,
                        r.cpus.len()
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("rtlat: {}: inconsistent: {e}", file.display());
                    ExitCode::from(1)
                }
            }
        }
        Ok(r) => {
            eprintln!(
                "rtlat: {}: schema {} v{} is not {} v{:?}",
                file.display(),
                r.schema,
                r.schema_version,
                report::SCHEMA,
                report::SCHEMA_VERSIONS_READ
            );
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("rtlat: {}: {e}", file.display());
            ExitCode::from(1)
        }
    }
}
