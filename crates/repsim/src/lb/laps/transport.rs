//! The LAPS transport of a connection (seed 003, `peers.md` 1.3-1.7), which LAPS brings in
//! place of the run's congestion control and retransmission timer ([`OwnTransport`]): a fixed
//! window of 2 T C, AIMD rate control driven by the load balancer's path latencies (paced at
//! the current rate by default), per-path outstanding lists whose order gives loss detection,
//! and a timeout per path. The path choice, probes and latency table are the load balancer's
//! ([`super::Laps`]); the receiver answers every data packet at once with a selective ACK that
//! echoes the one-way delay and returns on the reverse route.
//!
//! Choices:
//! - A path is a FIFO, so an ACK for the k-th packet outstanding on path p means the packets
//!   before it on p were lost: they are declared lost (and retransmitted, lowest PSN first,
//!   before new data) at once. Entries whose packet was acknowledged otherwise or sent again
//!   since are skipped. An ACK whose packet is no longer listed (its path already timed out)
//!   declares nothing.
//! - Per-path timeout: a path whose list is not empty and that saw neither a send nor such an
//!   ACK for `rto` has every listed packet declared lost. One connection timer serves all
//!   paths (it wakes at the earliest path deadline).
//! - Rate: every data ACK, after the latency update: if every valid path is over T and the
//!   decrease guard has passed, the expected rate becomes the current one and the current one
//!   halves (not below `min_rate`); otherwise, at most once per 2T, the current rate moves
//!   halfway to the expected one (by at least `additive_step`), and from the `hyper_after`-th
//!   consecutive increase on the expected rate doubles first (capped at the line rate). With
//!   the paper's guard one adjustment of either kind blocks both for 2T (the paper allows one
//!   rate change per 2T, whichever its direction); with the code's, decreases are 2 x the
//!   largest latency apart and increases 2T apart, each regardless of the other.
//! - The congestion control the run configures is not used by LAPS connections (the code
//!   ignores ECN and CNPs in LAPS mode); RTS are never sent.
use std::collections::VecDeque;

use super::{Laps, LapsConfig, LapsDecreaseGuard, PathSignal};
use crate::engine::time::SEC;
use crate::engine::Time;
use crate::lb::{LoadBalancer, OwnTransport};

/// The LAPS transport state of one connection.
#[derive(Clone, Debug)]
pub struct LapsTransport {
    /// Bytes in flight allowed: 2 T C.
    window: u64,
    /// T, the target delay.
    target: Time,
    /// NIC line rate (bits per second).
    line_rate: u64,
    /// Pace at `cur_rate`.
    pacing: bool,
    /// Per-path timeout.
    rto: Time,
    /// Increases after which the expected rate doubles.
    hyper_after: u32,
    /// Lowest rate.
    min_rate: u64,
    /// Smallest increase.
    additive_step: u64,
    /// Interval between decreases.
    decrease_guard: LapsDecreaseGuard,
    /// Current rate.
    cur_rate: u64,
    /// Expected rate.
    tgt_rate: u64,
    /// Consecutive increases.
    inc_stage: u32,
    /// No increase before this time.
    next_inc: Time,
    /// No decrease before this time.
    next_dec: Time,
    /// Per path (the load balancer's EV is the path index): (PSN, send time) of every packet
    /// sent on it and not yet acknowledged or declared lost, in sending order.
    outstanding: Vec<VecDeque<(u32, Time)>>,
    /// Per path: the latest send or ACK that left packets listed (its timeout counts from
    /// there).
    touched: Vec<Time>,
}

impl LapsTransport {
    /// The transport of a connection over `paths` candidate routes whose largest idle
    /// baseline is `target`, on a NIC of `line_rate` sending `mtu`-byte packets.
    pub fn new(config: &LapsConfig, paths: usize, target: Time, line_rate: u64, mtu: u32) -> Self {
        let window = ((2 * target as u128 * line_rate as u128) / (8 * SEC as u128)) as u64;
        let window = window.max(mtu as u64);
        // Preallocated for a window's worth of packets spread over the paths.
        let per_path = (window / mtu as u64) as usize / paths.max(1) + 4;
        LapsTransport {
            window,
            target,
            line_rate,
            pacing: config.pacing,
            rto: config.rto.0,
            hyper_after: config.hyper_after,
            min_rate: config.min_rate.0.min(line_rate),
            additive_step: config.additive_step.0,
            decrease_guard: config.decrease_guard,
            cur_rate: line_rate,
            tgt_rate: line_rate,
            inc_stage: 0,
            next_inc: 0,
            next_dec: 0,
            outstanding: (0..paths)
                .map(|_| VecDeque::with_capacity(per_path))
                .collect(),
            touched: vec![0; paths],
        }
    }

    /// The current rate.
    pub fn rate(&self) -> u64 {
        self.cur_rate
    }

