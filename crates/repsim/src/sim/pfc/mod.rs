//! Priority flow control in the simulation: the switches' shared-buffer MMU
//! ([`crate::net::mmu`]) charges data packets as they join an egress queue and credits them as
//! they leave it; an ingress account that must pause sends a pause frame ([`Kind::Pause`]) on
//! the link back to its upstream node (switch port or host NIC), which then starts no data
//! packet on that link until the frame's quantum runs out or a resume frame arrives (the packet
//! on the wire finishes). Pause frames jump the header lane; the header lane (ACK, NACK, CNP,
//! PULL, pause) is never paused. While an account stays paused the switch sends a fresh pause
//! every half quantum, so that the upstream never resumes into a congested buffer.
//!
//! With `refresh` off (`[pfc] refresh = false`) a pause episode is one frame: the upstream
//! resumes when its quantum runs out, the switch sends nothing more for that account until it
//! has resumed it, and what arrives meanwhile fills the headroom and then drops. This is how
//! the ns-3 code behind ConWeave and LAPS behaves; it makes PFC lossy under long congestion but
//! it cannot deadlock, because a cycle of pauses dissolves after one quantum.
//!
//! With refreshes a cycle of pauses can hold for ever. Every PFC run therefore watches for it
//! (`[pfc] deadlock_after`, 10 ms by default) at fixed instants, every quarter of that time,
//! each once every event before it has run: when no data packet has reached a receiver since
//! an instant at least that long ago, and the links paused at the instant close a cycle
//! between switches, the run stops there ([`Simulation::halted`] says why, naming the cycle's
//! links). Fixed instants cost nothing per packet, and they are the same whether the network
//! runs on one thread or is split over several, whose partitions pool their counts and pauses
//! at the instant ([`super::parallel`]).
//!
//! Hosts as receivers never pause their switch (a NIC drains at line rate); only switches
//! send pause frames. Everything here is off unless `[pfc] enabled`: the packet path then pays
//! one predictable branch per queue operation.
use super::Simulation;
use crate::engine::time::to_us;
use crate::engine::{Handle, Time};
use crate::net::lane::Queued;
use crate::net::mmu::{Charge, Mmu, PfcParams};
use crate::net::world::{Owner, Timer, World};
use crate::net::{Kind, Packet, Topology};

mod deadlock;
use deadlock::DeadlockWatch;

/// Timer kinds of [`Owner::Pfc`].
pub(super) mod timer {
    /// A pause of the link's upstream port runs out.
    pub const EXPIRE: u8 = 0;
    /// The switch refreshes the pause of a still-congested ingress link.
    pub const REFRESH: u8 = 1;
}

/// The pause state of one link's upstream (sending) port.
#[derive(Clone, Copy, Debug, Default)]
struct LinkPause {
    /// Paused until this time (while `active`).
    until: Time,
    /// Start of the current pause.
    since: Time,
    /// A pause is in force (or ran out without being accounted yet).
    active: bool,
    /// Generation of the expiry timer.
    expire_gen: u16,
    /// Generation of the switch's refresh timer.
    refresh_gen: u16,
    /// Paused time accounted so far.
    paused: Time,
    /// Pause frames the switch at the link's end sent for it (refreshes included).
    pauses_sent: u64,
    /// Resume frames it sent.
    resumes_sent: u64,
    /// Pause frames the upstream node received for it.
    pauses_received: u64,
}

/// PFC counters of one link, as reported in `pfc.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct PfcLinkStats {
    /// Link id (its upstream node's egress port).
    pub link: u32,
    /// The node whose egress port is paused.
    pub from: u32,
    /// The switch that pauses it.
    pub to: u32,
    /// Pause frames the switch sent (refreshes included).
    pub pauses_sent: u64,
    /// Resume frames the switch sent.
    pub resumes_sent: u64,
    /// Pause frames the upstream node received.
    pub pauses_received: u64,
    /// Time the upstream port was paused (us).
    pub paused_us: f64,
    /// Largest headroom use of the link's ingress account (bytes).
    pub max_headroom: u64,
    /// That account's headroom (bytes).
    pub headroom: u64,
}

