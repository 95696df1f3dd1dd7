//! Simulated time: an unsigned count of picoseconds (2^64 ps is about 213 days).

/// Absolute simulated time or a duration, in picoseconds.
pub type Time = u64;

/// One picosecond.
pub const PS: Time = 1;
/// One nanosecond in picoseconds.
pub const NS: Time = 1_000;
/// One microsecond in picoseconds.
pub const US: Time = 1_000_000;
/// One millisecond in picoseconds.
pub const MS: Time = 1_000_000_000;
/// One second in picoseconds.
pub const SEC: Time = 1_000_000_000_000;

/// Byte counts below this, times a bit's picoseconds (8 x 10^12, the most picoseconds a byte
/// can take at a positive whole rate), fit in a `u64`.
pub const PRODUCT_FITS_BELOW: u32 = 1 << 21;

/// Time to put `bytes` on a wire of `rate_bps` bits per second, rounded up to a whole picosecond.
///
/// Exact for the usual rates: 4150 B at 400 Gb/s is 83,000 ps.
#[inline]
pub fn serialization(bytes: u32, rate_bps: u64) -> Time {
    // Below `PRODUCT_FITS_BELOW` bytes the product fits in u64: no 128-bit division.
    if bytes < PRODUCT_FITS_BELOW {
        (bytes as u64 * 8 * SEC).div_ceil(rate_bps)
    } else {
        (bytes as u128 * 8 * SEC as u128).div_ceil(rate_bps as u128) as Time
    }
}

/// Picoseconds as microseconds (for reports).
#[inline]
pub fn to_us(t: Time) -> f64 {
    t as f64 / US as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_matches_reference_numbers() {
        assert_eq!(serialization(4150, 400_000_000_000), 83_000);
        assert_eq!(serialization(64, 400_000_000_000), 1_280);
        assert_eq!(serialization(4150, 200_000_000_000), 166_000);
        // Rounds up rather than down.
        assert_eq!(serialization(1, 3_000_000_000_000), 3);
    }
}
