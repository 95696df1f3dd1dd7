//! Quantities with explicit units in scenario files: sizes (`"100pkt"`, `"16MiB"`, `"4150B"`),
//! times (`"1us"`, `"10ms"`) and rates (`"400Gbps"`). A bare number is rejected (except 0 for
//! times) so that nobody has to guess whether `100` meant bytes or packets.
use std::fmt;

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::time::{MS, NS, SEC, US};
use crate::engine::Time;

/// A size in bytes or in packets of the scenario's MTU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    /// Plain bytes.
    Bytes(u64),
    /// A count of full packets (converted with the MTU: `ceil(n * mtu)` bytes).
    Packets(f64),
}

impl Size {
    /// Bytes, converting packets with `mtu`.
    pub fn bytes(&self, mtu: u32) -> u64 {
        match *self {
            Size::Bytes(b) => b,
            Size::Packets(p) => (p * mtu as f64).ceil() as u64,
        }
    }
}

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let num: f64 = num.replace('_', "").parse().ok()?;
    Some((num, unit.trim()))
}

/// `"invalid size '-4MiB': must not be negative"` when `s` is written with a minus sign
/// (no unit hint helps there).
fn negative(what: &str, s: &str) -> Option<String> {
    s.trim()
        .starts_with('-')
        .then(|| format!("invalid {what} '{s}': must not be negative"))
}

/// Parses a size such as `100pkt`, `415000B`, `16MiB`, `8MB`.
pub fn parse_size(s: &str) -> Result<Size, String> {
    if let Some(e) = negative("size", s) {
        return Err(e);
    }
    let err = || {
        format!("invalid size '{s}': write a number followed by B, KB, KiB, MB, MiB, GB, GiB or pkt (e.g. '100pkt', '16MiB')")
    };
    let (n, unit) = split_number(s).ok_or_else(err)?;
    if !n.is_finite() || n < 0.0 {
        return Err(err());
    }
    let mult = match unit {
        "B" | "b" | "bytes" => 1.0,
        "KB" | "kB" => 1e3,
        "KiB" => 1024.0,
        "MB" => 1e6,
        "MiB" => 1024.0 * 1024.0,
        "GB" => 1e9,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "pkt" | "pkts" | "packets" => return Ok(Size::Packets(n)),
        _ => return Err(err()),
    };
    let b = n * mult;
    if b.fract() != 0.0 {
        return Err(format!("invalid size '{s}': not a whole number of bytes"));
    }
    Ok(Size::Bytes(b as u64))
}

/// Parses a duration such as `1us`, `500ns`, `10ms`, `2s`, `83ps`.
pub fn parse_time(s: &str) -> Result<Time, String> {
    if let Some(e) = negative("time", s) {
        return Err(e);
    }
    let err = || {
        format!("invalid time '{s}': write a number followed by ps, ns, us, ms or s (e.g. '1us', '10ms')")
    };
    let (n, unit) = split_number(s).ok_or_else(err)?;
    if !n.is_finite() || n < 0.0 {
        return Err(err());
    }
    let mult = match unit {
        "ps" => 1,
        "ns" => NS,
        "us" | "µs" => US,
        "ms" => MS,
        "s" => SEC,
        _ => return Err(err()),
    };
    Ok((n * mult as f64).round() as Time)
}

/// Why a zero rate is refused, in a scenario file as in code.
pub const RATE_NOT_POSITIVE: &str = "must be positive";

/// Parses a bit rate such as `400Gbps`, `400G`, `100Mbps`, `1.6Tbps`.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    if let Some(e) = negative("rate", s) {
        return Err(e);
    }
    let err = || {
        format!(
            "invalid rate '{s}': write a number followed by Mbps, Gbps or Tbps (e.g. '400Gbps')"
        )
    };
    let (n, unit) = split_number(s).ok_or_else(err)?;
    if !n.is_finite() {
        return Err(err());
    }
    if n <= 0.0 {
        return Err(RATE_NOT_POSITIVE.to_string());
    }
    let mult = match unit {
        "bps" => 1.0,
        "K" | "Kbps" | "kbps" => 1e3,
        "M" | "Mbps" => 1e6,
        "G" | "Gbps" => 1e9,
        "T" | "Tbps" => 1e12,
        _ => return Err(err()),
    };
    Ok((n * mult).round() as u64)
}

/// Formats picoseconds with the largest unit that keeps it exact.
pub fn format_time(t: Time) -> String {
    for (unit, m) in [("s", SEC), ("ms", MS), ("us", US), ("ns", NS)] {
        if t != 0 && t.is_multiple_of(m) {
            return format!("{}{unit}", t / m);
        }
    }
    format!("{t}ps")
}

