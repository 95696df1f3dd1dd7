//! The sending side of a connection.
//!
//! PSNs are handed out in sending order: every first transmission of a data packet and every
//! RTS takes the next one, so after an RTS the data packet with index k travels with a PSN
//! above k (as in the reference simulator). Records live in a ring that starts at the
//! cumulative point, so a 1 GiB flow costs what an 8 MiB flow with the same window costs.
//!
//! The RoCE NIC modes' recovery (go-back-N and IRN, see [`super::mode`]) lives in `gbn.rs` and
//! `irn.rs`; the per-PSN records and the values the methods return in `records.rs`; the
//! retransmission timer, what a timeout declares lost and the RTS it may call for in
//! `timeout.rs`; the congestion control's and load balancer's own timers and probe answers in
//! `scheme_events.rs`.
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use records::PsnRing;
pub use records::{
    record_flags, AckInfo, AckOutcome, ConnectionState, PsnRecord, PsnState, RtoCheck, Timeout,
    Transmission,
};

use super::{FlowStats, Recovery, Sizes, TransportMode};
use crate::cc::{AckSample, CongestionControl};
use crate::engine::prefetch::prefetch;
use crate::engine::time::serialization;
use crate::engine::{Rng, Time};
use crate::lb::{AckFeedback, LbEvent, LoadBalancer, OwnTransport};

/// Sender state of one connection.
pub struct Sender {
    sizes: Sizes,
    /// Data packets sent at least once (the next new data packet's index).
    next_data: u32,
    /// PSNs handed out so far.
    next_psn: u32,
    /// All PSNs below this are acknowledged.
    cum_acked: u32,
    /// A record per PSN from the ring's base (at most `cum_acked`) to `next_psn`.
    records: PsnRing,
    /// Bytes sent and not yet acknowledged or declared lost. Signed: a lost RTS is taken off
    /// without ever having been added (the reference's accounting).
    in_flight: i64,
    /// (send time, PSN) in transmission order; stale entries are skipped lazily.
    send_order: VecDeque<(Time, u32)>,
    /// PSNs waiting for retransmission, lowest first; stale entries are skipped lazily.
    retransmit: BinaryHeap<Reverse<u32>>,
    /// A retransmission-timer wake-up is scheduled.
    timer_pending: bool,
    /// Time of the latest RTS (at most one per RTO).
    last_rts: Option<Time>,
    /// Paced: no packet before this time.
    next_send_at: Time,
    /// Line rate of the NIC the sender uses (pacing only applies below it).
    line_rate: u64,
    /// EVs of the PSNs the latest ACK covered (reused buffer).
    covered: Vec<u16>,
    /// The load balancer reads `covered`.
    list_covered: bool,
    /// The load balancer may report events when it chooses a path.
    send_events: bool,
    /// The congestion control may pace below line rate.
    paces: bool,
    /// The congestion control uses timers of its own.
    cc_timers: bool,
    /// The load balancer uses timers of its own.
    lb_timers: bool,
    /// Sending is gated by receiver credit, not by the window.
    credit_gated: bool,
    /// A window sender sends a packet only when it fits the window whole (see
    /// [`Self::with_window_fit`]).
    window_fit: bool,
    /// Wire bytes of the PSNs waiting for retransmission.
    queued_bytes: u64,
    /// Cumulative credit the receiver granted, as far as PULLs arrived.
    pulled: u64,
    /// The transport mode's recovery rules.
    recovery: Recovery,
    /// Go-back-N: time of the latest rewind.
    last_rewind: Option<Time>,
    /// IRN: in recovery until the cumulative point passes this PSN.
    recovery_point: Option<u32>,
    cc: Box<dyn CongestionControl>,
    lb: Box<dyn LoadBalancer>,
    rng: Rng,
    /// The transport its load balancer supplies (window, rate, per-path loss detection), on
    /// connections whose scheme brings one.
    own: Option<Box<dyn OwnTransport>>,
    /// The load balancer may ask for a path probe with each packet.
    probes: bool,
}

