// SPDX-License-Identifier: GPL-2.0

//! CPU sets as the ABI passes them: bitmaps of 64-bit words, inline in a
//! structure ([`MAX_CPUS`] CPUs) or at a user address (any).

// (Named by the documentation only.)
#[cfg(doc)]
use super::{
    Config,
    Status, //
};

/// Number of CPUs the inline CPU-set bitmaps can name ([`Config::cpus`],
/// [`Status::cpus`], ...); the bitmaps at [`Config::cpus_ptr`] and in the
/// STATUS buffers name any.
pub const MAX_CPUS: usize = 256;
/// 64-bit words of an inline CPU-set bitmap.
pub const CPU_WORDS: usize = MAX_CPUS / 64;
/// Largest bitmap at [`Config::cpus_ptr`], bytes (32768 CPUs).
pub const CPUS_SIZE_MAX: u32 = 4096;

/// The CPUs of a bitmap (bit `c % 64` of word `c / 64` is CPU `c`), in
/// increasing order.
pub fn cpu_bits(set: &[u64]) -> impl Iterator<Item = u32> + '_ {
    set.iter().enumerate().flat_map(|(i, &w)| {
        (0..64u32)
            .filter(move |b| w & (1 << b) != 0)
            .map(move |b| i as u32 * 64 + b)
    })
}

/// Adds CPU `cpu` to the bitmap `set`; false (and nothing added) if the
/// bitmap is too short to name it.
pub fn set_cpu(set: &mut [u64], cpu: u32) -> bool {
    match set.get_mut(cpu as usize / 64) {
        Some(w) => {
            *w |= 1 << (cpu % 64);
            true
        }
        None => false,
    }
}

/// 64-bit words of a bitmap that names `nr` CPUs.
pub const fn cpu_words(nr: u32) -> u32 {
    nr.div_ceil(64)
}
