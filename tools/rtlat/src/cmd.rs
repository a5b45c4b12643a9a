// SPDX-License-Identifier: GPL-2.0

//! The measuring commands, one each: `run`'s live top view, `hist`,
//! `cyclictest`, `monitor` and `timerlat`, each a [`crate::mode::Mode`].

pub mod cyclictest;
mod hist;
pub mod monitor;
pub mod timerlat;
mod top;

pub use cyclictest::Cyclictest;
pub use hist::Hist;
pub use top::Top;
