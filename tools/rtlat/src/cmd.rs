// SPDX-License-Identifier: GPL-2.0

//! The measuring commands, one each: `run` (its live view is rtla's top),
//! `hist`, `cyclictest`, `monitor` and `timerlat`, each a
//! [`crate::mode::Mode`].

pub mod cyclictest;
mod hist;
pub mod monitor;
mod run;
pub mod timerlat;

pub use cyclictest::Cyclictest;
pub use hist::Hist;
pub use run::Run;
