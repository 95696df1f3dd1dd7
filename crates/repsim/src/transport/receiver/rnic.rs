//! The receivers of the RoCE NIC modes (see [`crate::transport::mode`]): go-back-N keeps only
//! in-order packets; IRN keeps every packet and NACKs each out-of-order one. Both set the CNP
//! flag on every NACK (the RNIC answers reordering as congestion) and discard trimmed packets
//! (RoCE NICs know no trimming: a trimmed packet is a drop to them).
use super::{DataArrival, Receiver, RxOutcome};
use crate::engine::Time;
use crate::transport::TransportMode;

/// No answer, nothing delivered.
const SILENT: RxOutcome = RxOutcome {
    delivered: false,
    reply: None,
};

impl Receiver {
    /// A data packet arrived at `now` under go-back-N or IRN.
    pub(super) fn on_rnic_data(&mut self, now: Time, d: &DataArrival) -> RxOutcome {
        if d.trimmed {
            return SILENT;
        }
        match self.policy.mode {
            TransportMode::Gbn => self.on_gbn_data(now, d),
            _ => self.on_irn_data(now, d),
        }
    }

    /// Go-back-N: an out-of-order packet is discarded and answered by a NACK carrying the
    /// expected PSN (as `cum_ack`), at most once per `nack_interval` for the same expected PSN.
    fn on_gbn_data(&mut self, now: Time, d: &DataArrival) -> RxOutcome {
        if d.psn > self.expected {
            let expected = self.expected;
            let interval = self.policy.nack_interval;
            let due = self
                .last_nack
                .is_none_or(|(e, t)| e != expected || now - t >= interval);
            if !due {
                return SILENT;
            }
            self.last_nack = Some((expected, now));
            return self.nack_now(d, false, true);
        }
        let delivered = d.psn == self.expected && self.accept(d.psn);
        if delivered {
            self.delivered += d.payload as u64;
            if !self.count_for_ack(d) {
                return RxOutcome {
                    delivered,
                    reply: None,
                };
            }
        }
        // In order, or a duplicate (acknowledged at once: the sender learns where we are).
        self.ack_now(now, d, delivered)
    }

    /// IRN: every new packet is kept; an out-of-order one is answered at once by a NACK with
    /// its own PSN and the SACK bitmap, in-order ones and duplicates by ACKs.
    fn on_irn_data(&mut self, now: Time, d: &DataArrival) -> RxOutcome {
        let in_order = d.psn == self.expected;
        let delivered = self.accept(d.psn);
        if delivered {
            self.delivered += d.payload as u64;
            if !in_order {
                return self.nack_now(d, delivered, true);
            }
            if !self.count_for_ack(d) {
                return RxOutcome {
                    delivered,
                    reply: None,
                };
            }
        }
        self.ack_now(now, d, delivered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::US;
    use crate::transport::AckPolicy;

    fn receiver(mode: TransportMode) -> Receiver {
        Receiver::new(
            100 * 1000,
            AckPolicy {
                every_bytes: 1048,
                mode,
                nack_interval: 4 * US,
                ..AckPolicy::default()
            },
        )
    }

    fn data(psn: u32) -> DataArrival {
        DataArrival {
            psn,
            wire: 1048,
            payload: 1000,
            trimmed: false,
            ecn: false,
            ack_request: false,
        }
    }

    #[test]
    fn go_back_n_keeps_only_in_order_packets_and_nacks_once_per_interval() {
        let mut r = receiver(TransportMode::Gbn);
        assert!(r.on_data(0, &data(0)).delivered);
        // PSN 1 is lost: 2 arrives out of order, is discarded and NACKed with expected 1 and
        // a CNP.
        let out = r.on_data(US, &data(2));
        assert!(!out.delivered);
        let nack = out.reply.expect("the first out-of-order packet is NACKed");
        assert!(nack.nack && nack.cnp);
        assert_eq!(nack.cum_ack, 1);
        assert_eq!(nack.sack_bits, 0, "nothing above the hole is kept");
        // More out-of-order packets within 4 us of that NACK: silence.
        assert!(r.on_data(2 * US, &data(3)).reply.is_none());
        assert!(r.on_data(5 * US - 1, &data(4)).reply.is_none());
        // 4 us after it, the same expected PSN is NACKed again.
        let again = r.on_data(5 * US, &data(5)).reply.expect("interval over");
        assert!(again.nack && again.cum_ack == 1);
        // The hole is filled: 1 delivered, 2 (discarded before) is not here yet.
        let out = r.on_data(6 * US, &data(1));
        assert!(out.delivered);
        assert_eq!(out.reply.unwrap().cum_ack, 2);
        assert!(!r.has(2));
        // A new expected PSN may be NACKed at once.
        let nack = r.on_data(6 * US + 1, &data(4)).reply.unwrap();
        assert!(nack.nack && nack.cum_ack == 2);
        // A duplicate is acknowledged with the cumulative point.
        let dup = r.on_data(7 * US, &data(0));
        assert!(!dup.delivered);
        let ack = dup.reply.unwrap();
        assert!(!ack.nack && ack.cum_ack == 2);
        assert_eq!(r.delivered(), 2000);
    }

    #[test]
    fn irn_keeps_out_of_order_packets_and_nacks_each_with_its_own_psn() {
        let mut r = receiver(TransportMode::Irn);
        assert!(r.on_data(0, &data(0)).delivered);
        for psn in [2, 3] {
            let out = r.on_data(US, &data(psn));
            assert!(out.delivered);
            let nack = out.reply.unwrap();
            assert!(nack.nack && nack.cnp);
            assert_eq!(nack.cum_ack, 1);
            // The SACK bitmap shows what is here above the hole.
            assert_eq!(nack.sack_base, 2);
            assert_eq!(nack.sack_bits & 0b11, if psn == 2 { 0b01 } else { 0b11 });
        }
        let out = r.on_data(2 * US, &data(1));
        assert!(out.delivered);
        let ack = out.reply.unwrap();
        assert!(!ack.nack && !ack.cnp);
        assert_eq!(ack.cum_ack, 4);
        // Trimmed packets are drops to an RNIC: no answer.
        let trimmed = DataArrival {
            trimmed: true,
            payload: 0,
            ..data(5)
        };
        assert_eq!(r.on_data(3 * US, &trimmed), SILENT);
    }

    #[test]
    fn ecn_marked_packets_get_a_cnp_by_the_policy() {
        let mut r = Receiver::new(
            100 * 1000,
            AckPolicy {
                every_bytes: 1048,
                cnp_interval: Some(0),
                mode: TransportMode::Gbn,
                ..AckPolicy::default()
            },
        );
        let marked = DataArrival {
            ecn: true,
            ..data(0)
        };
        assert!(r.on_data(0, &marked).reply.unwrap().cnp);
        assert!(!r.on_data(0, &data(1)).reply.unwrap().cnp);
    }
}
