//! Port tests: queueing, service, overflow, ECN and the counters.
use super::class::tests::params;
use super::*;
use crate::engine::Rng;
use crate::net::packet::Kind;

fn data(size: u32) -> Packet {
    Packet::blank(Kind::Data, size)
}

fn port() -> (Port, PortCold) {
    (Port::new(0), PortCold::new(Rng::new(1)))
}

/// An arena, a port and its cold part, and the small test queue (`params`).
fn rig(trimming: bool) -> (Arena<Packet>, Port, PortCold, QueueParams) {
    let (p, c) = port();
    (Arena::new(), p, c, params(trimming))
}

#[test]
fn the_service_word_keeps_size_and_wakeup_apart() {
    let (mut a, mut p, mut c, q) = rig(true);
    let d = a.alloc(data(1000));
    p.enqueue(&mut c, d, &mut a, 0, &q);
    p.set_wakeup_pending(true);
    p.dequeue(&mut c, &mut a, &q);
    assert_eq!((p.in_service_data(), p.wakeup_pending()), (1000, true));
    p.set_wakeup_pending(false);
    assert_eq!((p.in_service_data(), p.wakeup_pending()), (1000, false));
    p.busy_until = 10;
    assert_eq!(p.occupancy(5), 1000);
    assert_eq!(p.occupancy(10), 0);
}

/// The transmit counters keep their low words in the port and carry into its cold part,
/// and the sum is exact across the carry.
#[test]
fn transmit_counters_carry_into_the_cold_part() {
    let (mut p, mut c) = port();
    p.count_tx(1000, &mut c);
    assert_eq!((p.stats(&c).tx_packets, p.stats(&c).tx_bytes), (1, 1000));
    p.tx_packets_low = u32::MAX;
    p.tx_bytes_low = u32::MAX - 10;
    p.count_tx(4150, &mut c);
    p.count_tx(4150, &mut c);
    let stats = p.stats(&c);
    assert_eq!(stats.tx_packets, u32::MAX as u64 + 2);
    assert_eq!(stats.tx_bytes, u32::MAX as u64 - 10 + 8300);
    assert_eq!(
        (c.tx_packets_carries, c.tx_bytes_carries),
        (1, 1),
        "one carry each"
    );
}

/// A port whose buffer is larger than it can count (a lossless port, whose shared buffer
/// admits data) queues up to [`QUEUE_BYTES_MAX`] and then treats the queue as full.
#[test]
fn a_port_queues_at_most_queue_bytes_max() {
    let mut a = Arena::new();
    let (mut p, mut c) = port();
    let q = QueueParams {
        capacity: u64::MAX / 2,
        ecn_min: u64::MAX / 2,
        ecn_max: u64::MAX / 2,
        trimming: false,
        ..params(false)
    };
    let size = 65_535u32;
    let fits = QUEUE_BYTES_MAX / size as u64;
    for k in 0..fits {
        let h = a.alloc(data(size));
        assert_eq!(
            p.enqueue(&mut c, h, &mut a, 0, &q),
            Admission::Queued,
            "{k}"
        );
        a.free(h);
    }
    assert_eq!(p.data_bytes(), fits * size as u64);
    let h = a.alloc(data(size));
    assert!(matches!(
        p.enqueue(&mut c, h, &mut a, 0, &q),
        Admission::Dropped(_)
    ));
    assert!(p.data_bytes() <= QUEUE_BYTES_MAX);
    assert_eq!(p.stats(&c).max_occupancy, fits * size as u64);
    assert_eq!(p.stats(&c).drops, 1);
}

#[test]
fn headers_overtake_data() {
    let (mut a, mut p, mut c, q) = rig(true);
    let d = a.alloc(data(1000));
    let mut ack = data(64);
    ack.kind = Kind::Ack;
    let k = a.alloc(ack);
    assert_eq!(p.enqueue(&mut c, d, &mut a, 0, &q), Admission::Queued);
    assert_eq!(p.enqueue(&mut c, k, &mut a, 0, &q), Admission::Queued);
    // Each comes out with the size it was queued with: serving a port reads no packet.
    assert_eq!(p.dequeue(&mut c, &mut a, &q), Some(Queued::new(k, 64)));
    assert_eq!(p.dequeue(&mut c, &mut a, &q), Some(Queued::new(d, 1000)));
    assert_eq!(p.dequeue(&mut c, &mut a, &q), None);
}

#[test]
fn overflow_trims_or_drops_one_victim() {
    for trimming in [true, false] {
        let (mut a, mut p, mut c, q) = rig(trimming);
        let hs: Vec<Handle> = (0..3).map(|_| a.alloc(data(1000))).collect();
        for &h in &hs {
            assert_eq!(p.enqueue(&mut c, h, &mut a, 0, &q), Admission::Queued);
        }
        let mut victims = 0;
        for _ in 0..20 {
            let h = a.alloc(data(1000));
            match p.enqueue(&mut c, h, &mut a, 0, &q) {
                Admission::Queued => panic!("queue is full"),
                Admission::Trimmed(v) => {
                    assert!(trimming);
                    assert_eq!(a.get(v).size, 64);
                    victims += 1;
                }
                Admission::Dropped(_) => {
                    assert!(!trimming);
                    victims += 1;
                }
            }
            assert_eq!(p.data_bytes(), 3000);
        }
        assert_eq!(victims, 20);
        assert_eq!(p.data.len(), 3);
        // The slots hold the sizes the packets have: full in the data lane, a header once
        // trimmed (an evicted tail is trimmed after it left its data slot).
        for slot in p.data.iter() {
            assert_eq!(slot.size, 1000);
        }
        assert_eq!(p.headers.len(), if trimming { 20 } else { 0 });
        for slot in p.headers.iter() {
            assert_eq!((slot.size, a.get(slot.handle).size), (64, 64));
        }
    }
}

