//! A seeded mutator for text inputs: byte flips, structural characters, numbers replaced by
//! edge values, lines deleted, duplicated and swapped, truncation and splices from another
//! corpus file. Input `index` of `seed` depends on nothing else, so a finding is reproduced
//! from the two numbers alone.
use repsim::engine::Rng;

/// Numbers that break careless parsers: zero, negatives, powers of two at integer widths,
/// overflowing and non-finite values, tiny fractions and exponents.
const EDGE_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "255",
    "256",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "1e308",
    "1e309",
    "-1e309",
    "nan",
    "inf",
    "-inf",
    "0.0",
    "-0",
    "1e-300",
    "0.5",
    "1000000000",
    "99999999999999999999999",
];

/// Characters with meaning in TOML, CSV-like and key-value files.
const STRUCTURE: &[u8] = b"=\"'[]{},.:#\n \t-+_0123456789eExX";

/// Units and words scenarios use (a mutation may swap one in).
const WORDS: &[&str] = &[
    "us",
    "ms",
    "s",
    "ps",
    "ns",
    "pkt",
    "B",
    "KiB",
    "MiB",
    "GiB",
    "Gbps",
    "Tbps",
    "true",
    "false",
    "all",
    "none",
    "[[fault]]",
    "[topology]",
    "[workload]",
    "[[class]]",
    "hosts",
    "tiers",
    "size",
    "Nodes",
    "Tiers",
    "Radix_Down",
    "Radix_Up",
    "Queue",
    "Speed",
    "Latency",
];

/// Makes input `index` of `seed` from one or two corpus entries.
pub struct Mutator {
    seed: u64,
}

impl Mutator {
    /// A mutator for `seed`.
    pub fn new(seed: u64) -> Self {
        Mutator { seed }
    }

    /// The random stream of input `index`.
    pub fn rng(&self, index: u64) -> Rng {
        Rng::new(
            self.seed
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(index.wrapping_mul(0xD1B5_4A32_D192_ED03))
                ^ 0x5851_F42D_4C95_7F2D,
        )
    }

    /// Mutates `base` (with `other` for splices) using `rng`: 1 to 4 edits.
    pub fn mutate(&self, rng: &mut Rng, base: &[u8], other: &[u8]) -> Vec<u8> {
        let mut v = base.to_vec();
        let edits = 1 + rng.below(4);
        for _ in 0..edits {
            self.edit(rng, &mut v, other);
        }
        // Keep inputs bounded: a mutation never grows a file beyond 4x its seed plus 4 KiB.
        v.truncate(base.len() * 4 + 4096);
        v
    }

    fn edit(&self, rng: &mut Rng, v: &mut Vec<u8>, other: &[u8]) {
        let pos = |rng: &mut Rng, len: usize| rng.below(len as u32 + 1) as usize;
        match rng.below(11) {
            0 if !v.is_empty() => {
                let i = pos(rng, v.len() - 1);
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let i = pos(rng, v.len() - 1);
                v[i] = STRUCTURE[rng.below(STRUCTURE.len() as u32) as usize];
            }
            2 => replace_number(rng, v),
            3 => {
                let i = pos(rng, v.len());
                let w = WORDS[rng.below(WORDS.len() as u32) as usize];
                v.splice(i..i, w.bytes());
            }
            4 => line_edit(rng, v, LineEdit::Delete),
            5 => line_edit(rng, v, LineEdit::Duplicate),
            6 => line_edit(rng, v, LineEdit::Swap),
            7 => {
                let i = pos(rng, v.len());
                v.truncate(i);
            }
            8 if !other.is_empty() => {
                // Splice a slice of another corpus file in.
                let a = pos(rng, other.len() - 1);
                let b = (a + 1 + rng.below(256) as usize).min(other.len());
                let i = pos(rng, v.len());
                v.splice(i..i, other[a..b].iter().copied());
            }
            9 if !v.is_empty() => {
                let a = pos(rng, v.len() - 1);
                let b = (a + 1 + rng.below(64) as usize).min(v.len());
                v.drain(a..b);
            }
            _ => replace_number(rng, v),
        }
    }
}

/// Replaces one number in `v` (a run of digits, `.`, `e`, `-`) by an edge value.
fn replace_number(rng: &mut Rng, v: &mut Vec<u8>) {
    let starts: Vec<usize> = (0..v.len())
        .filter(|&i| v[i].is_ascii_digit() && (i == 0 || !v[i - 1].is_ascii_alphanumeric()))
        .collect();
    if starts.is_empty() {
        return;
    }
    let a = starts[rng.below(starts.len() as u32) as usize];
    let mut b = a;
    while b < v.len() && (v[b].is_ascii_digit() || matches!(v[b], b'.' | b'_' | b'e' | b'-')) {
        b += 1;
    }
    let n = EDGE_NUMBERS[rng.below(EDGE_NUMBERS.len() as u32) as usize];
    v.splice(a..b, n.bytes());
}

enum LineEdit {
    Delete,
    Duplicate,
    Swap,
}

fn line_edit(rng: &mut Rng, v: &mut Vec<u8>, how: LineEdit) {
    let text = std::mem::take(v);
    let mut lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    let n = lines.len() as u32;
    let i = rng.below(n) as usize;
    match how {
        LineEdit::Delete => {
            lines.remove(i);
        }
        LineEdit::Duplicate => {
            let l = lines[i];
            let copies = 1 + rng.below(3);
            for _ in 0..copies {
                lines.insert(i, l);
            }
        }
        LineEdit::Swap => {
            let j = rng.below(n) as usize;
            lines.swap(i, j);
        }
    }
    *v = lines.join(&b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_index_same_input() {
        let m = Mutator::new(7);
        let base = b"hosts = 128\nlink_speed = \"400Gbps\"\n";
        let a = m.mutate(&mut m.rng(42), base, b"tiers = 3");
        let b = m.mutate(&mut m.rng(42), base, b"tiers = 3");
        assert_eq!(a, b);
        let differ = (0..50u64).any(|i| m.mutate(&mut m.rng(i), base, b"") != a);
        assert!(differ, "different indices must give different inputs");
    }

    #[test]
    fn numbers_are_replaced_whole() {
        let mut rng = Rng::new(3);
        let mut v = b"size = 1234.5e6".to_vec();
        replace_number(&mut rng, &mut v);
        let s = String::from_utf8(v).unwrap();
        assert!(s.starts_with("size = ") && !s.contains("1234"), "{s}");
    }
}
