//! Unit tests of the PFC part on a bare [`World`]: it acts on the network only through it.
use super::*;
use crate::net::mmu::PfcConfig;

/// A world on the routing tests' small tree with one port per link, and its PFC part.
fn pfc_world() -> (World, PfcState) {
    let world = crate::routing::test_world_every_link(400_000_000_000);
    let cfg = PfcConfig {
        enabled: true,
        ..PfcConfig::default()
    };
    let pfc = PfcState::new(&cfg.bytes(4150), &world.topo, 4150, 64).expect("fits");
    (world, pfc)
}

/// The PFC part acts on the network only through the world it is handed: frames for one
/// link merge while one waits in the header lane (only the latest state counts), and the
/// ports to start are left for the simulation in `wake`.
#[test]
fn frames_for_a_link_merge_while_one_waits() {
    let (mut world, mut pfc) = pfc_world();
    let link = world.topo.host_uplink[0];
    let back = world.topo.host_downlink[0];
    assert_eq!(pfc.reverse[link as usize], back);
    pfc.send_frame(&mut world, link, true);
    pfc.send_frame(&mut world, link, true);
    assert_eq!(world.counters.pfc_frames_sent, 1, "the refresh merged");
    assert_eq!(
        pfc.wake,
        [(back, true)],
        "one new frame, on the reverse link"
    );
    let lane = &world.ports[back as usize].headers;
    assert_eq!(lane.len(), 1);
    let frame = *world.pkts.get(lane.front().unwrap().handle);
    assert_eq!(
        (frame.kind, frame.psn, frame.aux),
        (Kind::Pause, link, pfc.quantum)
    );
    pfc.send_frame(&mut world, link, false);
    let waiting = world.ports[back as usize].headers.front().unwrap().handle;
    let frame = *world.pkts.get(waiting);
    assert_eq!(frame.aux, 0, "the waiting pause became a resume");
    let state = pfc.links[link as usize];
    assert_eq!((state.pauses_sent, state.resumes_sent), (0, 1));
}

/// An upstream port is paused by a frame until its quantum runs out (its expiry timer),
/// then left for the simulation to start; a stale expiry changes nothing.
#[test]
fn a_pause_holds_until_its_expiry() {
    let (mut world, mut pfc) = pfc_world();
    let link = world.topo.host_uplink[0];
    let pause = Packet {
        psn: link,
        aux: pfc.quantum,
        ..Packet::blank(Kind::Pause, 64)
    };
    pfc.on_frame(&mut world, &pause);
    assert!(pfc.paused(link, 0));
    assert!(!pfc.paused(link, pfc.quantum), "runs out by itself");
    let gen = pfc.links[link as usize].expire_gen;
    world.now = pfc.quantum;
    let stale = pfc_timer(timer::EXPIRE, gen.wrapping_sub(1), link);
    pfc.on_timer(&mut world, stale);
    assert!(pfc.wake.is_empty(), "a stale expiry does nothing");
    pfc.on_timer(&mut world, pfc_timer(timer::EXPIRE, gen, link));
    assert_eq!(pfc.wake, [(link, false)]);
    let stats = pfc.link_stats(&world.topo, world.now);
    assert_eq!(stats.len(), 1);
    assert_eq!(stats[0].pauses_received, 1);
    assert!((stats[0].paused_us - to_us(pfc.quantum)).abs() < 1e-9);
}
