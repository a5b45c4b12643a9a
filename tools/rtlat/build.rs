// SPDX-License-Identifier: GPL-2.0

//! Build metadata for the JSON report (`tool.build`): the source commit,
//! the target, the profile and the compiler. Missing pieces are "unknown".

use std::process::Command;

fn output(cmd: &str, args: &[&str]) -> Option<String> {
    let o = Command::new(cmd).args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let git = output("git", &["describe", "--always", "--dirty", "--abbrev=12"]);
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc = output(&rustc, &["--version"]);
    let env = |k: &str| std::env::var(k).unwrap_or_else(|_| "unknown".into());
    println!(
        "cargo:rustc-env=RTLAT_GIT={}",
        git.as_deref().unwrap_or("unknown")
    );
    println!(
        "cargo:rustc-env=RTLAT_RUSTC={}",
        rustc.as_deref().unwrap_or("unknown")
    );
    println!("cargo:rustc-env=RTLAT_TARGET={}", env("TARGET"));
    println!("cargo:rustc-env=RTLAT_PROFILE={}", env("PROFILE"));
    // The commit changes without a source file changing.
    if let Some(head) = output("git", &["rev-parse", "--git-path", "HEAD"]) {
        println!("cargo:rerun-if-changed={head}");
    }
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=build.rs");
}
