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

/// What `rtlat bench-drain` measured (one line of its output; times in ns).
#[derive(Debug, PartialEq)]
pub struct Drained {
    /// Records drained, of the `capacity` the rings hold.
    pub records: u64,
    pub capacity: u64,
    pub bytes: u64,
    pub read_size: u64,
    pub fill_ns: u64,
    pub drain_ns: u64,
    pub zero_ns: u64,
}

impl Drained {
    const KEYS: [&str; 7] = [
        "records",
        "capacity",
        "bytes",
        "read_size",
        "fill_ns",
        "drain_ns",
        "zero_ns",
    ];

    /// The line `rtlat bench-report` reads back ([`Drained::parse`]).
    pub fn line(&self) -> String {
        super::kv::line(
            &Self::KEYS,
            [
                self.records,
                self.capacity,
                self.bytes,
                self.read_size,
                self.fill_ns,
                self.drain_ns,
                self.zero_ns,
            ],
        )
    }

    /// Parses [`Drained::line`]'s output; anything else (an error message)
    /// is refused.
    pub fn parse(s: &str) -> Result<Self, String> {
        let v = super::kv::parse(s, &Self::KEYS, "bench-drain")?;
        let bad = || super::kv::refused(s, "bench-drain");
        let [records, capacity, bytes, read_size, fill_ns, drain_ns, zero_ns] = v;
        let d = Self {
            records,
            capacity,
            bytes,
            read_size,
            fill_ns,
            drain_ns,
            zero_ns,
        };
        if records == 0
            || records > capacity
            || records.checked_mul(uapi::RECORD_SIZE as u64) != Some(bytes)
        {
            return Err(format!(
                "{}: no records, more than the rings hold, or not whole ones",
                bad()
            ));
        }
        if drain_ns == 0 || zero_ns == 0 {
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
    dev.configure(device, &config, &[])?;
    let capacity = u64::from(ring) * dev.session_cpus()?.len() as u64;
    let t0 = Instant::now();
    dev.start().map_err(|e| format!("start: {e}"))?;
    let mut queued = 0;
    while t0.elapsed() < fill_timeout {
        thread::sleep(Duration::from_millis(100));
        let st = dev.status()?;
        // (Counters read while the rings run may come from slightly
        // different moments.)
        queued = st
            .produced
            .saturating_sub(st.delivered)
            .saturating_sub(st.dropped);
        if queued >= capacity {
            break;
        }
    }
    dev.stop().map_err(|e| format!("stop: {e}"))?;
    let fill = t0.elapsed();
    let st = dev.status()?;
    let queued_end = st
        .produced
        .saturating_sub(st.delivered)
        .saturating_sub(st.dropped);
    if queued_end < capacity {
        eprintln!(
            "rtlat bench-drain: the rings held {queued} of {capacity} records after {:.0} s; draining {queued_end}",
            fill.as_secs_f64()
        );
    }

    // Written, so that no page of it faults during the timed reads.
    let mut buf = vec![1u8; read_size];
    let mut bytes = 0u64;
    let t = Instant::now();
    loop {
        let n = dev.read_raw(&mut buf).map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
    }
    let drain = t.elapsed();
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
    let zero = t.elapsed();
    let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1);
    Ok(Drained {
        records: queued_end,
        capacity,
        bytes,
        read_size: read_size as u64,
        fill_ns: ns(fill),
        drain_ns: ns(drain),
        zero_ns: ns(zero),
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
            capacity: 1024,
            bytes: 64000,
            read_size: 1 << 20,
            fill_ns: 1_500_000_000,
            drain_ns: 2_000_000,
            zero_ns: 1_000_000,
        };
        assert_eq!(Drained::parse(&d.line()), Ok(d));
        for bad in [
            "",
            "records 1000 capacity 1024 bytes 64000",
            "records 1000 capacity 1024 bytes 64001 read_size 8 fill_ns 1 drain_ns 1 zero_ns 1",
            "records 0 capacity 1024 bytes 0 read_size 8 fill_ns 1 drain_ns 1 zero_ns 1",
            "records 2000 capacity 1024 bytes 128000 read_size 8 fill_ns 1 drain_ns 1 zero_ns 1",
            "records 1 capacity 1 bytes 64 read_size 8 fill_ns 1 drain_ns 0 zero_ns 1",
            "records x capacity 1 bytes 64 read_size 8 fill_ns 1 drain_ns 1 zero_ns 1",
            "capacity 1 records 1 bytes 64 read_size 8 fill_ns 1 drain_ns 1 zero_ns 1",
            "records 288230376151711745 capacity 288230376151711745 bytes 64 read_size 8 fill_ns 1 drain_ns 1 zero_ns 1",
            "rtlat bench-drain: the rings held 3 of 4 records after 600 s; draining 3\nrtlat: error: read: x",
        ] {
            assert!(Drained::parse(bad).is_err(), "{bad}");
        }
    }
}
