"""repsim from Python: packet-level datacenter network simulation for multipath load balancing.

The simulator is the Rust library the ``repsim`` command runs; this package calls it in-process
(no subprocess, no CSV files unless you ask for them) and returns results as polars data frames.

Quick start::

    import repsim
    result = repsim.run("scenarios/reps-micro-asymmetric.toml")
    print(result.summary)            # a row per load balancer
    result.flows                     # flows.csv as a data frame
    result.write("results/mine")     # exactly the files `repsim run` writes

Entry points:

* :func:`load` reads a scenario (file or TOML text) with ``--set``-style overrides.
* :func:`run` runs it once per load balancer and returns a :class:`Result`.
* :class:`Simulation` drives one run step by step, for co-simulation with a collective or
  training framework: inject flows, get completion callbacks, advance time.
* :func:`sweep` runs a scenario over the points of axes and returns ``sweep.csv`` as a frame.
* :func:`figure` reruns a paper figure and returns its data and plots.

Times given to and returned by :class:`Simulation` are integer picoseconds (the simulator's
clock); :func:`time` turns ``"50us"`` into picoseconds. Result frames use the output files'
columns and units (``docs/output-schema.md``), e.g. ``start``/``finish`` and ``fct_us`` in
microseconds.
"""

from __future__ import annotations

import hashlib
import json
import numbers
import os
import pathlib
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import polars as pl

from . import _repsim
from ._repsim import ScenarioError, Scenario, SimulatedFlow, __version__

__all__ = [
    "Figure",
    "Result",
    "RunError",
    "Scenario",
    "ScenarioError",
    "SimulatedFlow",
    "Simulation",
    "figure",
    "figures",
    "load",
    "run",
    "sweep",
    "time",
    "NS",
    "US",
    "MS",
    "SEC",
    "__version__",
]

#: Picoseconds in a nanosecond, microsecond, millisecond and second.
NS = 1_000
US = 1_000_000
MS = 1_000_000_000
SEC = 1_000_000_000_000

PathLike = Union[str, "os.PathLike[str]"]
Overrides = Union[Mapping[str, Any], Iterable[str], None]



def time(value: Union[int, str]) -> int:
    """Return ``value`` in picoseconds: an int is already picoseconds, a string has a unit.

    >>> time("50us")
    50000000
    """
    if isinstance(value, bool):
        raise TypeError("a time is an int (picoseconds) or a string such as '50us'")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a time cannot be negative: {value}")
        return value
    if isinstance(value, str):
        return _repsim.parse_time(value)
    raise TypeError(f"a time is an int (picoseconds) or a string such as '50us', not {type(value).__name__}")