/// With a header budget of three headers, a fourth header (an ACK, or a trimmed packet
/// arriving from upstream) is dropped, and so is an overflow victim that would become one;
/// once a header leaves, one fits again.
#[test]
fn headers_beyond_the_budget_are_dropped() {
    let (mut a, mut p, mut c, q) = rig(true);
    let q = QueueParams {
        header_limit: 3 * 64,
        ..q
    };
    let header = |a: &mut Arena<Packet>, kind: Kind| {
        let mut h = data(64);
        h.kind = kind;
        if kind == Kind::Data {
            h.flags |= flags::TRIMMED;
        }
        a.alloc(h)
    };
    for kind in [Kind::Ack, Kind::Nack, Kind::Data] {
        let h = header(&mut a, kind);
        assert_eq!(p.enqueue(&mut c, h, &mut a, 0, &q), Admission::Queued);
    }
    let ack = header(&mut a, Kind::Ack);
    assert_eq!(
        p.enqueue(&mut c, ack, &mut a, 0, &q),
        Admission::Dropped(ack)
    );
    assert_eq!(p.stats(&c).drops, 0, "an ACK is not a data packet");
    let trimmed = header(&mut a, Kind::Data);
    assert_eq!(
        p.enqueue(&mut c, trimmed, &mut a, 0, &q),
        Admission::Dropped(trimmed)
    );
    // Fill the data lane, then overflow it: the victim cannot be trimmed, so it is dropped.
    for _ in 0..3 {
        let d = a.alloc(data(1000));
        assert_eq!(p.enqueue(&mut c, d, &mut a, 0, &q), Admission::Queued);
    }
    let d = a.alloc(data(1000));
    assert!(matches!(
        p.enqueue(&mut c, d, &mut a, 0, &q),
        Admission::Dropped(_)
    ));
    let stats = p.stats(&c);
    assert_eq!((stats.drops, stats.trims, p.headers.len()), (2, 0, 3));
    p.dequeue(&mut c, &mut a, &q);
    let ack = header(&mut a, Kind::Ack);
    assert_eq!(p.enqueue(&mut c, ack, &mut a, 0, &q), Admission::Queued);
}

#[test]
fn ecn_marks_above_kmax_never_below_kmin() {
    let mut a = Arena::new();
    let (mut p, mut c) = port();
    let q = QueueParams {
        capacity: 100_000,
        ..params(true)
    };
    let hs: Vec<Handle> = (0..5).map(|_| a.alloc(data(1000))).collect();
    for &h in &hs {
        p.enqueue(&mut c, h, &mut a, 0, &q);
    }
    // Leaves 4000, 3000 (> Kmax: marked), then 2000, 1000, 0 behind.
    let h0 = p.dequeue(&mut c, &mut a, &q).unwrap().handle;
    let h1 = p.dequeue(&mut c, &mut a, &q).unwrap().handle;
    assert!(a.get(h0).has(flags::ECN) && a.get(h1).has(flags::ECN));
    p.dequeue(&mut c, &mut a, &q);
    let h3 = p.dequeue(&mut c, &mut a, &q).unwrap().handle;
    let h4 = p.dequeue(&mut c, &mut a, &q).unwrap().handle;
    assert!(!a.get(h3).has(flags::ECN) && !a.get(h4).has(flags::ECN));
}

/// A port that decides ECN on departure leaves the packet it starts unmarked, however full
/// its queue; the mark is decided later on the data bytes waiting then.
#[test]
fn departure_marking_waits_for_the_bytes_behind_at_the_end() {
    let (mut a, mut p, mut c, q) = rig(true);
    let q = QueueParams {
        capacity: 100_000,
        ecn_at_departure: true,
        ..q
    };
    let hs: Vec<Handle> = (0..5).map(|_| a.alloc(data(1000))).collect();
    for &h in &hs {
        p.enqueue(&mut c, h, &mut a, 0, &q);
    }
    // 4,000 bytes behind (above Kmax), yet no mark at the start.
    let first = p.dequeue(&mut c, &mut a, &q).unwrap().handle;
    assert!(!a.get(first).has(flags::ECN));
    // Decided now on the 4,000 bytes waiting: marked.
    p.mark_ecn(&mut c, &mut a, first, &q);
    assert!(a.get(first).has(flags::ECN));
    // The queue drained to 0 bytes before the next decision: not marked.
    let last = hs[4];
    for _ in 0..4 {
        p.dequeue(&mut c, &mut a, &q);
    }
    p.mark_ecn(&mut c, &mut a, last, &q);
    assert!(!a.get(last).has(flags::ECN));
    assert_eq!(p.stats(&c).ecn_marks, 1);
}
