// SPDX-License-Identifier: GPL-2.0

//! The rtlat user-space ABI: the Rust twin of `include/uapi/linux/rtlat.h`.
//!
//! Every structure starts with its `size` and the UAPI `version`, has
//! explicit-width fields in native byte order and no implicit padding, and is
//! encoded and decoded field by field here, so that the kernel module and the
//! tool share one definition and a mismatch is an error, never a
//! misinterpretation. The layouts are checked against the C header by the
//! kselftest `uapi_layout` test.
//!
//! One wire structure a file: [`Config`] (`config.rs`), [`Record`]
//! (`record.rs`), [`Status`] and the session's [`State`] (`status.rs`),
//! [`Stats`] (`stats.rs`), [`Blame`] (`blame.rs`) and its [`BlameEntry`]
//! (`blame_entry.rs`); beside them the CPU-set bitmaps (`cpus.rs`), the
//! [`Stage`]s (`stage.rs`), the field-by-field coding (`wire.rs`) and the
//! ioctl numbers ([`ioc`]). Their items are all here, as `uapi::X`.
//!
//! In `blame.rs` and `blame_entry.rs`, `blame` is the analysis
//! (`super::super::blame`), not the wire structure's file.

mod blame;
mod blame_entry;
mod config;
mod cpus;
pub mod ioc;
mod record;
mod stage;
mod stats;
mod status;
#[cfg(test)]
mod tests;
mod wire;

// Every public item of the files, at its path of before the split. Globs:
// in a kernel module, which reaches none of them from outside, a re-export
// it does not use is an unused import; a glob is one only if it uses
// nothing of its file.
pub use blame::*;
pub use blame_entry::*;
pub use config::*;
pub use cpus::*;
pub use record::*;
pub use stage::*;
pub use stats::*;
pub use status::*;

/// Version of this ABI. Structures with another version are refused.
pub const VERSION: u32 = 1;

/// ioctl type byte.
pub const IOC_MAGIC: u32 = 0xb7;

/// Errors of decoding a structure from user space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UapiError {
    /// Wrong `size` field or buffer length.
    Size,
    /// Wrong `version` field.
    Version,
    /// A field is out of range.
    Invalid,
    /// "Every online CPU" includes CPUs beyond [`MAX_CPUS`], which the
    /// layout asked for cannot name.
    TooManyCpus,
}
