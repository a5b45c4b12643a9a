// SPDX-License-Identifier: GPL-2.0

//! Numbers as C reads them in rt-tests and libnuma: `strtol`, `atoi`,
//! `strtoul(.., 0)`, and rt-tests' `parse_time_string`.

/// What C's `strto*` functions read before the digits: white space (as
/// `isspace`) and an optional sign; whether it was `-`, and where the
/// digits start.
pub(super) fn sign_prefix(b: &[u8]) -> (bool, usize) {
    let at = b
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
        .count();
    match b.get(at) {
        Some(b'-') => (true, at + 1),
        Some(b'+') => (false, at + 1),
        _ => (false, at),
    }
}

/// C's `strtol(s, &end, 10)`: leading white space, a sign, decimal digits
/// (saturating); the value and how many bytes were read (0: none).
pub(super) fn strtol(s: &str) -> (i64, usize) {
    let b = s.as_bytes();
    let (neg, at) = sign_prefix(b);
    let digits = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return (0, 0);
    }
    let mut v: i64 = 0;
    for &d in &b[at..at + digits] {
        let d = i64::from(d - b'0');
        v = if neg {
            v.saturating_mul(10).saturating_sub(d)
        } else {
            v.saturating_mul(10).saturating_add(d)
        };
    }
    (v, at + digits)
}

/// C's `atoi`: `strtol` converted to `int` (0 when there is no number).
pub fn atoi(s: &str) -> i32 {
    strtol(s).0 as i32
}

/// rt-tests' `parse_time_string`: seconds, or with a suffix m/M, h/H, d/D
/// minutes, hours or days (anything else after the number, `s` included,
/// is ignored).
pub fn parse_time_string(s: &str) -> i64 {
    let (v, end) = strtol(s);
    let t = i64::from(v as i32);
    match s.as_bytes().get(end) {
        Some(b'm' | b'M') => t * 60,
        Some(b'h' | b'H') => t * 3600,
        Some(b'd' | b'D') => t * 86400,
        _ => t,
    }
}

/// C's `strtoul(s, &end, 0)` as libnuma reads a CPU number: white space, a
/// sign, then hexadecimal after `0x`, octal after `0`, else decimal; the
/// value (wrapped, as C does for `-`) and the bytes read (0: none).
pub(super) fn strtoul0(s: &str) -> (u64, usize) {
    let b = s.as_bytes();
    let (neg, at) = sign_prefix(b);
    let (radix, start) = if b.get(at) == Some(&b'0')
        && matches!(b.get(at + 1), Some(b'x' | b'X'))
        && b.get(at + 2).is_some_and(u8::is_ascii_hexdigit)
    {
        (16, at + 2)
    } else if b.get(at) == Some(&b'0') {
        (8, at)
    } else {
        (10, at)
    };
    let n = b[start..]
        .iter()
        .take_while(|&&c| (c as char).is_digit(radix))
        .count();
    if n == 0 {
        return (0, 0);
    }
    let mut v: u64 = 0;
    for &c in &b[start..start + n] {
        v = v
            .saturating_mul(u64::from(radix))
            .saturating_add(u64::from((c as char).to_digit(radix).unwrap_or(0)));
    }
    (if neg { v.wrapping_neg() } else { v }, start + n)
}