/// A run's priority flow control as an owned part: the MMU's accounts, every link's pause
/// state, its timers and the deadlock watch. It acts on the network through the [`World`] it
/// is handed and leaves the ports to start sending in a list the simulation drains.
pub(super) struct PfcState {
    mmu: Mmu,
    quantum: Time,
    resume: bool,
    refresh: bool,
    frame_size: u32,
    links: Vec<LinkPause>,
    /// The reverse of every link (where its pause frames travel), `u32::MAX` if none.
    reverse: Vec<u32>,
    /// Scratch for links to resume.
    resumed: Vec<u32>,
    /// Ports the simulation must start sending after a PFC step, and whether a new frame was
    /// queued there (see [`Simulation::pfc_wake`]).
    wake: Vec<(u32, bool)>,
    /// No delivery for this long with a cycle of pauses is a deadlock (0: not watched).
    deadlock_after: Time,
    watch: DeadlockWatch,
}

impl PfcState {
    /// The PFC state of a run on `topo`, or an error naming what does not fit.
    pub(super) fn new(
        cfg: &PfcParams,
        topo: &Topology,
        mtu: u32,
        header: u32,
    ) -> Result<Self, String> {
        let mmu = Mmu::new(cfg, topo, mtu)?;
        let reverse = (0..topo.links.len() as u32)
            .map(|l| topo.reverse(l).unwrap_or(u32::MAX))
            .collect();
        Ok(PfcState {
            mmu,
            quantum: cfg.quantum,
            resume: cfg.resume,
            refresh: cfg.refresh,
            frame_size: header,
            links: vec![LinkPause::default(); topo.links.len()],
            reverse,
            resumed: Vec::new(),
            wake: Vec::new(),
            deadlock_after: cfg.deadlock_after,
            watch: DeadlockWatch {
                next: if cfg.deadlock_after == 0 {
                    Time::MAX
                } else {
                    (cfg.deadlock_after / 4).max(1)
                },
                step: (cfg.deadlock_after / 4).max(1),
                ..DeadlockWatch::default()
            },
        })
    }

    /// True while the upstream port of `link` may not start data packets.
    #[inline]
    pub(super) fn paused(&self, link: u32, now: Time) -> bool {
        let l = &self.links[link as usize];
        l.active && now < l.until
    }
}

fn pfc_timer(kind: u8, gen: u16, link: u32) -> Timer {
    Timer {
        owner: Owner::Pfc,
        kind,
        gen,
        id: link,
    }
}

/// What [`PfcState::admit`] did with a data packet joining a switch egress queue.
pub(super) enum PfcAdmission {
    /// Charged (or not charged at all): it joins the queue.
    Queued,
    /// The MMU has no room: the packet must be dropped (never in a lossless run).
    Dropped,
}

impl PfcState {
    /// Charges packet `h` joining switch egress queue `port` to its ingress account; an
    /// account that must pause sends its pause frame.
    #[inline]
    pub(super) fn admit(&mut self, world: &mut World, port: u32, h: Handle) -> PfcAdmission {
        let pkt = world.pkts.get(h);
        if pkt.is_header() || !self.mmu.charges(pkt.ingress, port) {
            return PfcAdmission::Queued;
        }
        let ingress = pkt.ingress;
        match self.mmu.admit(ingress, port, pkt.size as u64) {
            Charge::Queued => PfcAdmission::Queued,
            Charge::Pause => {
                self.send_frame(world, ingress, true);
                PfcAdmission::Queued
            }
            Charge::Dropped => PfcAdmission::Dropped,
        }
    }

    /// The next packet of switch port `port`: only the header lane while the port is paused.
    /// Returns it with the (ingress link, size) to credit once it is on the wire.
    #[inline]
    pub(super) fn dequeue(
        &self,
        world: &mut World,
        port: u32,
    ) -> (Option<Queued>, Option<(u32, u64)>) {
        let h = if self.paused(port, world.now) {
            world.ports[port as usize].dequeue_header()
        } else {
            world.dequeue(port)
        };
        let Some(q) = h else { return (None, None) };
        let pkt = world.pkts.get(q.handle);
        let credit = (!pkt.is_header() && self.mmu.charges(pkt.ingress, port))
            .then_some((pkt.ingress, q.size as u64));
        (Some(q), credit)
    }

