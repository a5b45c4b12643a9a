// SPDX-License-Identifier: GPL-2.0

//! `rtlat bench-drain`, run in the benchmark guest: how fast `read()`
//! drains full rings, against copying the same bytes from `/dev/zero` with
//! the same reads in the same boot.
//!
//! An irq-only session at the smallest period on every online CPU fills
//! rings that hold `records` together (the hard IRQ completes each record
//! itself: the fastest producer); nothing reads meanwhile. Once they are
//! full (or `fill_timeout` passed) the session is stopped and one thread
//! reads everything with reads of `read_size` bytes, timed; then as many
//! bytes are read from `/dev/zero` the same way.

use std::{
    fs::File,
    io::Read,
    path::Path,
    thread,
    time::{
        Duration,
        Instant, //
    },
};

use rtcore::uapi::{
    self,
    Config,
    Stage, //
};

use crate::{
    device::Device,
    sysinfo, //
};

/// What `rtlat bench-drain` measured (one line of its output).
#[derive(Debug, PartialEq)]
pub struct Drained {
    pub records: u64,
    pub bytes: u64,
    pub read_size: usize,
    pub fill_s: f64,
    pub drain_s: f64,
    pub zero_s: f64,
}

impl Drained {
    /// The line `rtlat bench-report` reads back ([`Drained::parse`]).
    pub fn line(&self) -> String {
        format!(
            "records {} bytes {} read_size {} fill_s {:.3} drain_s {:.6} zero_s {:.6}",
            self.records, self.bytes, self.read_size, self.fill_s, self.drain_s, self.zero_s
        )
    }

    /// Parses [`Drained::line`]'s output.
    pub fn parse(s: &str) -> Result<Self, String> {
        let f: Vec<&str> = s.split_whitespace().collect();
        let bad = || format!("not a bench-drain line: '{}'", s.trim());
        let ["records", records, "bytes", bytes, "read_size", read_size, "fill_s", fill_s, "drain_s", drain_s, "zero_s", zero_s] =
            f[..]
        else {
            return Err(bad());
        };
        let d = Self {
            records: records.parse().map_err(|_| bad())?,
            bytes: bytes.parse().map_err(|_| bad())?,
            read_size: read_size.parse().map_err(|_| bad())?,
            fill_s: fill_s.parse().map_err(|_| bad())?,
            drain_s: drain_s.parse().map_err(|_| bad())?,
            zero_s: zero_s.parse().map_err(|_| bad())?,
        };
        if d.records == 0 || d.bytes != d.records * uapi::RECORD_SIZE as u64 {
            return Err(format!("{}: no records, or not whole ones", bad()));
        }
        if !(d.drain_s > 0.0 && d.zero_s > 0.0) {
            return Err(format!("{}: a time of zero", bad()));
        }
        Ok(d)
    }
}

/// Per-CPU ring size for about `records` in all over `ncpu` CPUs: a power
/// of two, within the module's bounds (per ring and per session).
pub fn ring_for(records: u64, ncpu: u64) -> u32 {
    let ncpu = ncpu.max(1);
    let most = (uapi::RING_TOTAL_MAX_BYTES / uapi::RECORD_SIZE as u64 / ncpu)
        .min(u64::from(uapi::RING_MAX));
    let want = records.div_ceil(ncpu).clamp(1, most);
    // The largest power of two not above `want` (and `most`).
    let ring = 1u64 << (63 - want.leading_zeros());
    ring as u32
}

