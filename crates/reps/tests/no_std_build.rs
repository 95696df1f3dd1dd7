//! Proves the library is usable from a `#![no_std]` firmware image.
//!
//! 1. `src/lib.rs` is compiled on its own as an rlib without the `std` feature.
//! 2. A tiny `#![no_std]` "firmware" crate that defines its **own** `#[panic_handler]` is
//!    linked against it as a static library. If `reps` pulled in `std` (directly or via a
//!    dependency), rustc would reject the second panic handler ("duplicate lang item"),
//!    and if it needed `alloc` the link would lack a global allocator.
//! 3. The sources are scanned for floating-point types and the `alloc` crate.
//!
//! CI can additionally run `cargo build -p reps --no-default-features`.

mod support;

const FIRMWARE: &str = r#"
#![no_std]
use reps::{Config, RandomSource, RepsState, Transition};

/// A 32-bit Galois LFSR, the kind of generator NIC firmware already has.
struct Lfsr(u32);
impl RandomSource for Lfsr {
    fn next_u32(&mut self) -> u32 {
        let mut word = 0;
        for _ in 0..32 {
            let bit = self.0 & 1;
            self.0 >>= 1;
            if bit != 0 {
                self.0 ^= 0xA300_0000;
            }
            word = (word << 1) | bit;
        }
        word
    }
}

static CONFIG: Config = Config::new(256);

#[no_mangle]
pub extern "C" fn firmware_step(state: &mut RepsState, ack_ev: u16, marked: bool, now: u32) -> u16 {
    let mut rng = Lfsr(now | 1);
    if state.on_ack(&CONFIG, ack_ev, marked, now) == Transition::ExitedFreezing {
        return u16::MAX;
    }
    if marked {
        let _ = state.on_failure_detected(&CONFIG, now);
    }
    state.next_ev(&CONFIG, &mut rng)
}

#[panic_handler]
fn on_panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
"#;

#[test]
fn links_into_a_no_std_firmware_image_with_its_own_panic_handler() {
    let dir = support::scratch_dir("reps_no_std");
    let mut lib = support::rustc();
    lib.args([
        "--crate-name",
        "reps",
        "--crate-type",
        "rlib",
        "--edition",
        "2021",
    ])
    .args(["-C", "panic=abort", "-C", "opt-level=1"])
    .arg(support::crate_dir().join("src/lib.rs"))
    .arg("--out-dir")
    .arg(&dir);
    support::run(lib);

    let firmware = dir.join("firmware.rs");
    std::fs::write(&firmware, FIRMWARE).unwrap();
    let mut image = support::rustc();
    image
        .args([
            "--crate-name",
            "firmware",
            "--crate-type",
            "staticlib",
            "--edition",
            "2021",
        ])
        .args(["-C", "panic=abort", "-C", "opt-level=1", "-D", "warnings"])
        .arg("--extern")
        .arg(format!("reps={}", dir.join("libreps.rlib").display()))
        .arg(&firmware)
        .arg("--out-dir")
        .arg(&dir);
    support::run(image);
    assert!(dir.join("libfirmware.a").is_file());
}

#[test]
fn sources_use_no_floats_and_no_alloc() {
    for file in ["src/lib.rs", "src/ffi.rs"] {
        let text = std::fs::read_to_string(support::crate_dir().join(file)).unwrap();
        for forbidden in [
            "f32",
            "f64",
            "extern crate alloc",
            "alloc::",
            "Box<",
            "Vec<",
        ] {
            assert!(!text.contains(forbidden), "{file} mentions `{forbidden}`");
        }
        assert!(
            text.contains("#![no_std]") || file != "src/lib.rs",
            "lib.rs must be unconditionally no_std"
        );
    }
}
