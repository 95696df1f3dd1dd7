//! A shared-buffer switch MMU for priority flow control (PFC, lossless fabrics).
//!
//! Every switch owns one buffer. Data bytes are charged to the account of the (ingress port,
//! priority) they arrived on, in three parts: a small per-account *reserve*, the switch's
//! *shared pool*, and a per-port *headroom* that absorbs what is still in flight after the
//! switch asked its upstream neighbour to pause. One lossless priority carries all data
//! (data lane); control packets (ACK, NACK, CNP, PULL, pause frames: the header lane) are a
//! strict-priority class that is never paused and not charged.
//!
//! An account is paused when its shared use reaches its threshold or its headroom is in use
//! (bytes go to headroom only while it is paused, or when the shared pool is full),
//! and resumed when its headroom is empty and its shared use is below the threshold by the
//! resume offset. The threshold is either *dynamic* (Broadcom-like, as the ConWeave
//! simulator: `alpha x (pool limit - pool used)`) or *static* (as the LAPS simulator: the pool
//! split evenly over the switch's ports). Bytes leave their account when the packet leaves the
//! switch's egress queue. Egress admission is dynamic too (ConWeave's MMU): a packet whose
//! egress queue would hold more than `alpha_egress x (buffer - bytes in the switch)` is
//! dropped, as is one whose headroom is exhausted; [`Mmu::drops`] counts them so that tests
//! can assert a lossless run. The LAPS MMU has no egress check (`egress_admission = false`):
//! under a static threshold an incast through a switch of many ports fills one egress queue
//! past half the buffer before the ingress accounts pause, and the check would drop what that
//! MMU keeps; ingress accounting alone bounds the buffer (reserve + pool + headroom).
//!
//! Packets a switch scheme holds (ConWeave's reorder queues) are outside this accounting, as in
//! the reference, and stay outside it when released: charging a released burst to its ingress
//! account found that account's headroom long since used and dropped packets of a "lossless"
//! fabric (the registry-driven PFC test caught it).
use serde::{Deserialize, Serialize};

use crate::engine::time::SEC;
use crate::engine::Time;
use crate::net::Topology;

mod config;
pub use config::PfcConfig;

/// How the pause threshold of an ingress account is set (`[pfc] threshold = "dynamic"` or
/// `"static"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThresholdMode {
    /// `alpha x (shared pool limit - shared pool used)` (ConWeave's Broadcom-like MMU).
    Dynamic,
    /// `(buffer - all headroom - all reserves) / ports` per port (LAPS's MMU).
    Static,
}

/// PFC and switch-buffer settings of a run, in bytes and picoseconds (resolved from a
/// [`PfcConfig`] at the run's MTU).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PfcParams {
    /// PFC and the shared-buffer MMU are on (off: egress queues as configured in `[queue]`).
    pub enabled: bool,
    /// Buffer per switch, or per port when `buffer_extra_ports` is set.
    pub buffer: u64,
    /// `Some(e)`: a switch with n ports holds `buffer x (n + e)` (the LAPS simulator sizes
    /// every switch 1 MiB x (ports + 2)); `None`: every switch holds `buffer`.
    pub buffer_extra_ports: Option<u32>,
    /// Dynamic or static pause threshold.
    pub threshold: ThresholdMode,
    /// Dynamic threshold's share of the free shared pool.
    pub alpha: f64,
    /// Headroom per ingress port (`None`: rate x link delay / 8 x 2 + 2 x MTU of that port).
    pub headroom: Option<u64>,
    /// Bytes reserved per (ingress port, priority) before the shared pool is used.
    pub reserve: u64,
    /// Pause time a pause frame asks for.
    pub quantum: Time,
    /// Send resume frames (off: a paused port waits for its quantum to run out).
    pub resume: bool,
    /// Re-send the pause of a still-congested ingress every half quantum, as switches do
    /// (off: one pause per episode that runs out after its quantum, as the ns-3 code of
    /// ConWeave and LAPS; the upstream then sends into headroom, and past it packets drop).
    pub refresh: bool,
    /// Resume hysteresis (`None`: 16 B inside the dynamic threshold's free pool, 3 KiB below
    /// the static threshold, as the two reference MMUs do).
    pub resume_offset: Option<u64>,
    /// Egress admission: a queue may hold up to this share of the switch's free buffer.
    pub alpha_egress: f64,
    /// Check egress admission at all (off: only ingress accounting, as the LAPS MMU).
    pub egress_admission: bool,
    /// Stop the run as deadlocked when no data packet has reached a receiver for this long
    /// while pauses keep being sent or running out and the paused links close a cycle between
    /// switches (0: never).
    pub deadlock_after: Time,
}

