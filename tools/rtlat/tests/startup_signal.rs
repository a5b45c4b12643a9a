// SPDX-License-Identifier: GPL-2.0

//! SIGUSR1 (cyclictest's "print the status") while a measuring command
//! starts up must not kill it: the command goes on to its own end.

use std::{
    ffi::CString,
    fs::OpenOptions,
    os::unix::{fs::OpenOptionsExt, process::ExitStatusExt},
    process::{Command, Stdio},
    thread,
    time::Duration,
};

#[test]
fn sigusr1_during_startup_does_not_kill_the_tool() {
    let dir = std::env::temp_dir().join(format!("rtlat-startup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("raw");
    let c = CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a valid, NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // Creating the raw file blocks on the FIFO until it has a reader: the
    // tool waits there, before it opens the device.
    let child = Command::new(env!("CARGO_BIN_EXE_rtlat"))
        .args([
            "run",
            "-d",
            "1",
            "-q",
            "--device",
            "/nonexistent/rtlat",
            "--raw",
        ])
        .arg(&fifo)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_millis(300));
    // SAFETY: kill on the child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) }, 0);
    thread::sleep(Duration::from_millis(100));
    let reader = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    drop(reader);
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), None, "killed: {stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("/nonexistent/rtlat"), "{stderr}");
}