def _toml_value(v: Any) -> str:
    """``v`` written as a TOML value (strings quoted)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        v = float(v)
        if v != v or v in (float("inf"), float("-inf")):
            return {"nan": "nan", "inf": "inf", "-inf": "-inf"}[repr(v)]
        text = repr(v)
        return text if any(c in text for c in ".eE") else text + ".0"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} {v!r} as a scenario value")


def _overrides(set: Overrides) -> List[str]:
    """Overrides as ``KEY=VALUE`` text: a mapping's values are written as TOML; strings in a
    list are taken as written (``"transport.evs_size=32"``, ``"cc=nscc"``)."""
    if set is None:
        return []
    if isinstance(set, str):
        return [set]
    if isinstance(set, Mapping):
        return [f"{k}={_toml_value(v)}" for k, v in set.items()]
    return [str(s) for s in set]


def _looks_like_toml(text: str) -> bool:
    """TOML text rather than a path: it has a line break, or an ``=`` and is neither an existing
    file nor a name ending in ``.toml``."""
    if "\n" in text:
        return True
    return "=" in text and not os.path.exists(text) and not text.rstrip().endswith(".toml")


def load(source: Union[PathLike, Scenario], set: Overrides = None) -> Scenario:
    """Load and check a scenario.

    ``source`` is a scenario file's path, TOML text (anything with a newline, or with ``=``
    that is neither a file nor a ``.toml`` name), or a :class:`Scenario` (to apply more
    overrides). ``set`` overrides fields as ``repsim run --set`` does: a mapping of dotted keys to values (``{"transport.evs_size":
    32, "cc": "nscc", "workload.flows[0].size": "4MiB"}``) or a list of ``"KEY=VALUE"``
    strings.

    Every run the scenario names is built, so a bad value fails here, as
    :class:`ScenarioError` (a ``ValueError``) with ``file``, ``field`` and ``message``, the same
    error ``repsim check`` prints.
    """
    return _load(source, set, check=True)


def _load(source: Union[PathLike, Scenario], set: Overrides, check: bool) -> Scenario:
    """:func:`load`, building the runs to check them only with ``check`` (what runs a scenario
    builds them anyway and fails alike)."""
    sets = _overrides(set)
    if isinstance(source, Scenario):
        return source.with_overrides(sets, check=check) if sets else source
    if isinstance(source, os.PathLike):
        return _repsim.load(path=os.fspath(source), set=sets, check=check)
    if isinstance(source, str):
        if _looks_like_toml(source):
            return _repsim.load(text=source, set=sets, check=check)
        return _repsim.load(path=source, set=sets, check=check)
    raise TypeError(f"load: give a path, TOML text or a Scenario, not {type(source).__name__}")


def _frame(table: Any) -> pl.DataFrame:
    """A native Arrow table as a polars data frame (through the Arrow C stream interface)."""
    return pl.DataFrame(table)


class Result:
    """The finished runs of a scenario, one per load balancer (from :func:`run`).

    Each table is a polars data frame with the columns of the file ``repsim run`` writes
    (``docs/output-schema.md``); ``.to_pandas()`` on a frame gives pandas (needs pandas and
    pyarrow). Frames are built on first access and kept.
    """

    def __init__(self, native: "_repsim.RunResult", scenario: Scenario):
        self._native = native
        self._cache: Dict[str, pl.DataFrame] = {}
        #: The scenario that ran.
        self.scenario = scenario

    def table(self, name: str) -> pl.DataFrame:
        """The table of file stem ``name``: ``flows``, ``summary``, ``slowdown``,
        ``collectives``, ``flow_stats``, ``lb_events``, ``ports``, ``port_series``, ``cwnd``,
        ``pfc`` or ``elephants``. A table the run did not fill has its columns and no rows."""
        if name not in self._cache:
            self._cache[name] = _frame(self._native.table(name))
        return self._cache[name]

    @property
    def flows(self) -> pl.DataFrame:
        """``flows.csv``: a row per flow and load balancer (``lb``, ``id``, ``src``, ``dst``,
        ``bytes``, ``start``, ``finish``, ``fct_us``, ``retransmissions``, ...; times in us,
        null for an unfinished flow)."""
        return self.table("flows")

    @property
    def summary(self) -> pl.DataFrame:
        """``summary.json`` as a row per load balancer (nested fields flattened with ``_``,
        e.g. ``fct_p99_us``)."""
        return self.table("summary")

    @property
    def slowdown(self) -> pl.DataFrame:
        """``slowdown.csv``: FCT slowdown per load balancer and flow-size bucket."""
        return self.table("slowdown")

    @property
    def collectives(self) -> pl.DataFrame:
        """``collectives.csv``: per collective step, its start, finish and duration (empty
        unless the workload is a collective or connection matrix)."""
        return self.table("collectives")

    @property
    def lb_events(self) -> pl.DataFrame:
        """``lb_events.csv``: what the load balancers did (freezes, reroutes, path changes)."""
        return self.table("lb_events")

    @property
    def series(self) -> pl.DataFrame:
        """``port_series.csv``: per port and time bucket, bytes sent, utilisation, drops, marks
        and queue samples (empty unless the run collected ports: ``collect="all"`` or the
        scenario's ``[collect]``)."""
        return self.table("port_series")

    @property
    def ports(self) -> pl.DataFrame:
        """``ports.csv``: per port, totals over the run (empty unless ports were collected)."""
        return self.table("ports")

    @property
    def flow_stats(self) -> pl.DataFrame:
        """``flow_stats.csv``: per flow, transport counters (packets, retransmissions, ACKs)."""
        return self.table("flow_stats")

    @property
    def tables(self) -> List[str]:
        """The stems of the tables this result writes as files."""
        return self._native.written_tables()

    @property
    def lbs(self) -> List[str]:
        """The run labels, in order."""
        return self._native.lbs

    @property
    def failure(self) -> Optional[str]:
        """Why ``repsim run`` would fail on these runs after writing its files (flows that could
        not reach their destination), or ``None``."""
        return self._native.failure

    def summary_dict(self) -> Dict[str, Any]:
        """``summary.json`` parsed (every field, slowdown buckets and classes included)."""
        return json.loads(self._native.summary_json())

    def write(self, directory: PathLike) -> List[pathlib.Path]:
        """Write the files ``repsim run`` writes (``flows.csv``, ``summary.json``,
        ``scenario.toml``, ``run.json``, ``run.complete``, ...) into ``directory``, creating it;
        byte for byte the command's files for the same scenario and seed, bar wall-clock times
        and the command line. Returns the paths written."""
        d = pathlib.Path(directory)
        names = self._native.write(os.fspath(d))
        written = [d / n for n in names] + [d / "run.json"]
        marker = d / "run.complete"
        return written + [marker] if marker.exists() else written

    def __repr__(self) -> str:
        return f"Result({self.scenario.name!r}, lbs={self.lbs})"


class RunError(RuntimeError):
    """Runs that ``repsim run`` would fail after writing their files (flows that could not
    reach their destination): the message says why, ``.result`` holds the results."""

    def __init__(self, message: str, result: "Result"):
        super().__init__(message)
        #: The runs' results, as :func:`run` would have returned them.
        self.result = result


def run(
    scenario: Union[PathLike, Scenario],
    lb: Union[str, Sequence[str], None] = None,
    seed: Optional[int] = None,
    jobs: int = 1,
    collect: str = "scenario",
    set: Overrides = None,
    quiet: bool = True,
    threads: Optional[int] = None,
) -> Result:
    """Run ``scenario`` once per load balancer, as ``repsim run`` does, and return the results.

    ``scenario`` is a :class:`Scenario` or anything :func:`load` takes (with ``set``
    overrides). ``lb`` picks load balancers by label or name (default: the scenario's ``lb``);
    ``seed`` overrides the scenario's; ``jobs`` runs that many load balancers at once (0: one
    per core; results are the same); ``collect`` is ``"scenario"`` (its ``[collect]``
    section), ``"all"`` (every port, queue samples, cwnd traces) or ``"none"``; ``quiet=False``
    prints the notes and warnings the command prints. ``threads`` runs each simulation on that
    many threads (default: the scenario's ``threads``, else ``REPSIM_THREADS``, else the
    machine's cores, as for ``repsim run``; with a default, a run that cannot be split runs on
    one thread), its network split into
    partitions, with the same results as one thread (``repsim run --threads``; above one, the
    load balancers run one after another and a run whose features cannot be split yet raises
    ``RuntimeError`` naming them). Stall detection and Ctrl-C act on threads as on one.

    The simulation runs without the GIL; Ctrl-C stops it and raises ``KeyboardInterrupt``.
    Flows that cannot reach their destination raise :class:`RunError` (a ``RuntimeError``) as
    the command fails; its ``.result`` holds the results all the same.
    """
    scn = _load(scenario, set, check=False)
    lbs = [lb] if isinstance(lb, str) else (list(lb) if lb is not None else None)
    native = _repsim.run(
        scn, lb=lbs, seed=seed, jobs=jobs, collect=collect, quiet=quiet, threads=threads
    )
    result = Result(native, scn)
    if result.failure is not None:
        raise RunError(result.failure, result)
    return result


class Simulation:
    """One run of a scenario driven step by step from Python (co-simulation).

    Build it from a scenario (its flows are loaded; an ``external`` workload starts with none),
    then advance time with :meth:`run_until`, :meth:`step_until_completion` or
    :meth:`run`, and add flows with :meth:`inject`, from outside or from a completion
    callback (:meth:`on_complete`), as a collective framework schedules each step's flows::

        sim = repsim.Simulation(scenario)
        @sim.on_complete
        def done(flow):
            if flow.tag < steps:
                sim.inject(flow.dst, (flow.dst + 1) % n, chunk, tag=flow.tag + 1)
        sim.run()

    Times are integer picoseconds (strings such as ``"50us"`` are accepted where a time is
    given). Callbacks run on the calling thread, at the end of each microsecond of simulated
    time in which something happened, in the order it happened; the simulation runs without
    the GIL between them, and Ctrl-C stops it (``KeyboardInterrupt``; it can be resumed). An
    exception in a callback stops the step and is raised from it.

    ``threads`` splits the run over that many threads as ``repsim run --threads`` does
    (default: the scenario's ``threads``, else the ``REPSIM_THREADS`` environment variable,
    else the machine's cores): the same flows, callbacks and summary at any thread count. A run
    whose features cannot be split yet raises ``RuntimeError`` when ``threads`` is given, and
    runs on one thread with a ``RuntimeWarning`` when the count is a default. On a small fabric
    ``threads=1`` is faster.
    """

    def __init__(
        self,
        scenario: Union[PathLike, Scenario],
        lb: Optional[str] = None,
        seed: Optional[int] = None,
        set: Overrides = None,
        threads: Optional[int] = None,
    ):
        self.scenario = _load(scenario, set, check=False)
        self._native = _repsim.Simulation(self.scenario, lb=lb, seed=seed, threads=threads)

    @property
    def threads(self) -> int:
        """The threads the run is split over (1: it runs whole)."""
        return self._native.threads

    @property
    def now(self) -> int:
        """Simulated time now, ps."""
        return self._native.now

    @property
    def label(self) -> str:
        """The run's load balancer label."""
        return self._native.label

    @property
    def hosts(self) -> int:
        """Number of hosts."""
        return self._native.hosts

    @property
    def packet_sizes(self) -> Tuple[int, int]:
        """The transport's packet (MTU) and header sizes, bytes."""
        return self._native.packet_sizes

    def base_rtt(self, src: int, dst: int) -> int:
        """Base (empty-network) round-trip time between two hosts, ps."""
        return self._native.base_rtt(src, dst)

    def inject(
        self,
        src: int,
        dst: int,
        bytes: int,
        start: Union[int, str, None] = None,
        after: Iterable[int] = (),
        tag: int = 0,
    ) -> int:
        """Add a flow of ``bytes`` from host ``src`` to host ``dst``; return its id.

        It starts at ``start`` (ps or ``"10us"``; default now, never before now) once every
        flow in ``after`` (ids) has finished. ``tag`` is yours (the completion callback sees
        it). Callbacks are called at the end of the microsecond of simulated time in which
        what they report happened: a flow injected from a completion callback joins the run
        there; from the other callbacks, when the step ends."""
        return self._native.inject(
            src, dst, bytes, start=None if start is None else time(start), after=list(after), tag=tag
        )

    def on_complete(self, callback: Optional[Callable[[SimulatedFlow], Any]]) -> Optional[Callable[[SimulatedFlow], Any]]:
        """Call ``callback(flow)`` whenever a flow finishes (``None`` removes it); usable as a
        decorator."""
        self._native.on_complete(callback)
        return callback

    def on_lb_event(self, callback: Optional[Callable[[int, int, str], Any]]) -> Optional[Callable[[int, int, str], Any]]:
        """Call ``callback(time_ps, flow_index, event)`` for every load-balancer event (the
        rows of ``lb_events.csv``; ``flow_index`` is the flow's row in :meth:`flows`); usable
        as a decorator."""
        self._native.on_lb_event(callback)
        return callback

    def on_drop(self, callback: Optional[Callable[[int, int, int, str, str], Any]]) -> Optional[Callable[[int, int, int, str, str], Any]]:
        """Call ``callback(time_ps, port, flow_index, kind, cause)`` for every lost packet
        (``flow_index``: the flow's row in :meth:`flows`); usable as a decorator."""
        self._native.on_drop(callback)
        return callback

    def run_until(self, until: Union[int, str]) -> bool:
        """Process every event up to and including ``until`` and leave the clock there; return
        whether anything is left to do."""
        return self._native.run_until(time(until))

    def step_until_completion(self) -> List[SimulatedFlow]:
        """Run until a flow finishes; return it (with any others that finished in the same
        microsecond), the clock left at the end of that microsecond, or an empty list when
        nothing is left to do."""
        return self._native.step_until_completion()

    def run(self) -> None:
        """Run until nothing is left to do (or the scenario's end time)."""
        self._native.run()

    def all_done(self) -> bool:
        """Whether every flow has finished."""
        return self._native.all_done()

    def flows(self) -> pl.DataFrame:
        """Every flow so far, as ``flows.csv``'s data frame."""
        return _frame(self._native.flows())

    def summary(self) -> pl.DataFrame:
        """The run's summary so far (one row, as :attr:`Result.summary`)."""
        return _frame(self._native.summary())

    def rejected_flows(self) -> List[str]:
        """Flows injected from callbacks that could not be added, with the reason."""
        return self._native.rejected_flows()

    def __repr__(self) -> str:
        return repr(self._native)


def sweep(
    base: Union[PathLike, Scenario],
    axes: Mapping[str, Union[Sequence[Any], Mapping[str, Sequence[Any]]]],
    jobs: int = 0,
    lb: Union[str, Sequence[str], None] = None,
    set: Overrides = None,
    collect: str = "none",
    out: Optional[PathLike] = None,
    name: Optional[str] = None,
    quiet: bool = True,
    threads: int = 1,
) -> pl.DataFrame:
    """Run ``base`` over every point of ``axes`` and return ``sweep.csv`` as one data frame.

    ``axes`` maps a dotted scenario key (or ``seed``, or ``scenario`` for other base files) to
    its values, ``{"transport.evs_size": [8, 32, 256]}``, or to ``{"values": [...], "labels":
    [...]}``; the first axis varies slowest. The points and rows are those of ``repsim
    sweep`` with the same sweep file, which this writes as ``<out>/sweep.toml`` (default
    ``out``: ``results/sweeps/<name>``, ``name`` default ``<scenario>-sweep``); each point runs
    into ``<out>/points/``, finished points are kept and skipped when run again, as the command
    does. A scenario given as text is written beside it as ``base-<hash>.toml``. ``jobs``
    points run at once (0: every core); with ``threads`` above 1 each simulation runs on that
    many threads (the same rows) and ``jobs`` counts cores.

    For sweeps bigger than one machine, run the points on a cluster: see
    ``examples/python/ray_sweep.py`` (Ray) or ``repsim sweep --emit slurm``.
    """
    # Each point is checked as it is built (`repsim sweep` checks them all before running).
    scn = _load(base, None, check=False)
    extra = _overrides(set)
    name = name or f"{scn.name}-sweep"
    out_dir = pathlib.Path(out) if out is not None else pathlib.Path("results") / "sweeps" / name
    out_dir.mkdir(parents=True, exist_ok=True)
    if scn.path is not None:
        base_path = pathlib.Path(scn.path).resolve()
        overrides = list(scn.overrides) + extra
    else:
        # Named by its content: a point records its scenario's path, so another text must not
        # take the place of one whose points have run.
        text = scn.to_toml()
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        base_path = (out_dir / f"base-{digest}.toml").resolve()
        base_path.write_text(text)
        overrides = extra
    # As `--set` reads them (a value that is not TOML is a string); a key set twice keeps its
    # last value.
    settings = dict(_repsim.override_toml(o) for o in overrides)
    lines = [
        f"scenario = {json.dumps(str(base_path))}",
        f"name = {json.dumps(name)}",
        f"collect = {json.dumps(collect)}",
    ]
    if lb is not None:
        lbs = [lb] if isinstance(lb, str) else list(lb)
        lines.append(f"lb = {_toml_value(lbs)}")
    if settings:
        lines.append("")
        lines.append("[set]")
        for key, value in settings.items():
            lines.append(f"{json.dumps(key, ensure_ascii=False)} = {value}")
    for key, spec in axes.items():
        if isinstance(spec, Mapping):
            values, labels = list(spec["values"]), spec.get("labels")
        else:
            values, labels = list(spec), None
        lines += ["", "[[axis]]", f"key = {json.dumps(key)}", f"values = {_toml_value(values)}"]
        if labels is not None:
            lines.append(f"labels = {_toml_value([str(x) for x in labels])}")
    file = out_dir / "sweep.toml"
    file.write_text("\n".join(lines) + "\n")
    table = _repsim.sweep(os.fspath(file), out=os.fspath(out_dir), jobs=jobs, quiet=quiet, threads=threads)
    return _frame(table)


class Figure:
    """A paper figure rerun by :func:`figure`: its data, plots and the paper's numbers beside
    ours. Unpacks as ``data, plots = repsim.figure(...)``."""

    def __init__(self, native: "_repsim.FigureOutcome"):
        #: The figure's id (``reps-fig4``).
        self.id: str = native.id
        #: Its output directory.
        self.out = pathlib.Path(native.out)
        #: Its HTML page (plots, claims and data together).
        self.page = pathlib.Path(native.page)
        #: Its plots (SVG and PNG).
        self.plots: List[pathlib.Path] = [pathlib.Path(p) for p in native.plots]
        #: Each panel's data by file stem.
        self.panels: Dict[str, pl.DataFrame] = {stem: _frame(t) for stem, t in native.data}
        result = json.loads(native.result_json)
        #: ``result.json`` parsed.
        self.result: Dict[str, Any] = result
        #: The paper's numbers beside ours (``what``, ``paper``, ``ours``, ...).
        self.claims = pl.DataFrame(result.get("claims", [])) if result.get("claims") else pl.DataFrame()

    @property
    def data(self) -> pl.DataFrame:
        """The figure's data: its one panel's frame, or every panel's with a ``panel``
        column."""
        frames = list(self.panels.items())
        if len(frames) == 1:
            return frames[0][1]
        return pl.concat(
            [f.with_columns(pl.lit(stem).alias("panel")) for stem, f in frames], how="diagonal_relaxed"
        )

    def __iter__(self) -> Iterator[Any]:
        yield self.data
        yield self.plots

    def __repr__(self) -> str:
        return f"Figure({self.id!r}, {len(self.plots)} plots, page={str(self.page)!r})"


def figure(id: str, scale: str = "small", out: Optional[PathLike] = None, jobs: int = 0, quiet: bool = True, threads: int = 1) -> Figure:
    """Rerun paper figure ``id`` (``repsim.figures()`` lists them) at ``scale`` (``"small"``:
    reduced, about a minute on 2 cores; ``"paper"``: the paper's scale) as ``repsim figure``
    does, into ``out`` (default ``results/figures/<id>/<scale>``); finished points are kept.
    ``threads`` above 1 runs each simulation on that many threads, ``jobs`` then counting cores.
    Returns a :class:`Figure` (``data, plots = repsim.figure("reps-fig4")``)."""
    native = _repsim.figure(id, scale=scale, out=None if out is None else os.fspath(out), jobs=jobs, quiet=quiet, threads=threads)
    return Figure(native)


def figures() -> pl.DataFrame:
    """Every figure :func:`figure` runs: ``id``, ``paper`` and ``title``."""
    rows = _repsim.figure_ids()
    return pl.DataFrame(rows, schema=["id", "paper", "title"], orient="row")
