// SPDX-License-Identifier: GPL-2.0

//! Kernel-independent logic of the rtrs suite.
//!
//! Everything here is plain `no_std` Rust with no dependency: it is unit-tested
//! on the host with `cargo test`, compiled into the kernel modules (which
//! include these source files with `#[path]`), and used by the user-space tool.
//! One piece of code per idea, whichever side runs it.

#![no_std]

pub mod blame;
pub mod hist;
pub mod ring;
pub mod uapi;