/// Fills the rings, stops, drains them and reads as much from `/dev/zero`.
pub fn drain(
    device: &Path,
    records: u64,
    read_size: usize,
    fill_timeout: Duration,
) -> Result<Drained, String> {
    if read_size < uapi::RECORD_SIZE {
        return Err(format!(
            "read size {read_size}: less than a record ({} bytes)",
            uapi::RECORD_SIZE
        ));
    }
    let ncpu = sysinfo::online_cpus().len() as u64;
    let ring = ring_for(records, ncpu);
    let mut dev = Device::open(device, false)?;
    dev.status()?;
    let config = Config {
        period_ns: uapi::PERIOD_MIN_NS,
        stages: Stage::Irq.bit(),
        ring_records: ring,
        ..Config::default()
    };
    dev.configure(device, &config)?;
    let capacity = u64::from(ring) * dev.session_cpus()?.len() as u64;
    let t0 = Instant::now();
    dev.start().map_err(|e| format!("start: {e}"))?;
    let mut queued = 0;
    while t0.elapsed() < fill_timeout {
        thread::sleep(Duration::from_millis(100));
        let st = dev.status()?;
        queued = st.produced - st.delivered - st.dropped;
        if queued >= capacity {
            break;
        }
    }
    dev.stop().map_err(|e| format!("stop: {e}"))?;
    let fill_s = t0.elapsed().as_secs_f64();
    let st = dev.status()?;
    let queued_end = st.produced - st.delivered - st.dropped;
    if queued_end < capacity {
        eprintln!(
            "rtlat bench-drain: the rings held {queued} of {capacity} records after {fill_s:.0} s; draining {queued_end}"
        );
    }

    let mut buf = vec![0u8; read_size];
    let mut bytes = 0u64;
    let t = Instant::now();
    loop {
        let n = dev.read_raw(&mut buf).map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
    }
    let drain_s = t.elapsed().as_secs_f64();
    if bytes != queued_end * uapi::RECORD_SIZE as u64 {
        return Err(format!(
            "read {bytes} bytes, the rings held {queued_end} records of {} bytes",
            uapi::RECORD_SIZE
        ));
    }

    let mut zero = File::open("/dev/zero").map_err(|e| format!("/dev/zero: {e}"))?;
    let mut left = bytes;
    let t = Instant::now();
    while left > 0 {
        let want = (left as usize).min(read_size);
        let n = zero
            .read(&mut buf[..want])
            .map_err(|e| format!("/dev/zero: {e}"))?;
        if n == 0 {
            return Err("/dev/zero: end of file".into());
        }
        left -= n as u64;
    }
    let zero_s = t.elapsed().as_secs_f64();
    Ok(Drained {
        records: queued_end,
        bytes,
        read_size,
        fill_s,
        drain_s,
        zero_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_are_powers_of_two_within_the_module_bounds() {
        assert_eq!(ring_for(1 << 20, 1), 1 << 20);
        assert_eq!(ring_for(1 << 20, 2), 1 << 19);
        assert_eq!(ring_for(1 << 20, 3), 1 << 18);
        assert_eq!(ring_for(32768, 4), 8192);
        assert_eq!(ring_for(1, 8), 1);
        // Beyond the session's 64 MiB: what fits.
        assert_eq!(ring_for(u64::MAX, 1), uapi::RING_MAX);
        assert_eq!(ring_for(u64::MAX, 3), 1 << 18);
        assert_eq!(ring_for(1 << 30, 0), uapi::RING_MAX);
    }

    #[test]
    fn the_line_reads_back_and_bad_lines_are_refused() {
        let d = Drained {
            records: 1000,
            bytes: 64000,
            read_size: 1 << 20,
            fill_s: 1.5,
            drain_s: 0.002,
            zero_s: 0.001,
        };
        assert_eq!(Drained::parse(&d.line()), Ok(d));
        for bad in [
            "",
            "records 1000 bytes 64000",
            "records 1000 bytes 64001 read_size 8 fill_s 1 drain_s 1 zero_s 1",
            "records 0 bytes 0 read_size 8 fill_s 1 drain_s 1 zero_s 1",
            "records 1 bytes 64 read_size 8 fill_s 1 drain_s 0 zero_s 1",
            "records x bytes 64 read_size 8 fill_s 1 drain_s 1 zero_s 1",
        ] {
            assert!(Drained::parse(bad).is_err(), "{bad}");
        }
    }
}