    /// A charged packet left egress queue `port`: credit its ingress account and resume the
    /// accounts of that switch that may go again.
    #[inline]
    pub(super) fn release(&mut self, world: &mut World, port: u32, ingress: u32, size: u64) {
        let Some(s) = self.mmu.release(ingress, port, size) else {
            return;
        };
        let mut resumed = std::mem::take(&mut self.resumed);
        resumed.clear();
        self.mmu.resumable(s, &mut resumed);
        for &l in &resumed {
            self.send_frame(world, l, false);
        }
        self.resumed = resumed;
    }

    /// The switch at the end of `link` pauses (or resumes) its upstream port: a frame goes
    /// back on the reverse link, ahead of everything queued there. A pause re-arms the
    /// refresh (when refreshes are on); a resume cancels it (and is not sent when resume
    /// frames are off).
    fn send_frame(&mut self, world: &mut World, link: u32, pause: bool) {
        let now = world.now;
        let state = &mut self.links[link as usize];
        state.refresh_gen = state.refresh_gen.wrapping_add(1);
        let back = self.reverse[link as usize];
        if back == u32::MAX || (!pause && !self.resume) {
            return;
        }
        let (quantum, size) = (self.quantum, self.frame_size);
        if pause && self.refresh {
            let at = now + quantum / 2;
            world.set_timer(at, pfc_timer(timer::REFRESH, state.refresh_gen, link));
        }
        let aux = if pause { quantum } else { 0 };
        // PFC frames wait at the head of the header lane, in order; a frame for the same link
        // still waiting there is brought up to date instead (only the latest state counts, and
        // a later pause must never overtake an earlier resume).
        let lane = &world.ports[back as usize].headers;
        let mut at = 0;
        let mut merged = false;
        while let Some(&q) = lane.get(at) {
            let queued = world.pkts.get_mut(q.handle);
            if queued.kind != Kind::Pause {
                break;
            }
            if queued.psn == link {
                // The waiting frame is now this one: count it as what it has become.
                if queued.aux > 0 {
                    state.pauses_sent -= 1;
                } else {
                    state.resumes_sent -= 1;
                }
                queued.aux = aux;
                queued.sent_at = now;
                merged = true;
                break;
            }
            at += 1;
        }
        if pause {
            state.pauses_sent += 1;
        } else {
            state.resumes_sent += 1;
        }
        if merged {
            return;
        }
        let l = &world.topo.links[back as usize];
        let frame = Packet {
            src: l.from,
            dst: l.to,
            psn: link,
            aux,
            sent_at: now,
            flow: u32::MAX,
            ..Packet::blank(Kind::Pause, size)
        };
        let h = world.pkts.alloc(frame);
        world.counters.pfc_frames_sent += 1;
        world.ports[back as usize]
            .headers
            .insert(at, Queued::new(h, size));
        self.wake.push((back, true));
    }

    /// Pause or resume frame `frame` reached the upstream node of the link it names.
    fn on_frame(&mut self, world: &mut World, frame: &Packet) {
        let now = world.now;
        let link = frame.psn;
        let l = &mut self.links[link as usize];
        if frame.aux > 0 {
            l.pauses_received += 1;
            if !(l.active && l.until >= now) {
                if l.active {
                    l.paused += l.until - l.since;
                }
                l.active = true;
                l.since = now;
            }
            l.until = now + frame.aux;
            l.expire_gen = l.expire_gen.wrapping_add(1);
            let t = pfc_timer(timer::EXPIRE, l.expire_gen, link);
            world.set_timer(now + frame.aux, t);
        } else {
            if l.active {
                l.paused += l.until.min(now) - l.since;
                l.active = false;
            }
            l.until = now;
            l.expire_gen = l.expire_gen.wrapping_add(1);
            self.wake.push((link, false));
        }
    }