impl Default for PfcParams {
    /// [`PfcConfig`]'s defaults at 4,150-byte packets.
    fn default() -> Self {
        PfcConfig::default().bytes(4150)
    }
}

impl PfcParams {
    /// Checks the numbers that do not depend on a topology; an error is the `[pfc]` key at
    /// fault and the message.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return Err((
                "alpha",
                format!("alpha must be in (0, 1], not {}", self.alpha),
            ));
        }
        if !(self.alpha_egress > 0.0 && self.alpha_egress <= 64.0) {
            return Err((
                "alpha_egress",
                format!("alpha_egress must be in (0, 64], not {}", self.alpha_egress),
            ));
        }
        if self.quantum == 0 {
            return Err(("quantum", "quantum must be positive".into()));
        }
        if self.buffer == 0 {
            return Err(("buffer", "buffer must be positive".into()));
        }
        Ok(())
    }

    /// The buffer of a switch with `ports` ports.
    pub fn switch_buffer(&self, ports: usize) -> u64 {
        match self.buffer_extra_ports {
            Some(extra) => self.buffer * (ports as u64 + extra as u64),
            None => self.buffer,
        }
    }

    /// Default headroom of a port fed at `rate_bps` over a link of `latency`: what arrives in
    /// one round trip of the link plus two packets (the one the upstream is serializing when
    /// the pause lands and the one ahead of the pause frame here).
    pub fn default_headroom(rate_bps: u64, latency: Time, mtu: u32) -> u64 {
        (rate_bps as u128 * latency as u128 * 2 / (8 * SEC as u128)) as u64 + 2 * mtu as u64
    }
}

/// Marks a link that does not end at a switch (no account).
const NONE: u32 = u32::MAX;

/// One (ingress port, priority) account.
#[derive(Clone, Copy, Debug, Default)]
struct Account {
    /// Switch index the link ends at (`NONE`: a host).
    switch: u32,
    headroom_limit: u64,
    reserve_used: u64,
    shared_used: u64,
    headroom_used: u64,
    max_headroom_used: u64,
    paused: bool,
}

/// One switch's buffer.
#[derive(Clone, Copy, Debug, Default)]
struct Pool {
    /// The switch's whole buffer.
    buffer: u64,
    /// Shared-pool limit: buffer minus every headroom and reserve.
    limit: u64,
    /// Shared bytes in use.
    used: u64,
    /// Every byte charged (reserve, shared, headroom).
    total: u64,
    /// Static threshold per port.
    static_threshold: u64,
    /// Accounts currently paused.
    paused: u32,
}

/// What admission decided for a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charge {
    /// Charged; nothing to do.
    Queued,
    /// Charged, and its ingress account just became paused: send a pause frame upstream.
    Pause,
    /// No room (headroom exhausted or egress admission refused): the packet is dropped.
    Dropped,
}

/// The MMUs of every switch of a run.
pub struct Mmu {
    threshold: ThresholdMode,
    alpha: f64,
    alpha_egress: f64,
    egress_admission: bool,
    reserve: u64,
    resume_offset: u64,
    /// Per link: its account at the switch it ends at.
    accounts: Vec<Account>,
    /// Per link: the switch it leaves (`NONE`: a host's uplink).
    from_switch: Vec<u32>,
    /// Per link: bytes charged to its egress queue.
    egress_bytes: Vec<u64>,
    pools: Vec<Pool>,
    /// Ingress links of each switch: `ingress[ingress_start[s]..ingress_start[s + 1]]`.
    ingress: Vec<u32>,
    ingress_start: Vec<u32>,
    drops: u64,
}

