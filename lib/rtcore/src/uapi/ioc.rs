// SPDX-License-Identifier: GPL-2.0

//! ioctl command numbers (Linux generic `_IOC` encoding, as on x86_64, arm64
//! and riscv64).

use super::{
    BLAME_SIZE,
    BLAME_SIZE_V1,
    CONFIG_SIZE,
    CONFIG_SIZE_V1,
    CONFIG_SIZE_V2,
    IOC_MAGIC,
    RECORD_SIZE,
    STATS_SIZE,
    STATUS_SIZE,
    STATUS_SIZE_V1,
    STATUS_SIZE_V2,
    STATUS_SIZE_V3, //
};

const fn ioc(dir: u32, nr: u32, size: usize) -> u32 {
    (dir << 30) | ((size as u32) << 16) | (IOC_MAGIC << 8) | nr
}
const W: u32 = 1;
const R: u32 = 2;

/// `_IOW(0xb7, 1, struct rtlat_config)`: configure a session.
pub const CONFIG: u32 = ioc(W, 1, CONFIG_SIZE);
/// The same ioctl with the first layout of `struct rtlat_config`.
pub const CONFIG_V1: u32 = ioc(W, 1, CONFIG_SIZE_V1);
/// The same ioctl with the second layout (without `cpus_ptr`).
pub const CONFIG_V2: u32 = ioc(W, 1, CONFIG_SIZE_V2);
/// `_IO(0xb7, 2)`: start sampling.
pub const START: u32 = ioc(0, 2, 0);
/// `_IO(0xb7, 3)`: stop sampling.
pub const STOP: u32 = ioc(0, 3, 0);
/// `_IOWR(0xb7, 4, struct rtlat_status)`.
pub const STATUS: u32 = ioc(R | W, 4, STATUS_SIZE);
/// The same ioctl with the first layout of `struct rtlat_status`.
pub const STATUS_V1: u32 = ioc(R, 4, STATUS_SIZE_V1);
/// The same ioctl with the second layout (without `deadline_misses`).
pub const STATUS_V2: u32 = ioc(R, 4, STATUS_SIZE_V2);
/// The same ioctl with the third layout (without the sets in full).
pub const STATUS_V3: u32 = ioc(R, 4, STATUS_SIZE_V3);
/// `_IOWR(0xb7, 5, struct rtlat_stats)`.
pub const STATS: u32 = ioc(R | W, 5, STATS_SIZE);
/// `_IO(0xb7, 6)`: reset statistics, keep sampling.
pub const RESET: u32 = ioc(0, 6, 0);
/// `_IOR(0xb7, 7, struct rtlat_record)`: block as the user stage of this
/// CPU until the next activation; returns its record.
pub const USER_WAIT: u32 = ioc(R, 7, RECORD_SIZE);
/// `_IO(0xb7, 8)`: become the streaming reader of the current session
/// and keep it: this file's read(), STATUS and STATS answer from it
/// until the file closes, whatever its owner does meanwhile.
pub const ATTACH: u32 = ioc(0, 8, 0);
/// `_IOWR(0xb7, 9, struct rtlat_blame)`: a CPU's late activations
/// explained (a session configured with `RTLAT_CFG_BLAME`).
pub const BLAME: u32 = ioc(R | W, 9, BLAME_SIZE);
/// `RTLAT_IOC_BLAME_V1`: the first layout, without the whole names.
pub const BLAME_V1: u32 = ioc(R | W, 9, BLAME_SIZE_V1);