impl Sender {
    /// A sender of a flow laid out as `sizes`, on a NIC of `line_rate` bits per second.
    pub fn new(
        sizes: Sizes,
        line_rate: u64,
        cc: Box<dyn CongestionControl>,
        lb: Box<dyn LoadBalancer>,
        rng: Rng,
    ) -> Self {
        Sender {
            sizes,
            next_data: 0,
            next_psn: 0,
            cum_acked: 0,
            records: PsnRing::default(),
            in_flight: 0,
            send_order: VecDeque::new(),
            retransmit: BinaryHeap::new(),
            timer_pending: false,
            last_rts: None,
            next_send_at: 0,
            line_rate,
            covered: Vec::new(),
            list_covered: lb.wants_covered(),
            send_events: lb.reports_on_send(),
            paces: cc.paces(),
            cc_timers: cc.has_timers(),
            lb_timers: lb.has_timers(),
            credit_gated: cc.credit_gate().is_some(),
            window_fit: false,
            probes: lb.sends_probes(),
            own: None,
            queued_bytes: 0,
            pulled: 0,
            recovery: Recovery::UEC,
            last_rewind: None,
            recovery_point: None,
            cc,
            lb,
            rng,
        }
    }

    /// The same sender under uet-htsim's window rule when `fit`: a packet goes only when the
    /// bytes in flight plus its size are within the window, and a new packet requests an ACK
    /// when the bytes in flight plus its size reach the window. Otherwise (the REPS
    /// artifact's rule) a packet goes while the window exceeds the bytes in flight, so the
    /// last one may overshoot it, and requests an ACK once the bytes in flight reach it.
    pub fn with_window_fit(mut self, fit: bool) -> Self {
        self.window_fit = fit;
        self
    }

    /// The same sender under the recovery rules of another transport mode.
    pub fn with_recovery(mut self, recovery: Recovery) -> Self {
        self.recovery = recovery;
        self
    }

    /// The transport mode's recovery rules.
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    /// The retransmission timeout in force: the run's `rto`, except under IRN, whose timeout
    /// depends on the bytes in flight.
    #[inline]
    pub fn rto_for(&self, rto: Time) -> Time {
        if self.recovery.mode == TransportMode::Irn {
            self.irn_rto()
        } else {
            rto
        }
    }

    /// The window controller.
    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// The window controller, mutably (timed switches of a scenario).
    pub fn cc_mut(&mut self) -> &mut dyn CongestionControl {
        self.cc.as_mut()
    }

    /// The load balancer.
    pub fn lb(&self) -> &dyn LoadBalancer {
        self.lb.as_ref()
    }

    /// Bytes in flight (see the field's note on RTS accounting).
    pub fn in_flight(&self) -> i64 {
        self.in_flight
    }

    /// Header bytes of each of its packets (a source route's included).
    pub fn header(&self) -> u32 {
        self.sizes.header
    }

    /// Number of PSNs handed out so far (data packets sent once plus RTS packets).
    #[inline]
    pub fn psns(&self) -> u32 {
        self.next_psn
    }

    /// All PSNs below this are acknowledged.
    pub fn cum_acked(&self) -> u32 {
        self.cum_acked
    }

    /// Data packets sent at least once.
    pub fn data_sent_once(&self) -> u32 {
        self.next_data
    }

    /// The record of `psn` (PSNs below the ring are acknowledged).
    #[inline]
    pub fn record(&self, psn: u32) -> PsnRecord {
        if psn < self.records.base() {
            PsnRecord::ACKED
        } else {
            *self.record_ref(psn).expect("a PSN handed out")
        }
    }

    /// Starts fetching the congestion control's and load balancer's state, which every
    /// transmission and ACK reads (they live in allocations of their own).
    #[inline]
    pub fn prefetch_controls(&self) {
        prefetch(&*self.cc);
        prefetch(&*self.lb);
    }

    /// Starts fetching the ends of the PSN records and the send order a transmission appends
    /// to (the last entries: the next one is usually on the same cache line).
    #[inline]
    pub fn prefetch_send_lists(&self) {
        if let Some(record) = self.records.last() {
            prefetch(record);
        }
        if let Some(entry) = self.send_order.back() {
            prefetch(entry);
        }
    }

    /// The stored record of `psn`, if it has one (for prefetching).
    #[inline]
    pub fn record_ref(&self, psn: u32) -> Option<&PsnRecord> {
        self.records.get(psn)
    }

    #[inline]
    fn record_mut(&mut self, psn: u32) -> &mut PsnRecord {
        self.records.get_mut(psn)
    }

    /// A fresh PSN, with an unsent record.
    fn take_psn(&mut self) -> u32 {
        self.records.push(self.cum_acked);
        self.next_psn += 1;
        self.next_psn - 1
    }

