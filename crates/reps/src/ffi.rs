//! C API: `extern "C"` wrappers over [`RepsState`], declared in `include/reps.h`.
//!
//! The state is the same `#[repr(C)]` 25-byte [`RepsState`] (C: `reps_state`); the
//! configuration crosses the boundary as the flat [`CConfig`] (C: `reps_config`).
//! Transitions are returned as `REPS_TRANSITION_*` integers. Randomness is either a
//! function pointer plus context ([`reps_next_ev`]) or a random word supplied by the
//! caller ([`reps_next_ev_with_random`]). Every function tolerates null pointers (it
//! then does nothing and returns 0 / false) and never panics.

use crate::{Coalescing, Config, ConfigError, Ev, ExploreMode, RepsState, Transition};
use core::ffi::c_void;

/// `explore_mode` value for [`ExploreMode::Reference`].
pub const REPS_EXPLORE_REFERENCE: u8 = 0;
/// `explore_mode` value for [`ExploreMode::PaperPseudocode`].
pub const REPS_EXPLORE_PAPER_PSEUDOCODE: u8 = 1;
/// `coalescing` value for [`Coalescing::PerAck`].
pub const REPS_COALESCING_PER_ACK: u8 = 0;
/// `coalescing` value for [`Coalescing::CarryEvs`].
pub const REPS_COALESCING_CARRY_EVS: u8 = 1;
/// `coalescing` value for [`Coalescing::ReuseEvs`] (uses `reuse_max_uses`).
pub const REPS_COALESCING_REUSE_EVS: u8 = 2;
/// Returned for [`Transition::None`].
pub const REPS_TRANSITION_NONE: i32 = 0;
/// Returned for [`Transition::EnteredFreezing`].
pub const REPS_TRANSITION_ENTERED_FREEZING: i32 = 1;
/// Returned for [`Transition::ExitedFreezing`].
pub const REPS_TRANSITION_EXITED_FREEZING: i32 = 2;
/// [`reps_config_validate`]: the configuration is valid.
pub const REPS_CONFIG_OK: i32 = 0;
/// [`reps_config_validate`]: `evs_size` outside 1..=65536.
pub const REPS_CONFIG_BAD_EVS_SIZE: i32 = 1;
/// [`reps_config_validate`]: `freeze_duration` above 2^31 - 1.
pub const REPS_CONFIG_BAD_FREEZE_DURATION: i32 = 2;
/// [`reps_config_validate`]: `reuse_max_uses` outside 1..=16 with Reuse EVs.
pub const REPS_CONFIG_BAD_REUSE_MAX_USES: i32 = 3;
/// [`reps_config_validate`]: unknown `explore_mode` or `coalescing` value.
pub const REPS_CONFIG_BAD_ENUM: i32 = 4;
/// [`reps_config_validate`]: null pointer.
pub const REPS_CONFIG_NULL: i32 = 5;

/// C view of [`Config`] (C: `reps_config`, 16 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CConfig {
    /// See [`Config::evs_size`].
    pub evs_size: u32,
    /// See [`Config::freeze_duration`].
    pub freeze_duration: u32,
    /// See [`Config::explore_packets`].
    pub explore_packets: u16,
    /// One of `REPS_EXPLORE_*`.
    pub explore_mode: u8,
    /// One of `REPS_COALESCING_*`.
    pub coalescing: u8,
    /// `max_uses` when `coalescing == REPS_COALESCING_REUSE_EVS`, ignored otherwise.
    pub reuse_max_uses: u8,
    /// Non-zero: freezing may be entered.
    pub freezing_enabled: u8,
    /// Padding, keep zero.
    pub reserved: [u8; 2],
}

const _: () = assert!(core::mem::size_of::<CConfig>() == 16);

impl CConfig {
    /// The C form of `cfg`.
    pub const fn from_config(cfg: &Config) -> Self {
        let (coalescing, reuse_max_uses) = match cfg.coalescing {
            Coalescing::PerAck => (REPS_COALESCING_PER_ACK, 0),
            Coalescing::CarryEvs => (REPS_COALESCING_CARRY_EVS, 0),
            Coalescing::ReuseEvs { max_uses } => (REPS_COALESCING_REUSE_EVS, max_uses),
        };
        Self {
            evs_size: cfg.evs_size,
            freeze_duration: cfg.freeze_duration,
            explore_packets: cfg.explore_packets,
            explore_mode: match cfg.explore_mode {
                ExploreMode::Reference => REPS_EXPLORE_REFERENCE,
                ExploreMode::PaperPseudocode => REPS_EXPLORE_PAPER_PSEUDOCODE,
            },
            coalescing,
            reuse_max_uses,
            freezing_enabled: cfg.freezing_enabled as u8,
            reserved: [0; 2],
        }
    }

