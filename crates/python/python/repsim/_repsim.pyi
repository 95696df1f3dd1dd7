"""Type stubs of the native module ``repsim._repsim`` (PyO3). Use the ``repsim`` package's
functions; this module is their implementation."""

from typing import Any, Callable, List, Optional, Tuple

__version__: str

class ScenarioError(ValueError):
    """A scenario problem, as the command line reports it."""

    file: str
    """The scenario file (``<string>`` for TOML text)."""
    field: str
    """Dotted path of the field (``topology.hosts``), or ``-`` for the whole file."""
    message: str
    """What is wrong and what is allowed."""

class ArrowTable:
    """A result table; ``polars.DataFrame(table)`` reads it (Arrow PyCapsule interface)."""

    columns: List[str]
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...
    def __len__(self) -> int: ...

class Scenario:
    """A loaded, checked scenario."""

    name: str
    """Its ``name`` field, else the file's stem."""
    path: Optional[str]
    """The file it was read from, or ``None`` for TOML text."""
    overrides: List[str]
    """The overrides applied, as ``KEY=VALUE`` text."""
    lbs: List[str]
    """The labels of its runs (one per ``lb`` entry)."""
    seed: int
    """The seed its runs use unless ``run`` is given another."""
    def to_toml(self) -> str:
        """The scenario with its overrides applied, as TOML that ``load`` reads back."""
    def with_overrides(self, set: List[str], check: bool = True) -> "Scenario":
        """A copy with more ``KEY=VALUE`` overrides applied after its own (checked unless not)."""

def load(
    path: Optional[str] = None, text: Optional[str] = None, set: List[str] = ..., check: bool = True
) -> Scenario:
    """Load a scenario from a file or TOML text (exactly one) with overrides; with ``check``,
    build every run as ``repsim check`` does."""

def override_toml(text: str) -> Tuple[str, str]:
    """A ``KEY=VALUE`` override's key and value as TOML text, as ``--set`` reads it."""

class RunResult:
    """The finished runs of a scenario."""

    lbs: List[str]
    failure: Optional[str]
    """Why ``repsim run`` would fail once its files are written, or ``None``."""
    def table(self, name: str) -> ArrowTable: ...
    def written_tables(self) -> List[str]: ...
    def summary_json(self) -> str: ...
    def write(self, dir: str) -> List[str]:
        """Write the command's files into ``dir``; return their names."""

def run(
    scenario: Scenario,
    lb: Optional[List[str]] = None,
    seed: Optional[int] = None,
    jobs: int = 1,
    collect: str = "scenario",
    quiet: bool = True,
    threads: Optional[int] = None,
) -> RunResult:
    """Run every load balancer of ``scenario``, as ``repsim run`` does (without the GIL)."""

class SimulatedFlow:
    """A flow of a co-simulation. Times are picoseconds."""

    id: int
    src: int
    dst: int
    bytes: int
    tag: int
    start: int
    finish: Optional[int]
    fct: Optional[int]

class Simulation:
    """One run of a scenario, advanced from Python."""

    now: int
    label: str
    hosts: int
    packet_sizes: Tuple[int, int]
    threads: int
    def __init__(
        self, scenario: Scenario, lb: Optional[str] = None, seed: Optional[int] = None, threads: Optional[int] = None
    ) -> None: ...
    def base_rtt(self, src: int, dst: int) -> int: ...
    def inject(
        self, src: int, dst: int, bytes: int, start: Optional[int] = None, after: List[int] = ..., tag: int = 0
    ) -> int: ...
    def on_complete(self, callback: Optional[Callable[[SimulatedFlow], Any]]) -> None: ...
    def on_lb_event(self, callback: Optional[Callable[[int, int, str], Any]]) -> None: ...
    def on_drop(self, callback: Optional[Callable[[int, int, int, str, str], Any]]) -> None: ...
    def run_until(self, until: int) -> bool: ...
    def step_until_completion(self) -> List[SimulatedFlow]: ...
    def run(self) -> None: ...
    def all_done(self) -> bool: ...
    def flows(self) -> ArrowTable: ...
    def summary(self) -> ArrowTable: ...
    def rejected_flows(self) -> List[str]: ...

def sweep(file: str, out: Optional[str] = None, jobs: int = 0, quiet: bool = True, threads: int = 1) -> ArrowTable:
    """Run a sweep file as ``repsim sweep`` does; return sweep.csv as a table."""

class FigureOutcome:
    """Where a figure went, its plots, data tables and ``result.json``."""

    id: str
    out: str
    page: str
    plots: List[str]
    data: List[Tuple[str, ArrowTable]]
    result_json: str

def figure(id: str, scale: str = "small", out: Optional[str] = None, jobs: int = 0, quiet: bool = True, threads: int = 1) -> FigureOutcome:
    """Run a paper figure as ``repsim figure`` does."""

def figure_ids() -> List[Tuple[str, str, str]]:
    """Every figure: (id, paper, title)."""

def parse_time(text: str) -> int:
    """A time with its unit (``"50us"``) in picoseconds."""