    /// Heap bytes held by this sender's per-packet state (records, send order, retransmission
    /// queue, scratch), by capacity.
    pub fn heap_bytes(&self) -> usize {
        self.records.capacity() * std::mem::size_of::<PsnRecord>()
            + self.send_order.capacity() * std::mem::size_of::<(Time, u32)>()
            + self.retransmit.capacity() * std::mem::size_of::<u32>()
            + self.covered.capacity() * std::mem::size_of::<u16>()
            + self.own.as_ref().map_or(0, |l| l.heap_bytes())
    }

    /// The lowest PSN really waiting for retransmission (dropping stale queue entries).
    pub fn next_retransmission(&mut self) -> Option<u32> {
        while let Some(&Reverse(psn)) = self.retransmit.peek() {
            if self.record(psn).state == PsnState::Queued {
                return Some(psn);
            }
            self.retransmit.pop();
        }
        None
    }

    /// The window (never above the mode's in-flight cap), as a signed byte count comparable
    /// with `in_flight`.
    #[inline]
    pub fn window(&self) -> i64 {
        if let Some(own) = &self.own {
            return own.window() as i64;
        }
        self.cc
            .cwnd()
            .min(self.recovery.in_flight_cap)
            .min(i64::MAX as u64) as i64
    }

    /// True when the window (or, credit gated, the credit) and the backlog allow one more
    /// packet (it may overshoot by one).
    #[inline(always)]
    pub fn can_send(&mut self) -> bool {
        if self.window_fit && !self.credit_gated && self.own.is_none() {
            return self.next_fits();
        }
        !self.finished()
            && self.may_send()
            && (self.next_data < self.sizes.packets || self.next_retransmission().is_some())
    }

    /// Under the fit rule: there is a next packet (a retransmission first) and the window
    /// holds it whole on top of the bytes in flight.
    fn next_fits(&mut self) -> bool {
        if self.finished() {
            return false;
        }
        let wire = match self.next_retransmission() {
            Some(psn) => self.record(psn).wire,
            None if self.next_data < self.sizes.packets => self.sizes.wire(self.next_data),
            None => return false,
        };
        self.window() >= self.in_flight + i64::from(wire)
    }

    /// The window has room, or, credit gated, the credit is positive.
    #[inline]
    fn may_send(&self) -> bool {
        if self.credit_gated {
            self.gate().credit() > 0
        } else {
            self.window() > self.in_flight
        }
    }

    /// While the congestion control paces below line rate: the earliest time of the next
    /// packet, if that is after `now`.
    #[inline]
    pub fn paced_until(&self, now: Time) -> Option<Time> {
        (self.next_send_at > now).then_some(self.next_send_at)
    }

    /// True once every data packet was sent and every PSN (RTS included) is acknowledged.
    #[inline]
    pub fn finished(&self) -> bool {
        self.next_data == self.sizes.packets && self.cum_acked == self.next_psn
    }

    /// True if the PSN's latest transmission left at `sent_at` and is still in flight (an
    /// entry of a send list or a NACK that is not stale).
    #[inline]
    fn in_flight_since(&self, psn: u32, sent_at: Time) -> bool {
        let r = self.record(psn);
        r.state == PsnState::InFlight && r.sent_at == sent_at
    }

    /// The oldest transmission still in flight (dropping stale entries).
    pub fn oldest_in_flight(&mut self) -> Option<(Time, u32)> {
        while let Some(&(t, psn)) = self.send_order.front() {
            if self.in_flight_since(psn, t) {
                return Some((t, psn));
            }
            self.send_order.pop_front();
        }
        None
    }

