//! Credit-paced congestion control: the sender's gate ([`CreditGate`]: it sends while it holds
//! credit, and its packets ask the receiver for more with a [`PullRequest`]), what those packets
//! tell the receiver's pull pacer, the PULLs it sends back, and the contract of a run's pacers
//! ([`ReceiverPacing`]). An algorithm asks for pacers with
//! [`super::CcScheme::receiver_pacing`]; EQDS ([`super::eqds`]) is the built-in one.
use crate::engine::Time;

/// What a packet of a credit-paced connection tells the receiver's pull pacer, in bytes counted
/// from the connection's start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PullRequest {
    /// Cumulative pull credit the sender asks to have been granted.
    pub target: u64,
    /// Cumulative pull credit the sender has received and no longer holds (spent, forfeited or
    /// refused above its cap): granted minus this is credit in transit or held unused.
    pub used: u64,
}

/// The sender side of a receiver-driven controller ([`super::CongestionControl::credit_gate`]).
pub trait CreditGate {
    /// Credit held, in bytes: the sender may send while it is positive (the packet may drive
    /// it negative).
    fn credit(&self) -> i64;
    /// Most pull credit the receiver may leave granted and unused at once.
    fn credit_cap(&self) -> u64;
    /// A packet of `wire` bytes is sent: it spends that much credit.
    fn on_send(&mut self, wire: u64);
    /// A PULL arrived: the receiver has granted `pulled` bytes in all (never less than before).
    fn on_pull(&mut self, pulled: u64, now: Time);
    /// What the next packet asks of the pull pacer, with `backlog` bytes still to send (new
    /// and queued for retransmission) after it.
    fn pull_request(&self, backlog: u64) -> PullRequest;
    /// Whether a sender holding no credit, with data waiting and nothing in flight, sends an
    /// RTS every RTO until credit comes (otherwise it waits for the PULL that its trimmed
    /// headers or last RTS already asked for).
    fn rts_while_starved(&self) -> bool;
}

/// A data packet, trimmed header or RTS of a credit-paced connection at its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PullArrival {
    /// The connection (flow index).
    pub flow: u32,
    /// Its pull target, as carried (low 32 bits).
    pub target: u32,
    /// Its pull credit used, as carried (low 32 bits).
    pub used: u32,
    /// Only the header arrived: its retransmission needs credit.
    pub trimmed: bool,
    /// It was trimmed at the last hop (the port facing the receiver), not on the way.
    pub trimmed_at_last_hop: bool,
    /// It is an RTS (the sender asks for credit).
    pub rts: bool,
    /// A full data packet that carries an ECN mark.
    pub ecn: bool,
    /// Its EV (the PULLs that follow take it).
    pub ev: u16,
    /// Its explicit route, if any (the PULLs that follow take the reverse).
    pub route: u32,
}

/// A PULL the pacer sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The connection.
    pub flow: u32,
    /// Bytes granted by this PULL.
    pub bytes: u64,
    /// Cumulative bytes granted to the connection, this PULL included.
    pub granted: u64,
    /// EV of the connection's latest packet.
    pub ev: u16,
    /// Explicit route of the connection's latest packet.
    pub route: u32,
}

/// What one pacer wake-up did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacerStep {
    /// The PULL to send, if some connection was active.
    pub grant: Option<Grant>,
    /// Wake the pacer again at this time (someone is still active).
    pub rearm: Option<Time>,
}

/// The pull pacers of a run, one per receiving host: they learn of each credit-paced
/// connection's demand from its packets and grant credit with PULLs at their own pace.
pub trait ReceiverPacing: Send {
    /// Connection `flow` to `host` started, credit paced, holding at most `cap` bytes of
    /// unused credit.
    fn add_sink(&mut self, flow: u32, host: u32, cap: u64);
    /// Connection `flow` finished.
    fn remove_sink(&mut self, flow: u32);
    /// One of its packets arrived at `now`; wake the host's pacer at the returned time, if any.
    fn on_arrival(&mut self, now: Time, a: &PullArrival) -> Option<Time>;
    /// Host `host`'s pacer woke at `now`.
    fn on_timer(&mut self, host: u32, now: Time) -> PacerStep;
    /// Cumulative credit granted to `flow`, if it is credit paced.
    fn granted(&self, flow: u32) -> Option<u64>;
    /// Credit granted to `flow` and not yet reported used.
    fn outstanding(&self, flow: u32) -> u64;
}