    /// The Rust form; unknown enum values fall back to the defaults.
    pub const fn to_config(&self) -> Config {
        Config {
            evs_size: self.evs_size,
            freeze_duration: self.freeze_duration,
            explore_packets: self.explore_packets,
            explore_mode: match self.explore_mode {
                REPS_EXPLORE_PAPER_PSEUDOCODE => ExploreMode::PaperPseudocode,
                _ => ExploreMode::Reference,
            },
            coalescing: match self.coalescing {
                REPS_COALESCING_CARRY_EVS => Coalescing::CarryEvs,
                REPS_COALESCING_REUSE_EVS => Coalescing::ReuseEvs {
                    max_uses: self.reuse_max_uses,
                },
                _ => Coalescing::PerAck,
            },
            freezing_enabled: self.freezing_enabled != 0,
        }
    }
}

const fn transition_code(t: Transition) -> i32 {
    match t {
        Transition::None => REPS_TRANSITION_NONE,
        Transition::EnteredFreezing => REPS_TRANSITION_ENTERED_FREEZING,
        Transition::ExitedFreezing => REPS_TRANSITION_EXITED_FREEZING,
    }
}

/// Random source built from a C callback; a null callback yields 0.
struct CallbackRandom {
    callback: Option<extern "C" fn(*mut c_void) -> u32>,
    context: *mut c_void,
}

impl crate::RandomSource for CallbackRandom {
    fn next_u32(&mut self) -> u32 {
        match self.callback {
            Some(f) => f(self.context),
            None => 0,
        }
    }
}

/// Random source that hands out one caller-supplied word (then zeros).
struct OneWord(Option<u32>);

impl crate::RandomSource for OneWord {
    fn next_u32(&mut self) -> u32 {
        self.0.take().unwrap_or(0)
    }
}

/// Size of `reps_state` in bytes (25), for C-side layout checks.
#[no_mangle]
pub extern "C" fn reps_state_size() -> usize {
    core::mem::size_of::<RepsState>()
}

/// Fills `*cfg` with [`Config::new`]`(evs_size)` defaults.
///
/// # Safety
/// `cfg` must be null or point to writable memory for one `reps_config`.
#[no_mangle]
pub unsafe extern "C" fn reps_config_init(cfg: *mut CConfig, evs_size: u32) {
    // SAFETY: caller guarantees `cfg` is null or valid for writes.
    if let Some(cfg) = unsafe { cfg.as_mut() } {
        *cfg = CConfig::from_config(&Config::new(evs_size));
    }
}

/// Checks `*cfg`; returns `REPS_CONFIG_OK` or a `REPS_CONFIG_*` error code.
///
/// # Safety
/// `cfg` must be null or point to a readable `reps_config`.
#[no_mangle]
pub unsafe extern "C" fn reps_config_validate(cfg: *const CConfig) -> i32 {
    // SAFETY: caller guarantees `cfg` is null or valid for reads.
    let Some(c) = (unsafe { cfg.as_ref() }) else {
        return REPS_CONFIG_NULL;
    };
    if c.explore_mode > REPS_EXPLORE_PAPER_PSEUDOCODE || c.coalescing > REPS_COALESCING_REUSE_EVS {
        return REPS_CONFIG_BAD_ENUM;
    }
    match c.to_config().validate() {
        Ok(()) => REPS_CONFIG_OK,
        Err(ConfigError::EvsSizeOutOfRange(_)) => REPS_CONFIG_BAD_EVS_SIZE,
        Err(ConfigError::FreezeDurationTooLong(_)) => REPS_CONFIG_BAD_FREEZE_DURATION,
        Err(ConfigError::ReuseMaxUsesOutOfRange(_)) => REPS_CONFIG_BAD_REUSE_MAX_USES,
    }
}

/// Initialises `*state` as a fresh connection ([`RepsState::new`]).
///
/// # Safety
/// `state` must be null or point to writable memory for one `reps_state`.
#[no_mangle]
pub unsafe extern "C" fn reps_init(state: *mut RepsState) {
    // SAFETY: caller guarantees `state` is null or valid for writes.
    if let Some(state) = unsafe { state.as_mut() } {
        *state = RepsState::new();
    }
}

/// [`RepsState::next_ev`] with randomness from `rng(rng_context)` (null `rng`: 0).
///
/// # Safety
/// `state` and `cfg` must be null or valid; `rng` must be safe to call with `rng_context`.
#[no_mangle]
pub unsafe extern "C" fn reps_next_ev(
    state: *mut RepsState,
    cfg: *const CConfig,
    rng: Option<extern "C" fn(*mut c_void) -> u32>,
    rng_context: *mut c_void,
) -> Ev {
    // SAFETY: caller guarantees both pointers are null or valid.
    let (Some(state), Some(cfg)) = (unsafe { state.as_mut() }, unsafe { cfg.as_ref() }) else {
        return 0;
    };
    let mut rng = CallbackRandom {
        callback: rng,
        context: rng_context,
    };
    state.next_ev(&cfg.to_config(), &mut rng)
}

/// [`RepsState::next_ev`] using `random` as the random word if one is needed.
///
/// # Safety
/// `state` and `cfg` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn reps_next_ev_with_random(
    state: *mut RepsState,
    cfg: *const CConfig,
    random: u32,
) -> Ev {
    // SAFETY: caller guarantees both pointers are null or valid.
    let (Some(state), Some(cfg)) = (unsafe { state.as_mut() }, unsafe { cfg.as_ref() }) else {
        return 0;
    };
    state.next_ev(&cfg.to_config(), &mut OneWord(Some(random)))
}