impl Mmu {
    /// The MMUs of `topo`'s switches; an error names a switch whose buffer cannot hold its
    /// headroom and reserves.
    pub fn new(cfg: &PfcParams, topo: &Topology, mtu: u32) -> Result<Mmu, String> {
        cfg.validate().map_err(|(_, message)| message)?;
        let n_sw = topo.switches.len();
        let mut accounts = vec![
            Account {
                switch: NONE,
                ..Account::default()
            };
            topo.links.len()
        ];
        let mut from_switch = vec![NONE; topo.links.len()];
        let mut per_switch: Vec<Vec<u32>> = vec![Vec::new(); n_sw];
        for (i, l) in topo.links.iter().enumerate() {
            if l.from >= topo.hosts {
                from_switch[i] = l.from - topo.hosts;
            }
            if l.to >= topo.hosts {
                let s = l.to - topo.hosts;
                accounts[i].switch = s;
                accounts[i].headroom_limit = cfg
                    .headroom
                    .unwrap_or_else(|| PfcParams::default_headroom(l.rate_bps, l.latency, mtu));
                per_switch[s as usize].push(i as u32);
            }
        }
        let mut pools = vec![Pool::default(); n_sw];
        let mut ingress = Vec::with_capacity(topo.links.len());
        let mut ingress_start = Vec::with_capacity(n_sw + 1);
        for (s, links) in per_switch.iter().enumerate() {
            ingress_start.push(ingress.len() as u32);
            ingress.extend_from_slice(links);
            let headroom: u64 = links
                .iter()
                .map(|&l| accounts[l as usize].headroom_limit)
                .sum();
            let reserves = cfg.reserve * links.len() as u64;
            let buffer = cfg.switch_buffer(links.len());
            let Some(limit) = buffer.checked_sub(headroom + reserves).filter(|&l| l > 0) else {
                return Err(format!(
                    "buffer ({} B) of switch {} is too small for its {} ports' headroom ({headroom} B) and reserves ({reserves} B)",
                    buffer,
                    topo.node_name(topo.switch_node(s as u32)),
                    links.len()
                ));
            };
            pools[s].buffer = buffer;
            pools[s].limit = limit;
            pools[s].static_threshold = limit / links.len().max(1) as u64;
        }
        ingress_start.push(ingress.len() as u32);
        let resume_offset = cfg.resume_offset.unwrap_or(match cfg.threshold {
            ThresholdMode::Dynamic => 16,
            ThresholdMode::Static => 3 * 1024,
        });
        Ok(Mmu {
            threshold: cfg.threshold,
            alpha: cfg.alpha,
            alpha_egress: cfg.alpha_egress,
            egress_admission: cfg.egress_admission,
            reserve: cfg.reserve,
            resume_offset,
            accounts,
            from_switch,
            egress_bytes: vec![0; topo.links.len()],
            pools,
            ingress,
            ingress_start,
            drops: 0,
        })
    }

    /// Takes from `other`, the MMUs of the same run kept by another partition, the state of
    /// the switches `theirs` names (by switch index): their accounts, pools and egress
    /// charges; `other`'s drops are added.
    pub fn absorb(&mut self, other: &Mmu, theirs: impl Fn(u32) -> bool) {
        for (mine, their) in self.accounts.iter_mut().zip(&other.accounts) {
            if mine.switch != NONE && theirs(mine.switch) {
                *mine = *their;
            }
        }
        for (l, &s) in self.from_switch.iter().enumerate() {
            if s != NONE && theirs(s) {
                self.egress_bytes[l] = other.egress_bytes[l];
            }
        }
        for (s, pool) in self.pools.iter_mut().enumerate() {
            if theirs(s as u32) {
                *pool = other.pools[s];
            }
        }
        self.drops += other.drops;
    }

    /// True when a data packet that arrived on link `ingress` and queues at egress port
    /// `egress` is charged (both belong to one switch; packets a scheme made or released,
    /// whose ingress is [`crate::net::packet::RELEASED`], are not).
    #[inline]
    pub fn charges(&self, ingress: u32, egress: u32) -> bool {
        let s = self.from_switch[egress as usize];
        s != NONE && self.accounts.get(ingress as usize).map(|a| a.switch) == Some(s)
    }

    /// The pause threshold of switch `s`'s accounts now.
    pub fn threshold(&self, s: u32) -> u64 {
        let pool = &self.pools[s as usize];
        match self.threshold {
            ThresholdMode::Static => pool.static_threshold,
            ThresholdMode::Dynamic => {
                (self.alpha * pool.limit.saturating_sub(pool.used) as f64) as u64
            }
        }
    }

    fn needs_pause(&self, a: &Account) -> bool {
        a.headroom_used > 0 || a.shared_used >= self.threshold(a.switch)
    }

    fn may_resume(&self, a: &Account) -> bool {
        if a.headroom_used > 0 {
            return false;
        }
        let pool = &self.pools[a.switch as usize];
        match self.threshold {
            ThresholdMode::Static => a.shared_used + self.resume_offset <= pool.static_threshold,
            ThresholdMode::Dynamic => {
                let free = pool.limit.saturating_sub(pool.used + self.resume_offset);
                (a.shared_used as f64) < self.alpha * free as f64
            }
        }
    }