    /// A PFC timer: a pause runs out (the port may go again) or a refresh is due.
    fn on_timer(&mut self, world: &mut World, t: Timer) {
        let l = &mut self.links[t.id as usize];
        match t.kind {
            timer::EXPIRE if t.gen == l.expire_gen && l.active => {
                l.paused += l.until - l.since;
                l.active = false;
                self.wake.push((t.id, false));
            }
            timer::REFRESH if t.gen == l.refresh_gen && self.mmu.is_paused(t.id) => {
                self.send_frame(world, t.id, true);
            }
            _ => {}
        }
    }

    /// Takes from `other`, the PFC state of the same run kept by another partition, what the
    /// nodes `theirs` names wrote: a link's pause as its upstream node saw it where that node
    /// is theirs, its pause frames sent and its refresh where the switch at its end is, and
    /// those switches' MMUs.
    pub(super) fn absorb(
        &mut self,
        other: &PfcState,
        topo: &Topology,
        theirs: impl Fn(u32) -> bool,
    ) {
        for (l, link) in topo.links.iter().enumerate() {
            let (mine, their) = (&mut self.links[l], &other.links[l]);
            if theirs(link.from) {
                mine.until = their.until;
                mine.since = their.since;
                mine.active = their.active;
                mine.expire_gen = their.expire_gen;
                mine.paused = their.paused;
                mine.pauses_received = their.pauses_received;
            }
            if theirs(link.to) {
                mine.refresh_gen = their.refresh_gen;
                mine.pauses_sent = their.pauses_sent;
                mine.resumes_sent = their.resumes_sent;
            }
        }
        self.mmu.absorb(&other.mmu, |s| theirs(topo.switch_node(s)));
    }

    /// Per-link PFC counters (links that saw any PFC frame) at time `now`.
    fn link_stats(&self, topo: &Topology, now: Time) -> Vec<PfcLinkStats> {
        self.links
            .iter()
            .enumerate()
            .filter(|(_, l)| l.pauses_sent + l.pauses_received + l.resumes_sent > 0)
            .map(|(i, l)| {
                let open = if l.active {
                    l.until.min(now).saturating_sub(l.since)
                } else {
                    0
                };
                let (max_headroom, headroom) = self.mmu.headroom_peak(i as u32);
                PfcLinkStats {
                    link: i as u32,
                    from: topo.links[i].from,
                    to: topo.links[i].to,
                    pauses_sent: l.pauses_sent,
                    resumes_sent: l.resumes_sent,
                    pauses_received: l.pauses_received,
                    paused_us: to_us(l.paused + open),
                    max_headroom,
                    headroom,
                }
            })
            .collect()
    }
}

impl Simulation {
    /// The ports PFC's last step asks to start sending (a frame queued there, or a pause
    /// ended); frames it queued are counted in the packet books.
    fn pfc_wake(&mut self) {
        let Some(pfc) = self.pfc.as_deref_mut() else {
            return;
        };
        if pfc.wake.is_empty() {
            return;
        }
        let mut wake = std::mem::take(&mut pfc.wake);
        for &(port, frame) in &wake {
            if frame {
                self.books.on_sent(Kind::Pause);
            }
            self.kick(port);
        }
        // A kick can reach PFC again (a data packet sent credits its ingress account), and
        // that nested step drains what it queued itself before returning: the list is empty
        // again here, and keeps the outer allocation.
        wake.clear();
        if let Some(pfc) = self.pfc.as_deref_mut() {
            debug_assert!(pfc.wake.is_empty(), "a nested PFC step left ports to wake");
            pfc.wake = wake;
        }
    }

    /// Charges a data packet joining switch egress queue `port` to its ingress account; false
    /// when the MMU has no room and the packet was dropped (never in a lossless run).
    #[inline(never)]
    pub(super) fn pfc_admit(&mut self, port: u32, h: Handle) -> bool {
        let Some(pfc) = self.pfc.as_deref_mut() else {
            return true;
        };
        match pfc.admit(&mut self.world, port, h) {
            PfcAdmission::Queued => {
                self.pfc_wake();
                true
            }
            PfcAdmission::Dropped => {
                // Counted here: the port's own admission, which counts its drops, never saw it.
                self.world.port_cold[port as usize].count_drop();
                if self.world.pkts.get(h).kind == Kind::Data {
                    self.world.counters.data_dropped += 1;
                }
                self.overflow_drop(port, h);
                false
            }
        }
    }