/// [`RepsState::on_ack`]; returns a `REPS_TRANSITION_*` code.
///
/// # Safety
/// `state` and `cfg` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn reps_on_ack(
    state: *mut RepsState,
    cfg: *const CConfig,
    ev: Ev,
    ecn_marked: bool,
    now: u32,
) -> i32 {
    // SAFETY: caller guarantees both pointers are null or valid.
    let (Some(state), Some(cfg)) = (unsafe { state.as_mut() }, unsafe { cfg.as_ref() }) else {
        return REPS_TRANSITION_NONE;
    };
    transition_code(state.on_ack(&cfg.to_config(), ev, ecn_marked, now))
}

/// [`RepsState::on_coalesced_ack`] over `evs[0..len]`; returns a `REPS_TRANSITION_*` code.
///
/// # Safety
/// `state` and `cfg` must be null or valid; `evs` must be null (then `len` is ignored) or
/// point to `len` readable EVs.
#[no_mangle]
pub unsafe extern "C" fn reps_on_coalesced_ack(
    state: *mut RepsState,
    cfg: *const CConfig,
    evs: *const Ev,
    len: usize,
    ecn_marked: bool,
    now: u32,
) -> i32 {
    // SAFETY: caller guarantees both pointers are null or valid.
    let (Some(state), Some(cfg)) = (unsafe { state.as_mut() }, unsafe { cfg.as_ref() }) else {
        return REPS_TRANSITION_NONE;
    };
    let evs: &[Ev] = if evs.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: caller guarantees `evs` points to `len` readable EVs.
        unsafe { core::slice::from_raw_parts(evs, len) }
    };
    transition_code(state.on_coalesced_ack(&cfg.to_config(), evs, ecn_marked, now))
}

/// [`RepsState::on_nack`]; returns a `REPS_TRANSITION_*` code.
///
/// # Safety
/// `state` and `cfg` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn reps_on_nack(
    state: *mut RepsState,
    cfg: *const CConfig,
    ev: Ev,
    now: u32,
) -> i32 {
    // SAFETY: caller guarantees both pointers are null or valid.
    let (Some(state), Some(cfg)) = (unsafe { state.as_mut() }, unsafe { cfg.as_ref() }) else {
        return REPS_TRANSITION_NONE;
    };
    transition_code(state.on_nack(&cfg.to_config(), ev, now))
}

/// [`RepsState::on_failure_detected`]; returns a `REPS_TRANSITION_*` code.
///
/// # Safety
/// `state` and `cfg` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn reps_on_failure_detected(
    state: *mut RepsState,
    cfg: *const CConfig,
    now: u32,
) -> i32 {
    // SAFETY: caller guarantees both pointers are null or valid.
    let (Some(state), Some(cfg)) = (unsafe { state.as_mut() }, unsafe { cfg.as_ref() }) else {
        return REPS_TRANSITION_NONE;
    };
    transition_code(state.on_failure_detected(&cfg.to_config(), now))
}

/// [`RepsState::is_frozen`] (false for null).
///
/// # Safety
/// `state` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn reps_is_frozen(state: *const RepsState) -> bool {
    // SAFETY: caller guarantees `state` is null or valid.
    unsafe { state.as_ref() }.is_some_and(RepsState::is_frozen)
}

/// [`RepsState::valid_count`] (0 for null).
///
/// # Safety
/// `state` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn reps_valid_count(state: *const RepsState) -> u8 {
    // SAFETY: caller guarantees `state` is null or valid.
    unsafe { state.as_ref() }.map_or(0, RepsState::valid_count)
}

/// [`RepsState::cached_count`] (0 for null).
///
/// # Safety
/// `state` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn reps_cached_count(state: *const RepsState) -> u8 {
    // SAFETY: caller guarantees `state` is null or valid.
    unsafe { state.as_ref() }.map_or(0, RepsState::cached_count)
}

/// [`RepsState::explore_remaining`] (0 for null).
///
/// # Safety
/// `state` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn reps_explore_remaining(state: *const RepsState) -> u16 {
    // SAFETY: caller guarantees `state` is null or valid.
    unsafe { state.as_ref() }.map_or(0, RepsState::explore_remaining)
}

/// [`RepsState::freezing_until`]: if frozen, stores the deadline in `*until` (when not
/// null) and returns true; otherwise returns false and leaves `*until` alone.
///
/// # Safety
/// `state` must be null or valid; `until` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn reps_freezing_until(state: *const RepsState, until: *mut u32) -> bool {
    // SAFETY: caller guarantees `state` is null or valid.
    let Some(deadline) = unsafe { state.as_ref() }.and_then(RepsState::freezing_until) else {
        return false;
    };
    // SAFETY: caller guarantees `until` is null or valid for writes.
    if let Some(out) = unsafe { until.as_mut() } {
        *out = deadline;
    }
    true
}