/// Formats a rate in the largest exact unit.
pub fn format_rate(r: u64) -> String {
    for (unit, m) in [
        ("Tbps", 1_000_000_000_000u64),
        ("Gbps", 1_000_000_000),
        ("Mbps", 1_000_000),
    ] {
        if r.is_multiple_of(m) {
            return format!("{}{unit}", r / m);
        }
    }
    format!("{r}bps")
}

macro_rules! string_quantity {
    ($name:ident, $inner:ty, $parse:expr, $format:expr, $zero:expr, $units:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("a quantity with a unit")
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        // A bare 0 needs no unit where zero is meaningful.
                        let zero: Option<$inner> = $zero;
                        if let (0, Some(z)) = (v, zero) {
                            return Ok($name(z));
                        }
                        if v < 0 {
                            return Err(E::custom(format!("'{v}' must not be negative")));
                        }
                        Err(E::custom(format!(
                            "'{v}' has no unit: add one of {}, e.g. \"{v}{}\"",
                            $units,
                            $units.split(", ").next().unwrap_or_default()
                        )))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        if v < 0.0 {
                            return Err(E::custom(format!("'{v}' must not be negative")));
                        }
                        Err(E::custom(format!(
                            "'{v}' has no unit: add one of {}, e.g. \"{v}{}\"",
                            $units,
                            $units.split(", ").next().unwrap_or_default()
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$format(self.0))
            }
        }
    };
}

fn format_size(s: Size) -> String {
    match s {
        Size::Bytes(b) => {
            for (unit, m) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
                if b != 0 && b % m == 0 {
                    return format!("{}{unit}", b / m);
                }
            }
            format!("{b}B")
        }
        Size::Packets(p) => format!("{p}pkt"),
    }
}

string_quantity!(
    SizeQ,
    Size,
    parse_size,
    format_size,
    Some(Size::Bytes(0)),
    "B, KB, KiB, MB, MiB, GB, GiB, pkt",
    "A size with a unit (bytes or packets)."
);
string_quantity!(
    TimeQ,
    Time,
    parse_time,
    format_time,
    Some(0),
    "us, ns, ms, s",
    "A duration or instant with a unit."
);
string_quantity!(
    RateQ,
    u64,
    parse_rate,
    format_rate,
    None,
    "Gbps, Mbps, Tbps",
    "A bit rate with a unit."
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("100pkt").unwrap().bytes(4150), 415_000);
        assert_eq!(parse_size("101pkt").unwrap().bytes(4150), 419_150);
        assert_eq!(parse_size("16MiB").unwrap(), Size::Bytes(16 << 20));
        assert_eq!(parse_size("8MB").unwrap(), Size::Bytes(8_000_000));
        assert_eq!(parse_size("4150B").unwrap(), Size::Bytes(4150));
        assert!(parse_size("100").unwrap_err().contains("pkt"));
        assert!(parse_size("1.5B").is_err());
        assert!(parse_size("-3B").is_err());
    }

    #[test]
    fn times_and_rates() {
        assert_eq!(parse_time("1us").unwrap(), 1_000_000);
        assert_eq!(parse_time("10ms").unwrap(), 10_000_000_000);
        assert_eq!(parse_time("0.5us").unwrap(), 500_000);
        assert!(parse_time("1 fortnight").is_err());
        assert_eq!(parse_rate("400Gbps").unwrap(), 400_000_000_000);
        assert_eq!(parse_rate("400G").unwrap(), 400_000_000_000);
        assert!(parse_rate("0Gbps").is_err());
        assert_eq!(format_time(10 * MS), "10ms");
        assert_eq!(format_rate(200_000_000_000), "200Gbps");
    }

    #[test]
    fn bare_zero_only_where_zero_is_meaningful() {
        #[derive(Debug, Deserialize)]
        struct T {
            t: Option<TimeQ>,
            s: Option<SizeQ>,
            r: Option<RateQ>,
        }
        let t: T = toml::from_str("t = 0\ns = 0").unwrap();
        assert_eq!(
            (t.t, t.s, t.r),
            (Some(TimeQ(0)), Some(SizeQ(Size::Bytes(0))), None)
        );
        assert!(toml::from_str::<T>("r = 0").is_err());
        assert!(toml::from_str::<T>("t = 5")
            .unwrap_err()
            .to_string()
            .contains("no unit"));
    }
}
