"""`repsim.Simulation`: flows injected from Python and from completion callbacks, completion
order, time control, and a ring AllReduce against its analytic time (as
`examples/ring_allreduce.rs` checks it from Rust)."""

import gc
import threading
import weakref
import _thread

import polars as pl
import pytest

import repsim
from conftest import FABRIC as TOPOLOGY

FABRIC = TOPOLOGY + """
[workload]
type = "external"
"""


def test_completions_come_in_order_of_size():
    sim = repsim.Simulation(FABRIC)
    assert sim.now == 0 and sim.hosts == 16 and sim.label == "reps"
    # Disjoint host pairs: no flow slows another, so the smaller finishes first.
    sizes = {0: 4 << 20, 2: 1 << 20, 4: 2 << 20, 6: 256 << 10}
    ids = {src: sim.inject(src, src + 8, size) for src, size in sizes.items()}
    seen = []
    sim.on_complete(lambda f: seen.append(f.id))
    stepped = []
    while True:
        done = sim.step_until_completion()
        if not done:
            break
        stepped += [f.id for f in done]
        assert all(f.finish is not None and f.finish <= sim.now for f in done)
    by_size = [ids[src] for src in sorted(sizes, key=sizes.get)]
    assert stepped == by_size
    assert seen == by_size
    assert sim.all_done()
    flows = sim.flows()
    assert flows.height == 4 and flows["fct_us"].null_count() == 0


def test_after_and_start_are_honoured():
    sim = repsim.Simulation(FABRIC)
    first = sim.inject(0, 9, 1 << 20)
    second = sim.inject(1, 10, 64 << 10, after=[first])
    late = sim.inject(2, 11, 64 << 10, start="30us")
    sim.run()
    flows = {r["id"]: r for r in sim.flows().iter_rows(named=True)}
    assert flows[second]["start"] >= flows[first]["finish"]
    assert flows[late]["start"] == pytest.approx(30.0)
    assert sim.summary()["flows_completed"].to_list() == [3]


def test_run_until_moves_the_clock_and_injects_later():
    sim = repsim.Simulation(FABRIC)
    assert sim.run_until("10us") is False  # nothing to do yet
    assert sim.now == 10 * repsim.US
    fid = sim.inject(3, 12, 128 << 10)
    sim.run_until(repsim.time("20us"))
    assert sim.now == 20 * repsim.US
    sim.run()
    row = sim.flows().filter(id=fid).row(0, named=True)
    assert row["start"] == pytest.approx(10.0)


def test_a_callback_error_stops_the_step_and_is_raised():
    sim = repsim.Simulation(FABRIC)
    sim.inject(0, 8, 64 << 10)
    sim.inject(1, 9, 128 << 10)

    def fail(flow):
        raise RuntimeError(f"stop at {flow.id}")

    sim.on_complete(fail)
    with pytest.raises(RuntimeError, match="stop at"):
        sim.run()
    sim.on_complete(None)
    sim.run()
    assert sim.all_done()


def test_a_callback_may_inject_but_not_step_or_read_the_simulation():
    sim = repsim.Simulation(FABRIC)
    sim.inject(0, 8, 64 << 10)
    seen = []

    @sim.on_complete
    def inside(flow):
        seen.append((flow.id, sim.now, sim.hosts))
        for call in (sim.flows, sim.run, sim.all_done):
            with pytest.raises(RuntimeError, match="running"):
                call()
        if flow.id == 0:
            sim.inject(1, 9, 64 << 10, after=[0])

    sim.run()
    assert [s[0] for s in seen] == [0, 1]
    assert seen[0][1] > 0 and seen[0][2] == 16
    assert sim.all_done() and sim.flows().height == 2


def test_bad_injections_are_refused():
    sim = repsim.Simulation(FABRIC)
    with pytest.raises(ValueError, match="inject"):
        sim.inject(0, 99, 1000)
    with pytest.raises(ValueError, match="inject"):
        sim.inject(3, 3, 1000)
    with pytest.raises(ValueError, match="inject"):
        sim.inject(3, 4, 0)
    with pytest.raises(ValueError):
        sim.base_rtt(0, 16)
    with pytest.raises(ValueError):
        repsim.time(-1)


def test_lb_event_callbacks_fire():
    # REPS freezes its entropies when a failure makes packets vanish, and thaws them later.
    sim = repsim.Simulation("scenarios/reps-micro-failures.toml", lb="reps")
    events = []
    sim.on_lb_event(lambda t, flow, event: events.append((t, event)))
    sim.run()
    assert sim.all_done()
    kinds = {e for _, e in events}
    assert kinds == {"froze", "unfroze"}, kinds
    times = [t for t, _ in events]
    assert times == sorted(times)


def test_ctrl_c_stops_a_co_simulation_which_can_go_on(ctrl_c):
    sim = repsim.Simulation(FABRIC)
    for src in range(8):
        sim.inject(src, src + 8, 2 << 30)  # about 40 ms of simulated time, many seconds to run
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        sim.run()
    timer.cancel()
    stopped = sim.now
    assert 0 < stopped and not sim.all_done()
    sim.run_until(stopped + 10 * repsim.US)
    assert sim.now == stopped + 10 * repsim.US


def test_drop_callbacks_fire():
    sim = repsim.Simulation(FABRIC, set={"queue.size": "8pkt", "queue.trimming": False})
    drops = []
    sim.on_drop(lambda t, port, flow, kind, cause: drops.append((kind, cause)))
    for src in range(8):
        sim.inject(src, 15, 256 << 10)  # an incast into host 15
    sim.run()
    assert drops and all(cause == "Overflow" for _, cause in drops)
    assert sim.all_done()