    /// The expected rate.
    pub fn expected_rate(&self) -> u64 {
        self.tgt_rate
    }

    /// Consecutive increases so far.
    pub fn increases(&self) -> u32 {
        self.inc_stage
    }

    /// AIMD on one data ACK, given the load balancer's signal.
    pub fn on_path_signal(&mut self, now: Time, signal: &PathSignal) {
        if signal.congested {
            if now > self.next_dec {
                self.tgt_rate = self.cur_rate.max(self.min_rate);
                self.cur_rate = (self.cur_rate / 2).max(self.min_rate);
                self.inc_stage = 0;
                match self.decrease_guard {
                    LapsDecreaseGuard::Target => {
                        // One adjustment of either kind per 2T: the halving must show in the
                        // latencies before the rate moves again.
                        self.next_dec = now + 2 * self.target;
                        self.next_inc = self.next_dec;
                    }
                    LapsDecreaseGuard::Latency => self.next_dec = now + 2 * signal.max_latency,
                }
            }
        } else if now > self.next_inc {
            if self.inc_stage >= self.hyper_after {
                self.tgt_rate = (2 * self.tgt_rate).clamp(self.min_rate, self.line_rate);
            }
            let halfway = (self.cur_rate + self.tgt_rate) / 2;
            self.cur_rate = (self.cur_rate + self.additive_step)
                .max(halfway)
                .min(self.line_rate);
            self.tgt_rate = self.tgt_rate.max(self.cur_rate);
            self.inc_stage += 1;
            self.next_inc = now + 2 * self.target;
            if self.decrease_guard == LapsDecreaseGuard::Target {
                self.next_dec = self.next_dec.max(self.next_inc);
            }
        }
    }
}

impl OwnTransport for LapsTransport {
    /// Bytes in flight allowed.
    fn window(&self) -> u64 {
        self.window
    }

    /// The rate the NIC spaces packets at, if below line rate and pacing is on.
    #[inline]
    fn pacing_rate(&self) -> Option<u64> {
        (self.pacing && self.cur_rate < self.line_rate).then_some(self.cur_rate)
    }

    /// Records packet `psn` sent on path `path` at `now`.
    #[inline]
    fn on_send(&mut self, path: u16, psn: u32, now: Time) {
        let p = path as usize;
        self.outstanding[p].push_back((psn, now));
        self.touched[p] = now;
    }

    /// Pops the packets listed before `psn` (sent at `sent_at`) on `path`, which its ACK shows
    /// lost, and then `psn` itself; the path's timeout restarts if packets remain listed.
    fn on_ack(
        &mut self,
        now: Time,
        path: u16,
        psn: u32,
        sent_at: Time,
        lost: &mut dyn FnMut(u32, Time),
    ) {
        let p = path as usize;
        let Some(list) = self.outstanding.get_mut(p) else {
            return;
        };
        let Some(at) = list
            .iter()
            .position(|&(listed, sent)| listed == psn && sent == sent_at)
        else {
            return;
        };
        for (psn, sent) in list.drain(..at) {
            lost(psn, sent);
        }
        list.pop_front();
        if !list.is_empty() {
            self.touched[p] = now;
        }
    }

    /// AIMD on one data ACK, after the connection's [`Laps`] updated its latency table.
    fn after_ack(&mut self, now: Time, lb: &dyn LoadBalancer) {
        if let Some(laps) = lb.as_any().downcast_ref::<Laps>() {
            self.on_path_signal(now, &laps.path_signal());
        }
    }

    /// The earliest deadline of a path with packets listed.
    fn next_deadline(&self) -> Option<Time> {
        self.outstanding
            .iter()
            .zip(&self.touched)
            .filter(|(list, _)| !list.is_empty())
            .map(|(_, &t)| t + self.rto)
            .min()
    }

    /// The first packet listed on any path.
    fn oldest_listed(&self) -> Option<u32> {
        self.outstanding
            .iter()
            .find_map(|l| l.front())
            .map(|&(psn, _)| psn)
    }

    /// Every path whose deadline passed at `now` has its listed packets declared lost.
    fn time_out(&mut self, now: Time, lost: &mut dyn FnMut(u16, Option<(u32, Time)>)) {
        for (p, list) in self.outstanding.iter_mut().enumerate() {
            if list.is_empty() || self.touched[p] + self.rto > now {
                continue;
            }
            for entry in list.drain(..) {
                lost(p as u16, Some(entry));
            }
            lost(p as u16, None);
        }
    }

    /// Heap bytes of the per-path lists.
    fn heap_bytes(&self) -> usize {
        self.outstanding
            .iter()
            .map(|l| l.capacity() * std::mem::size_of::<(u32, Time)>())
            .sum::<usize>()
            + self.touched.capacity() * std::mem::size_of::<Time>()
    }
}
