// SPDX-License-Identifier: GPL-2.0

//! The client side of `/dev/rtlat`, for applications and for the `rtlat`
//! tool.
//!
//! - [`Periodic`]: an application's own periodic loop as the measured user
//!   stage. Each [`Periodic::wait`] blocks until the next period on the
//!   caller's CPU and returns that activation's record (its wake-up
//!   latencies); the time until the next `wait` is the iteration's response
//!   time, checked against the session's deadline by the kernel (counted
//!   in [`Periodic::status`], flagged in the records the device's reader
//!   gets, such as `rtlat run --attach`).
//! - [`device`]: the device and its ioctls, with the errors a user needs.
//! - [`sched`]: pinning a thread, SCHED_FIFO, locked memory.
//!
//! The C twin is `include/rtlat/client.h`.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! let lp = rtlat_client::Periodic::start(&rtlat_client::Options {
//!     cpu: 1,
//!     period: Duration::from_millis(1),
//!     deadline: Some(Duration::from_micros(300)),
//!     ..Default::default()
//! })?;
//! loop {
//!     let rec = lp.wait()?;
//!     // ... this period's work ...
//! #   let _ = rec;
//! #   break;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod device;
mod periodic;
pub mod sched;

pub use periodic::{
    Options,
    Periodic, //
};
pub use rtcore::uapi;