def ring_allreduce(hosts: int, buffer: int):
    """A ring AllReduce driven by completion callbacks: each host sends its next chunk when the
    chunk it waits for has arrived. Returns (flows, measured ps, analytic ps)."""
    sim = repsim.Simulation(FABRIC)
    steps = 2 * (hosts - 1)
    chunk = buffer // hosts

    @sim.on_complete
    def next_step(flow):
        if flow.tag < steps:
            sim.inject(flow.dst, (flow.dst + 1) % hosts, chunk, tag=flow.tag + 1)

    for h in range(hosts):
        sim.inject(h, (h + 1) % hosts, chunk, tag=1)
    sim.run()
    assert sim.all_done() and not sim.rejected_flows()
    flows = sim.flows()
    mtu, header = sim.packet_sizes
    wire = chunk + -(-chunk // (mtu - header)) * header
    serialisation = -(-(wire * 8 * repsim.SEC) // 400_000_000_000)
    worst_rtt = max(sim.base_rtt(h, (h + 1) % hosts) for h in range(hosts))
    measured = round(flows["finish"].max() * repsim.US)
    return flows.height, measured, steps * (serialisation + worst_rtt)


def test_ring_allreduce_from_callbacks_takes_the_analytic_time():
    flows, measured, analytic = ring_allreduce(16, 64 << 20)
    assert flows == 16 * 2 * 15
    assert 0.9 <= measured / analytic <= 1.1, (measured, analytic)


def test_a_simulation_with_a_callback_that_refers_to_it_is_freed():
    sim = repsim.Simulation(FABRIC)

    @sim.on_complete
    def next_step(flow):
        sim.inject(0, 9, 1000)

    alive = weakref.ref(sim)
    del sim, next_step
    gc.collect()
    assert alive() is None


def test_injected_ids_stay_clear_of_a_trace_workloads_own():
    sim = repsim.Simulation("scenarios/websearch-128.toml", lb="reps")
    ids = [sim.inject(h, h + 64, 64 << 10) for h in range(4)]
    assert min(ids) >= 1 << 48
    sim.run_until("200us")
    assert not sim.rejected_flows()
    flows = sim.flows()
    assert flows.filter(pl.col("id") < (1 << 48)).height > 10  # the trace's own arrived too
    assert set(flows.filter(pl.col("id") >= (1 << 48))["id"].to_list()) == set(ids)


def test_flows_injected_from_a_drop_callback_are_added():
    sim = repsim.Simulation(FABRIC, set={"queue.size": "8pkt", "queue.trimming": False})
    extra = []

    @sim.on_drop
    def dropped(t, port, flow, kind, cause):
        if not extra:
            extra.append(sim.inject(12, 13, 4096))

    for src in range(8):
        sim.inject(src, 15, 256 << 10)
    sim.run()
    assert extra and sim.all_done() and not sim.rejected_flows()
    row = sim.flows().filter(id=extra[0]).row(0, named=True)
    assert row["finish"] is not None


def driven(threads):
    """A ring driven from callbacks, with a flow injected between steps and one waiting for a
    finished flow: what the callbacks saw, the flows and the summary."""
    sim = repsim.Simulation(FABRIC, threads=threads)
    seen = []

    @sim.on_complete
    def next_step(flow):
        seen.append((flow.id, flow.finish))
        if 0 < flow.tag < 6:
            sim.inject(flow.dst, (flow.dst + 5) % 16, 512 << 10, tag=flow.tag + 1)

    for h in range(16):
        sim.inject(h, (h + 5) % 16, 512 << 10, tag=1)
    sim.run_until("7.3us")
    late = sim.inject(3, 12, 100 << 10)
    first = sim.step_until_completion()
    sim.inject(12, 3, 64 << 10, after=[first[0].id, late])
    middle = sim.summary()
    sim.run()
    assert sim.all_done()
    drop = lambda frame: frame.drop("peak_packets", "wall_s", strict=False)  # noqa: E731
    return sim.threads, seen, [f.id for f in first], sim.flows(), drop(middle), drop(sim.summary())


def test_a_co_simulation_on_threads_is_the_same_as_on_one():
    threads, *one = driven(1)
    assert threads == 1 and len(one[0]) == 16 * 6 + 2
    for n in (2, 3):
        threads, *many = driven(n)
        assert threads == n
        assert many[0] == one[0] and many[1] == one[1]
        for mine, theirs in zip(many[2:], one[2:]):
            assert mine.equals(theirs), (n, mine, theirs)


def test_an_instant_ring_splits_and_the_variable_sets_the_threads(monkeypatch):
    # The ring AllReduce's instant triggers release flows at other hosts at once: the split
    # keeps the ring's hosts in one partition.
    ring = {"workload.file": "../data/htsim/connection_matrices/allreduce_128.cm"}
    sim = repsim.Simulation("scenarios/permutation-128.toml", lb="reps", set=ring, threads=2)
    assert sim.threads == 2
    monkeypatch.setenv("REPSIM_THREADS", "2")
    sim = repsim.Simulation("scenarios/permutation-128.toml", lb="reps", set=ring)
    assert sim.threads == 2
    assert repsim.Simulation(FABRIC).threads == 2
    monkeypatch.setenv("REPSIM_THREADS", "many")
    with pytest.raises(RuntimeError, match="REPSIM_THREADS"):
        repsim.Simulation(FABRIC)
