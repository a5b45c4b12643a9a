// SPDX-License-Identifier: GPL-2.0

//! `--buckets` of `rtlat monitor`: which `le` bounds its latency histogram
//! exposes ([`crate::cmd::monitor`] writes them). A listed bound must be a
//! boundary of the kernel's buckets (`rtcore::hist`), so that its
//! cumulative count is exact; another is refused, with the two nearest.

use rtcore::hist;

/// The exposed bounds.
#[derive(Clone, Debug, PartialEq)]
pub enum Buckets {
    /// Every bound of the default exposition: 16 an octave up to about
    /// 1 ms, 4 an octave on to about 1 s.
    Fine,
    /// One fine bound at or above each of 1, 2, 5, 10 µs ... 1 s.
    Coarse,
    /// The listed boundaries, ns, ascending.
    List(Vec<u64>),
}

/// Units of a listed bound, and their ns. The micro sign is U+00B5 or
/// the Greek mu, U+03BC: keyboards and input methods give either.
const UNITS: [(&str, u64); 6] = [
    ("ns", 1),
    ("us", 1_000),
    ("\u{b5}s", 1_000),
    ("\u{3bc}s", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
];

/// `ns` in µs, as exactly as a bound needs (`49.664us`).
pub fn us(ns: u64) -> String {
    let frac = ns % 1000;
    if frac == 0 {
        return format!("{}us", ns / 1000);
    }
    let f = format!("{frac:03}");
    format!("{}.{}us", ns / 1000, f.trim_end_matches('0'))
}

/// One bound with its unit (`10.24us`, `5120ns`), in ns.
fn value(s: &str) -> Result<u64, String> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let bad = || format!("'{s}': a number and its unit (ns, us, ms, s), e.g. 10.24us");
    let mult = UNITS
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|&(_, m)| m)
        .ok_or_else(bad)?;
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(bad());
    }
    // The digits as one integer (only digits are left: it fails only
    // by overflowing), and the power of ten that divides it.
    let scale = 10u64
        .checked_pow(frac.len() as u32)
        .ok_or_else(|| format!("'{s}': too many decimals"))?;
    // Too many digits: if the whole part alone fits, the decimals are
    // the trouble (1.00000000000s), else the value (99999999999s).
    let over = || {
        let whole = format!("0{int}").parse::<u64>().ok();
        match whole.and_then(|w| w.checked_mul(mult)) {
            Some(_) => format!("'{s}': too many decimals"),
            None => format!("'{s}': too large"),
        }
    };
    let digits: u64 = format!("{int}{frac}").parse().map_err(|_| over())?;
    let ns = digits.checked_mul(mult).ok_or_else(over)?;
    if ns % scale != 0 {
        return Err(format!("'{s}': not a whole number of ns"));
    }
    Ok(ns / scale)
}

/// Checks that `ns` (given as `s`) is a boundary of the kernel's buckets.
fn boundary(s: &str, ns: u64) -> Result<u64, String> {
    if ns == 0 {
        return Err(format!("'{s}': a bound must be above 0"));
    }
    if ns > hist::MAX_TRACKED {
        return Err(format!(
            "'{s}' is beyond the kernel's last bucket boundary, {}",
            us(hist::MAX_TRACKED)
        ));
    }
    let i = hist::bucket_of(ns);
    let low = hist::bucket_low(i);
    if low == ns {
        return Ok(ns);
    }
    Err(format!(
        "'{s}' is no boundary of the kernel's histogram buckets; the nearest are {} and {}",
        us(low),
        us(hist::bucket_low(i + 1))
    ))
}

/// Parses `fine`, `coarse`, or bounds with their units, comma-separated
/// (`10.24us,51.2us,102.4us`). A bound `B` counts the latencies below `B`.
pub fn parse(s: &str) -> Result<Buckets, String> {
    match s {
        "fine" => return Ok(Buckets::Fine),
        "coarse" => return Ok(Buckets::Coarse),
        _ => {}
    }
    let mut list = Vec::new();
    for item in s.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!(
                "'{s}': fine, coarse, or bounds with their unit, e.g. 10.24us,51.2us"
            ));
        }
        list.push(boundary(item, value(item)?)?);
    }
    list.sort_unstable();
    list.dedup();
    Ok(Buckets::List(list))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_lists() {
        assert_eq!(parse("fine"), Ok(Buckets::Fine));
        assert_eq!(parse("coarse"), Ok(Buckets::Coarse));
        assert_eq!(
            parse("102.4us, 10240ns,51.2µs,0.0512ms,1.073741824s"),
            Ok(Buckets::List(vec![10_240, 51_200, 102_400, 1 << 30]))
        );
        // The micro sign and the Greek mu alike.
        assert_eq!(
            parse("10.24\u{b5}s,51.2\u{3bc}s"),
            Ok(Buckets::List(vec![10_240, 51_200]))
        );
        // Below 64 ns every value is a boundary; the last is 2^34 ns.
        assert_eq!(parse("1ns,63ns"), Ok(Buckets::List(vec![1, 63])));
        assert_eq!(
            parse("17179869184ns"),
            Ok(Buckets::List(vec![hist::MAX_TRACKED]))
        );
    }

    #[test]
    fn a_bound_the_kernel_has_not_is_refused_with_the_nearest() {
        assert_eq!(
            parse("10.24us,50us").unwrap_err(),
            "'50us' is no boundary of the kernel's histogram buckets; the nearest are 49.664us and 50.176us"
        );
        assert_eq!(
            parse("1001ns").unwrap_err(),
            "'1001ns' is no boundary of the kernel's histogram buckets; the nearest are 1us and 1.008us"
        );
        assert_eq!(
            parse("1s").unwrap_err(),
            "'1s' is no boundary of the kernel's histogram buckets; the nearest are 998244.352us and 1006632.96us"
        );
        // 1 µs is one: 125 buckets of 8 ns from 512 ns.
        assert_eq!(parse("1us"), Ok(Buckets::List(vec![1_000])));
    }

    #[test]
    fn malformed_bounds_are_refused_in_words() {
        for (bad, want) in [
            ("", "fine, coarse, or bounds"),
            ("10.24us,,20.48us", "fine, coarse, or bounds"),
            ("medium", "a number and its unit"),
            ("10", "a number and its unit"),
            ("10 us", "a number and its unit"),
            ("us", "a number and its unit"),
            ("1.2.3us", "a number and its unit"),
            ("-5us", "a number and its unit"),
            ("0.5ns", "not a whole number of ns"),
            ("0us", "must be above 0"),
            (
                "18s",
                "beyond the kernel's last bucket boundary, 17179869.184us",
            ),
            ("99999999999999999999s", "too large"),
            ("9999999999999s", "too large"),
            ("99999999999.000000000s", "too large"),
            ("1.00000000000s", "too many decimals"),
            ("1.0000000000000000000s", "too many decimals"),
            (".00000000000000000001s", "too many decimals"),
            ("1.00000000000000000000s", "too many decimals"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }

    #[test]
    fn microseconds_are_exact() {
        assert_eq!(us(1_000), "1us");
        assert_eq!(us(512), "0.512us");
        assert_eq!(us(49_664), "49.664us");
        assert_eq!(us(1_008), "1.008us");
        assert_eq!(us(1_500), "1.5us");
    }
}
