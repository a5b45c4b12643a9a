// SPDX-License-Identifier: GPL-2.0

//! The one-line outputs of the guest's benchmark commands (`rtlat
//! bench-drain`, `rtlat bench-startstop`): "key value key value ...",
//! every key in its place and every value a number.

/// The line of `values` under `keys`.
pub fn line<const N: usize>(keys: &[&str; N], values: [u64; N]) -> String {
    keys.iter()
        .zip(values)
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why `s` is refused as a line of `what` (the start of the message; a
/// reason may follow).
pub fn refused(s: &str, what: &str) -> String {
    format!("not a {what} line: '{}'", s.trim())
}

/// The values of a [`line`] of `keys`; anything else (an error message) is
/// refused, saying it is not a line of `what`.
pub fn parse<const N: usize>(s: &str, keys: &[&str; N], what: &str) -> Result<[u64; N], String> {
    let f: Vec<&str> = s.split_whitespace().collect();
    let bad = || refused(s, what);
    if f.len() != 2 * N {
        return Err(bad());
    }
    let mut v = [0u64; N];
    for (i, k) in keys.iter().enumerate() {
        if f[2 * i] != *k {
            return Err(bad());
        }
        v[i] = f[2 * i + 1].parse().map_err(|_| bad())?;
    }
    Ok(v)
}