    /// Charges `size` bytes arriving on `ingress` for egress queue `egress` (call only when
    /// [`Self::charges`]): reserve first, then the shared pool until the account is paused,
    /// then headroom. Says whether the account must now be paused or the packet dropped.
    pub fn admit(&mut self, ingress: u32, egress: u32, size: u64) -> Charge {
        let acc = self.accounts[ingress as usize];
        let s = acc.switch as usize;
        let pool = self.pools[s];
        let free = pool.buffer.saturating_sub(pool.total);
        if self.egress_admission
            && (self.egress_bytes[egress as usize] + size) as f64 > self.alpha_egress * free as f64
        {
            self.drops += 1;
            return Charge::Dropped;
        }
        let a = &mut self.accounts[ingress as usize];
        if a.reserve_used + size <= self.reserve {
            a.reserve_used += size;
        } else if !a.paused && pool.used + size <= pool.limit {
            // Until it is paused an account takes from the shared pool, so that headroom only
            // holds what arrives after the pause decision (the packet that reaches the
            // threshold may overshoot it).
            a.shared_used += size;
            self.pools[s].used += size;
        } else if a.headroom_used + size <= a.headroom_limit {
            a.headroom_used += size;
            a.max_headroom_used = a.max_headroom_used.max(a.headroom_used);
        } else {
            self.drops += 1;
            return Charge::Dropped;
        }
        self.pools[s].total += size;
        self.egress_bytes[egress as usize] += size;
        let a = self.accounts[ingress as usize];
        if !a.paused && self.needs_pause(&a) {
            self.accounts[ingress as usize].paused = true;
            self.pools[s].paused += 1;
            return Charge::Pause;
        }
        Charge::Queued
    }

    /// Returns `size` bytes of a packet leaving egress queue `egress` to its ingress account
    /// (headroom first, then shared, then reserve). Returns the switch when some of its
    /// accounts are paused (the caller then asks [`Self::resumable`]).
    pub fn release(&mut self, ingress: u32, egress: u32, size: u64) -> Option<u32> {
        let a = &mut self.accounts[ingress as usize];
        let s = a.switch as usize;
        let from_headroom = size.min(a.headroom_used);
        a.headroom_used -= from_headroom;
        let from_shared = (size - from_headroom).min(a.shared_used);
        a.shared_used -= from_shared;
        a.reserve_used -= size - from_headroom - from_shared;
        let pool = &mut self.pools[s];
        pool.used -= from_shared;
        pool.total -= size;
        self.egress_bytes[egress as usize] -= size;
        (pool.paused > 0).then_some(s as u32)
    }

    /// Un-pauses the paused accounts of switch `s` that may resume and appends their links to
    /// `out`.
    pub fn resumable(&mut self, s: u32, out: &mut Vec<u32>) {
        let (a, b) = (
            self.ingress_start[s as usize] as usize,
            self.ingress_start[s as usize + 1] as usize,
        );
        for i in a..b {
            let l = self.ingress[i];
            let acc = self.accounts[l as usize];
            if acc.paused && self.may_resume(&acc) {
                self.accounts[l as usize].paused = false;
                self.pools[s as usize].paused -= 1;
                out.push(l);
            }
        }
    }

    /// True while the account of ingress link `link` is paused (the switch keeps refreshing
    /// its pause).
    pub fn is_paused(&self, link: u32) -> bool {
        self.accounts[link as usize].paused
    }

    /// Packets dropped for lack of buffer (zero in a lossless run).
    pub fn drops(&self) -> u64 {
        self.drops
    }

    /// Largest headroom use seen on ingress link `link`, and its headroom.
    pub fn headroom_peak(&self, link: u32) -> (u64, u64) {
        let a = &self.accounts[link as usize];
        (a.max_headroom_used, a.headroom_limit)
    }

    /// Bytes charged on ingress link `link` now: (reserve, shared, headroom).
    pub fn usage(&self, link: u32) -> (u64, u64, u64) {
        let a = &self.accounts[link as usize];
        (a.reserve_used, a.shared_used, a.headroom_used)
    }

    /// Bytes charged at switch `s` now (every account).
    pub fn switch_bytes(&self, s: u32) -> u64 {
        self.pools[s as usize].total
    }

    /// Shared-pool limit of switch `s`.
    pub fn pool_limit(&self, s: u32) -> u64 {
        self.pools[s as usize].limit
    }
}

#[cfg(test)]
mod tests;
