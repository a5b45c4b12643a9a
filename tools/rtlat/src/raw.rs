// SPDX-License-Identifier: GPL-2.0

//! `--raw FILE`: every record of the measured session as it came from the
//! device, for analysis the tool does not do.
//!
//! - `csv` (the default): a header line naming the fields, then one line
//!   per record: `cpu,seq,expected_ns,irq_ns,thread_ns,user_ns,response_ns,missed,flags`
//!   (latencies in ns against the expected expiry, -1 where the stage was
//!   not measured; `expected_ns` on CLOCK_MONOTONIC; `flags` the UAPI's
//!   `RTLAT_REC_*` bits in decimal).
//! - `bin`: a 32-byte header, then the records exactly as read() gave
//!   them, `RECORD_SIZE` bytes each in the UAPI layout
//!   (`include/uapi/linux/rtlat.h`, `struct rtlat_record`), native byte
//!   order. The header, all fields native-endian `u32` after the magic:
//!
//!   | offset | field |
//!   | --- | --- |
//!   | 0 | magic `RTLATRAW` (8 bytes) |
//!   | 8 | header size (32) |
//!   | 12 | format version (1) |
//!   | 16 | record size (64) |
//!   | 20 | UAPI version of the records |
//!   | 24 | byte-order mark `0x01020304` (reads `0x04030201` on the other order) |
//!   | 28 | reserved (0) |

use std::{
    fs::File,
    io::{BufWriter, Write},
    path::{Path, PathBuf},
};

use rtcore::uapi::{self, Record};
use serde::{Deserialize, Serialize};

/// Format of the raw file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Text, a header line with the fields, one line per record.
    #[default]
    Csv,
    /// The binary header and the UAPI records.
    Bin,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Bin => "bin",
        }
    }
}

/// Magic of the binary format.
pub const MAGIC: &[u8; 8] = b"RTLATRAW";
/// Size of the binary header.
pub const HEADER_SIZE: usize = 32;
/// Version of the binary format.
pub const FORMAT_VERSION: u32 = 1;
/// Byte-order mark of the binary header.
pub const BYTE_ORDER_MARK: u32 = 0x0102_0304;
/// The CSV header line.
pub const CSV_HEADER: &str =
    "cpu,seq,expected_ns,irq_ns,thread_ns,user_ns,response_ns,missed,flags";

/// The binary header.
pub fn bin_header() -> [u8; HEADER_SIZE] {
    let mut h = [0u8; HEADER_SIZE];
    h[..8].copy_from_slice(MAGIC);
    let fields = [
        HEADER_SIZE as u32,
        FORMAT_VERSION,
        uapi::RECORD_SIZE as u32,
        uapi::VERSION,
        BYTE_ORDER_MARK,
        0,
    ];
    for (i, f) in fields.iter().enumerate() {
        h[8 + 4 * i..12 + 4 * i].copy_from_slice(&f.to_ne_bytes());
    }
    h
}

/// One CSV line (without the newline).
pub fn csv_line(r: &Record) -> String {
    let l = &r.lat_ns;
    format!(
        "{},{},{},{},{},{},{},{},{}",
        r.cpu, r.seq, r.expected_ns, l[0], l[1], l[2], l[3], r.missed, r.flags
    )
}

/// What the JSON report says of the raw file.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawReport {
    pub file: String,
    /// `csv` or `bin`.
    pub format: String,
    /// Records written.
    pub records: u64,
    /// The first write error, if any: the file stops there (exit status 1).
    pub error: Option<String>,
}

/// The writer the reader thread feeds.
pub struct RawWriter {
    path: PathBuf,
    format: Format,
    out: BufWriter<File>,
    records: u64,
    error: Option<String>,
}

impl RawWriter {
    /// Creates the file and writes its header.
    pub fn create(path: &Path, format: Format) -> Result<Self, String> {
        let f = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut w = Self {
            path: path.to_path_buf(),
            format,
            out: BufWriter::with_capacity(1 << 16, f),
            records: 0,
            error: None,
        };
        let r = match format {
            Format::Csv => writeln!(w.out, "{CSV_HEADER}"),
            Format::Bin => w.out.write_all(&bin_header()),
        };
        r.map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(w)
    }