    /// The next packet of switch port `port` under PFC (see [`PfcState::dequeue`]).
    #[inline(never)]
    pub(super) fn pfc_dequeue(&mut self, port: u32) -> (Option<Queued>, Option<(u32, u64)>) {
        let pfc = self.pfc.as_deref().expect("PFC on");
        pfc.dequeue(&mut self.world, port)
    }

    /// True when host port `port` may not start a data packet now.
    #[inline]
    pub(super) fn pfc_host_paused(&self, port: u32) -> bool {
        self.pfc
            .as_deref()
            .is_some_and(|p| p.paused(port, self.world.now))
    }

    /// A charged packet left its egress queue (see [`PfcState::release`]).
    #[inline(never)]
    pub(super) fn pfc_release(&mut self, port: u32, ingress: u32, size: u64) {
        let pfc = self.pfc.as_deref_mut().expect("PFC on");
        pfc.release(&mut self.world, port, ingress, size);
        self.pfc_wake();
    }

    /// A pause or resume frame reaches the upstream node of the link it names.
    #[inline(never)]
    pub(super) fn on_pfc_frame(&mut self, h: Handle) {
        let frame = *self.world.pkts.get(h);
        self.world.pkts.free(h);
        self.world.counters.pfc_frames_arrived += 1;
        if let Some(pfc) = self.pfc.as_deref_mut() {
            pfc.on_frame(&mut self.world, &frame);
            self.pfc_wake();
        }
    }

    /// A PFC timer: the timer's pause runs out or its refresh is sent.
    pub(super) fn on_pfc_timer(&mut self, t: Timer) {
        let Some(pfc) = self.pfc.as_deref_mut() else {
            return;
        };
        pfc.on_timer(&mut self.world, t);
        self.pfc_wake();
    }

    /// Per-link PFC counters (links that saw any PFC frame), or `None` when PFC is off.
    pub fn pfc_links(&self) -> Option<Vec<PfcLinkStats>> {
        let pfc = self.pfc.as_deref()?;
        Some(pfc.link_stats(&self.world.topo, self.world.now))
    }

    /// Largest headroom use and the headroom of every switch ingress link (`None` when PFC
    /// is off); links that end at a host have (0, 0).
    pub fn pfc_headroom_peaks(&self) -> Option<Vec<(u64, u64)>> {
        let pfc = self.pfc.as_deref()?;
        Some(
            (0..self.world.ports.len() as u32)
                .map(|l| pfc.mmu.headroom_peak(l))
                .collect(),
        )
    }

    /// Data packets the MMU dropped for lack of buffer (`None` when PFC is off; zero in a
    /// lossless run).
    pub fn pfc_buffer_drops(&self) -> Option<u64> {
        self.pfc.as_deref().map(|p| p.mmu.drops())
    }

    /// PFC frames in the network now: queued at a port or on a wire.
    pub fn pfc_frames_in_network(&self) -> u64 {
        let w = &self.world;
        let is_frame = |h: &Handle| w.pkts.get(*h).kind == Kind::Pause;
        let queued: usize = w
            .ports
            .iter()
            .map(|p| p.headers.iter().filter(|q| is_frame(&q.handle)).count())
            .sum();
        let on_wire = w
            .events
            .pending()
            .into_iter()
            .filter(
                |e| matches!(e.kind(), crate::net::world::EventKind::Arrive(h, _) if is_frame(&h)),
            )
            .count();
        (queued + on_wire) as u64
    }

    /// (pause frames sent, total paused time in us over every port), when PFC is on.
    pub(super) fn pfc_totals(&self) -> Option<(u64, f64)> {
        let rows = self.pfc_links()?;
        Some((
            rows.iter().map(|r| r.pauses_sent).sum(),
            rows.iter().fold(0.0, |total, r| total + r.paused_us),
        ))
    }
}

#[cfg(test)]
mod tests;
