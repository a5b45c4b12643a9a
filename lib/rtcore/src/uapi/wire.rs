// SPDX-License-Identifier: GPL-2.0

//! Field-by-field coding of the structures: native byte order, explicit
//! widths, and the `size`/`version` header every structure starts with.

use super::{
    UapiError,
    VERSION, //
};

pub(super) struct Rd<'a> {
    pub(super) b: &'a [u8],
    pub(super) at: usize,
}

impl Rd<'_> {
    pub(super) fn u32(&mut self) -> u32 {
        let v = u32::from_ne_bytes([
            self.b[self.at],
            self.b[self.at + 1],
            self.b[self.at + 2],
            self.b[self.at + 3],
        ]);
        self.at += 4;
        v
    }
    pub(super) fn u64(&mut self) -> u64 {
        let lo = u64::from(self.u32());
        let hi = u64::from(self.u32());
        if cfg!(target_endian = "little") {
            lo | (hi << 32)
        } else {
            hi | (lo << 32)
        }
    }
}

pub(super) struct Wr<'a> {
    pub(super) b: &'a mut [u8],
    pub(super) at: usize,
}

impl Wr<'_> {
    pub(super) fn u32(&mut self, v: u32) {
        self.b[self.at..self.at + 4].copy_from_slice(&v.to_ne_bytes());
        self.at += 4;
    }
    pub(super) fn u64(&mut self, v: u64) {
        self.b[self.at..self.at + 8].copy_from_slice(&v.to_ne_bytes());
        self.at += 8;
    }
    pub(super) fn i64(&mut self, v: i64) {
        self.u64(v as u64)
    }
}

/// Checks the `size`/`version` header of an encoded structure of `size` bytes.
pub(super) fn header(b: &[u8], size: usize) -> Result<Rd<'_>, UapiError> {
    if b.len() != size {
        return Err(UapiError::Size);
    }
    let mut r = Rd { b, at: 0 };
    if r.u32() as usize != size {
        return Err(UapiError::Size);
    }
    if r.u32() != VERSION {
        return Err(UapiError::Version);
    }
    Ok(r)
}