    /// Writes what one read() gave: `bytes`, decoded as `recs`.
    pub fn write(&mut self, bytes: &[u8], recs: &[Record]) {
        if self.error.is_some() {
            return;
        }
        let r = match self.format {
            Format::Bin => self.out.write_all(bytes),
            Format::Csv => recs
                .iter()
                .try_for_each(|r| writeln!(self.out, "{}", csv_line(r))),
        };
        match r {
            Ok(()) => self.records += recs.len() as u64,
            Err(e) => self.error = Some(format!("{}: {e}", self.path.display())),
        }
    }

    /// Flushes and closes the file.
    pub fn finish(mut self) -> RawReport {
        if self.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.error = Some(format!("{}: {e}", self.path.display()));
            }
        }
        RawReport {
            file: self.path.to_string_lossy().into_owned(),
            format: self.format.name().into(),
            records: self.records,
            error: self.error,
        }
    }
}

/// Decodes a binary raw file: its records, or why it is not one (the
/// format's reference reader; the tool itself only writes).
#[cfg(test)]
pub fn read_bin(b: &[u8]) -> Result<Vec<Record>, String> {
    let u32_at = |o: usize| u32::from_ne_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    if b.len() < HEADER_SIZE || &b[..8] != MAGIC {
        return Err("not an rtlat raw file".into());
    }
    if u32_at(24) != BYTE_ORDER_MARK {
        return Err("written with the other byte order".into());
    }
    let (hs, rs) = (u32_at(8) as usize, u32_at(16) as usize);
    if hs != HEADER_SIZE || rs != uapi::RECORD_SIZE || u32_at(12) != FORMAT_VERSION {
        return Err("unknown header or record size".into());
    }
    if (b.len() - hs) % rs != 0 {
        return Err("a partial record at the end".into());
    }
    b[hs..]
        .chunks_exact(rs)
        .map(|c| Record::decode(c).map_err(|e| format!("{e:?}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recs() -> Vec<Record> {
        (0..3)
            .map(|k| Record {
                cpu: k as u32 % 2,
                seq: k,
                expected_ns: 1_000_000 * k + 5,
                lat_ns: [1_000 + k as i64, 2_000, -1, -1],
                missed: k as u32,
                flags: uapi::REC_NO_USER,
            })
            .collect()
    }

    fn bytes(recs: &[Record]) -> Vec<u8> {
        let mut v = Vec::new();
        for r in recs {
            let mut b = [0u8; uapi::RECORD_SIZE];
            r.encode(&mut b);
            v.extend_from_slice(&b);
        }
        v
    }

    fn write(format: Format, name: &str) -> (RawReport, Vec<u8>) {
        let dir = std::env::temp_dir().join(format!("rtlat-raw-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("raw");
        let mut w = RawWriter::create(&path, format).unwrap();
        let r = recs();
        // Two reads: the first two records, then the third.
        w.write(&bytes(&r[..2]), &r[..2]);
        w.write(&bytes(&r[2..]), &r[2..]);
        let rep = w.finish();
        let b = std::fs::read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        (rep, b)
    }

    #[test]
    fn csv_every_record_under_a_header() {
        let (rep, b) = write(Format::Csv, "csv");
        assert_eq!(
            (rep.format.as_str(), rep.records, rep.error),
            ("csv", 3, None)
        );
        let text = String::from_utf8(b).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines[1], "0,0,5,1000,2000,-1,-1,0,1");
        assert_eq!(lines[3], "0,2,2000005,1002,2000,-1,-1,2,1");
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
    }

    #[test]
    fn bin_header_and_the_records_as_read() {
        let (rep, b) = write(Format::Bin, "bin");
        assert_eq!((rep.format.as_str(), rep.records), ("bin", 3));
        assert_eq!(b.len(), HEADER_SIZE + 3 * uapi::RECORD_SIZE);
        assert_eq!(&b[HEADER_SIZE..], &bytes(&recs())[..]);
        assert_eq!(read_bin(&b).unwrap(), recs());
        let mut bad = b.clone();
        bad[0] = b'X';
        assert!(read_bin(&bad).is_err());
        assert!(read_bin(&b[..b.len() - 1]).is_err());
    }
}