    /// Sends the next data packet at `now`: the lowest PSN waiting for retransmission (it keeps
    /// its PSN and size; a lost RTS goes again as a header-sized data packet), else the next
    /// new data packet, which takes the next PSN. The load balancer picks its EV (or route).
    /// The caller has checked [`Self::can_send`]; `rto` arms the timer if it is idle.
    pub fn transmit(&mut self, now: Time, rto: Time) -> Transmission {
        let rto = self.rto_to_arm(rto);
        let (psn, retransmit, last) = match self.next_retransmission() {
            Some(p) => {
                self.retransmit.pop();
                self.queued_bytes -= self.record(p).wire as u64;
                (p, true, false)
            }
            None => {
                let index = self.next_data;
                self.next_data += 1;
                let p = self.take_psn();
                self.record_mut(p).wire = self.sizes.wire(index);
                (p, false, index + 1 == self.sizes.packets)
            }
        };
        let path = self.lb.next(now, &mut self.rng);
        let lb_event = self.send_event();
        let probe = if self.probes {
            self.lb.take_probe()
        } else {
            None
        };
        let rec = self.record_mut(psn);
        rec.sent_at = now;
        rec.ev = path.ev;
        rec.state = PsnState::InFlight;
        rec.flags &= !record_flags::UNCOUNTED;
        let wire = rec.wire;
        self.in_flight += wire as i64;
        if let Some(own) = self.own.as_mut() {
            // An own transport times out per path, from its own lists, and paces at its rate.
            own.on_send(path.ev, psn, now);
            if let Some(rate) = own.pacing_rate() {
                self.next_send_at = now + serialization(wire, rate.max(1));
            }
        } else {
            self.send_order.push_back((now, psn));
        }
        let window_full = if self.credit_gated {
            let gate = self.gate_mut();
            gate.on_send(u64::from(wire));
            gate.credit() <= 0
        } else if self.window_fit {
            self.in_flight + i64::from(wire) >= self.window()
        } else {
            self.in_flight >= self.window()
        };
        if self.paces {
            if let Some(rate) = self.cc.pacing_rate().filter(|&r| r < self.line_rate) {
                self.next_send_at = now + serialization(wire, rate.max(1));
            }
        }
        Transmission {
            psn,
            path,
            wire,
            retransmit,
            last,
            window_full,
            arm_rto: self.arm_timer(now + rto),
            lb_event,
            probe,
        }
    }

    /// What the load balancer did while choosing the latest path, if it reports such events.
    #[inline]
    fn send_event(&mut self) -> Option<LbEvent> {
        if self.send_events {
            self.lb.take_send_event()
        } else {
            None
        }
    }

    /// Marks the retransmission timer armed; returns `at` if it was idle.
    fn arm_timer(&mut self, at: Time) -> Option<Time> {
        if self.timer_pending {
            None
        } else {
            self.timer_pending = true;
            Some(at)
        }
    }

    /// Marks a PSN acknowledged; returns the bytes this acknowledges as newly delivered (0 if
    /// it already was, and for an RTS whose original header-only packet arrived).
    ///
    /// `in_flight` follows the reference's byte accounting: an in-flight PSN takes off what its
    /// transmission added; a PSN acknowledged while queued for retransmission had its bytes
    /// taken off when it was declared lost, except an RTS, which never added them, so they are
    /// given back.
    #[inline]
    pub fn mark_acked(&mut self, psn: u32) -> u64 {
        // Most PSNs an ACK covers were acknowledged before: the ring's bit says so without
        // reading the record.
        if self.records.is_acked(psn) {
            return 0;
        }
        let record = self.record_mut(psn);
        let r = *record;
        record.state = PsnState::Acked;
        self.records.set_acked(psn);
        let newly = match r.state {
            PsnState::Acked => unreachable!("PSN {psn} acknowledged without its bit"),
            PsnState::InFlight => {
                let counted = r.counted();
                self.in_flight -= counted;
                counted as u64
            }
            PsnState::Queued if r.is_rts() => {
                self.queued_bytes -= r.wire as u64;
                self.in_flight += r.wire as i64;
                0
            }
            PsnState::Queued => {
                self.queued_bytes -= r.wire as u64;
                r.wire as u64
            }
            PsnState::Unsent => r.wire as u64,
        };
        if self.list_covered {
            self.covered.push(r.ev);
        }
        newly
    }

    /// Declares the in-flight PSN lost (NACK or timeout): its wire size leaves `in_flight` and
    /// it joins the retransmission queue. Returns that size.
    pub fn declare_lost(&mut self, psn: u32) -> u64 {
        let r = self.record_mut(psn);
        debug_assert_eq!(r.state, PsnState::InFlight);
        r.state = PsnState::Queued;
        let wire = r.wire;
        self.in_flight -= wire as i64;
        self.queued_bytes += wire as u64;
        self.retransmit.push(Reverse(psn));
        wire as u64
    }

    /// Advances the cumulative point over acknowledged PSNs (their records become free for
    /// later PSNs).
    fn advance_cumulative(&mut self) {
        while self.cum_acked < self.next_psn && self.records.is_acked(self.cum_acked) {
            self.cum_acked += 1;
        }
    }

