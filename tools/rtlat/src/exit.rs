// SPDX-License-Identifier: GPL-2.0

//! The tool's exit statuses, the same for every command (a leaf: the engine
//! and the command line both name them).

/// The run completed, no threshold tripped, every gate passed.
pub const OK: u8 = 0;
/// An error (the device, the system, an option that does not fit it).
pub const ERROR: u8 = 1;
/// The command line was refused.
pub const USAGE: u8 = 2;
/// A stop-at-first-trip threshold (`--threshold`) tripped.
pub const THRESHOLD: u8 = 3;
/// A run-to-end gate (`--fail-if`, `--max-missed`, `--max-dropped`) failed.
pub const GATE: u8 = 4;

#[cfg(test)]
mod tests {
    #[test]
    fn statuses_are_distinct() {
        assert_eq!(
            [
                super::OK,
                super::ERROR,
                super::USAGE,
                super::THRESHOLD,
                super::GATE
            ],
            [0, 1, 2, 3, 4]
        );
    }
}
