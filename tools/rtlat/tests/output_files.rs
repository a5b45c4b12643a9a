// SPDX-License-Identifier: GPL-2.0

//! An output file that cannot be written refuses the run before anything
//! is opened or measured: the error names the file, not the device.

use std::process::Command;

/// Runs rtlat with `args`; its exit code and stderr.
fn rtlat(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rtlat"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bad_output_path_is_refused_before_the_run() {
    let dev = "--device=/nonexistent/rtlat";
    for args in [
        &["run", "-d", "1", dev, "--json", "/nonexistent/x.json"][..],
        &["run", "-d", "1", dev, "--svg", "/nonexistent/x.svg"],
        &["hist", "-d", "1", dev, "--json", "/nonexistent/x.json"],
        &[
            "cyclictest",
            "-p",
            "80",
            "-D",
            "1",
            "-q",
            "--json=/nonexistent/x.json",
        ],
    ] {
        let (code, err) = rtlat(args);
        let last = err.lines().last().unwrap_or_default();
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(last.contains("/nonexistent/x."), "{args:?}: {err}");
        assert!(
            !err.contains("rtlat/") && !err.contains("/dev/rtlat"),
            "{args:?}: {err}"
        );
    }
    let (code, err) = rtlat(&["cyclictest", "-p", "80", "-D", "1", "-q", "--json="]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not a file name"), "{err}");
}