    /// Processes an ACK or NACK arriving at `now`.
    pub fn on_ack(&mut self, now: Time, ack: &AckInfo, stats: &mut FlowStats) -> AckOutcome {
        let lb_event = if ack.nack {
            stats.nacks += 1;
            match self.recovery.mode {
                TransportMode::Uec => {
                    if self.in_flight_since(ack.psn, ack.sent_at) {
                        let wire = self.declare_lost(ack.psn);
                        self.cc.on_nack_rtt(now - ack.sent_at);
                        self.cc.on_nack(wire, now);
                        self.lb.on_nack(ack.ev, now)
                    } else {
                        None
                    }
                }
                TransportMode::Gbn => self.on_gbn_nack(now, ack),
                TransportMode::Irn => self.on_irn_nack(now, ack),
            }
        } else {
            stats.acks += 1;
            if ack.ecn {
                stats.ecn_acks += 1;
            }
            if self.own.is_some() {
                // Absorbed first: a packet whose own ACK was lost but that the cumulative
                // point now covers is not declared lost.
                let event = self.absorb_ack(now, ack, true);
                self.own_detect_losses(now, ack);
                self.own_after_ack(now);
                event
            } else {
                self.absorb_ack(now, ack, true)
            }
        };
        AckOutcome {
            lb_event,
            finished: self.finished(),
        }
    }

    /// What an ACK tells, and the NACKs of the RoCE modes too (they acknowledge cumulatively,
    /// IRN's also selectively): marks PSNs acknowledged (`own`: the PSN it answers as well),
    /// advances the cumulative point and tells the congestion control and load balancer.
    fn absorb_ack(&mut self, now: Time, ack: &AckInfo, own: bool) -> Option<LbEvent> {
        {
            let rec = self.record(ack.psn);
            // The RTT sample, as the reference takes it: from the PSN's latest transmission,
            // and only while that PSN is still outstanding.
            let rtt = (rec.state == PsnState::InFlight).then(|| now - rec.sent_at);
            self.covered.clear();
            let mut newly = if own { self.mark_acked(ack.psn) } else { 0 };
            // The triggering packet's EV goes last in the covered list.
            let own = if self.list_covered {
                self.covered.pop()
            } else {
                None
            };
            for psn in self.cum_acked..ack.cum_ack.min(self.next_psn) {
                newly += self.mark_acked(psn);
            }
            let mut bits = ack.sack_bits;
            while bits != 0 {
                let psn = ack.sack_base + bits.trailing_zeros();
                bits &= bits - 1;
                if psn < self.next_psn {
                    newly += self.mark_acked(psn);
                }
            }
            self.covered.extend(own);
            self.advance_cumulative();
            if self.recovery_point.is_some() {
                self.end_irn_recovery_if_done();
            }
            // Drop acknowledged entries from the send order's front before the next timer does
            // once it is longer than the outstanding range, so its length (and the memory it
            // spans) follows the window.
            if self.send_order.len() > (self.next_psn - self.cum_acked) as usize + 16 {
                self.oldest_in_flight();
            }
            let cwnd_before = self.cc.cwnd();
            self.cc.on_ack(&AckSample {
                acked: newly,
                ecn: ack.ecn,
                cnp: ack.cnp,
                rtt,
                now,
                in_flight: self.in_flight,
            });
            self.lb.on_ack(&AckFeedback {
                ev: ack.ev,
                ecn: ack.ecn,
                rtt,
                one_way: ack.one_way,
                now,
                covered: &self.covered,
                cwnd_before,
                cwnd: self.cc.cwnd(),
                in_flight: self.in_flight,
            })
        }
    }

    /// The retransmission timer is no longer wanted (the flow was given up).
    pub fn stop(&mut self) {
        self.timer_pending = false;
    }

    /// The congestion control and load balancer of a finished connection, for the next flow
    /// between the same pair (per-pair connection reuse).
    pub fn into_state(self) -> ConnectionState {
        ConnectionState {
            cc: self.cc,
            lb: self.lb,
        }
    }

    /// Releases the per-PSN memory of a finished connection.
    pub fn release(&mut self) {
        self.records.release();
        self.send_order = VecDeque::new();
        self.retransmit = BinaryHeap::new();
        self.covered = Vec::new();
        self.own = None;
    }
}

mod credit;
mod gbn;
mod irn;
mod own;
mod records;
mod scheme_events;
mod timeout;
