//! The receiver side of credit-paced congestion control: what a credit-paced connection's
//! packets tell their receiver's pull pacer, the PULLs it sends back, and the contract of a
//! run's pacers ([`ReceiverPacing`]). An algorithm asks for pacers with
//! [`super::CcScheme::receiver_pacing`]; EQDS ([`super::eqds`]) is the built-in one.
use crate::engine::Time;

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
