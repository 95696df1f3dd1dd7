//! `repsim.Simulation`: one run driven step by step from Python (co-simulation). The caller
//! advances simulated time (`run_until`, `step_until_completion`, `run`), adds flows
//! (`inject`) at any time, and gets the Rust API's observer events as Python callbacks: a
//! completion callback that may inject the next step's flows, as `examples/ring_allreduce.rs`
//! does from Rust.
//!
//! The simulation runs with the GIL released (on the calling thread, or split over `threads`
//! threads as `repsim run --threads` splits it, with the same results), in steps of one
//! microsecond of simulated time between which Ctrl-C is looked for. Callbacks are called at
//! the ends of the microsecond slices ([`repsim::sim::OBSERVER_SLICE`]) in which things
//! happened, in the order one thread ran them, each taking the GIL back for its call; the flows
//! they inject join the run there (from a completion callback, as `Injector::add_flow` adds
//! them; from the other callbacks, or from another Python thread, when the step ends).
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::{PyTraverseError, PyVisit};
use repsim::engine::time::{Time, US};
use repsim::lb::LbRecord;
use repsim::scenario::LbRun;
use repsim::sim::{Flow, Injector, Observer, PacketDrop, SetupError, SplitSimulation};
use repsim::workload::FlowSpec;

use crate::errors::py_err;
use crate::frames::{self, arrow_err, ArrowTable};
use crate::scenario::Scenario;
use repsim_experiment::threads::Threads;

/// Simulated time run between two looks for Ctrl-C.
const SLICE: Time = US;

/// The first id of flows injected into a run whose trace workload numbers its own from 1.
const INJECTED_IDS_OVER_A_TRACE: u64 = 1 << 48;

/// A finished flow, as a completion callback and `step_until_completion` give it. Times are
/// integer picoseconds.
#[pyclass(module = "repsim._repsim", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct SimulatedFlow {
    /// The flow's id.
    id: u64,
    /// Sending host.
    src: u32,
    /// Receiving host.
    dst: u32,
    /// Bytes.
    bytes: u64,
    /// The caller's tag (`inject(..., tag=)`).
    tag: u64,
    /// When it started (ps; its dependencies done).
    start: Time,
    /// When its last byte was acknowledged (ps), if it has finished.
    finish: Option<Time>,
}

#[pymethods]
impl SimulatedFlow {
    /// Flow completion time (ps), if it has finished.
    #[getter]
    fn fct(&self) -> Option<Time> {
        self.finish.map(|f| f - self.start)
    }

    fn __repr__(&self) -> String {
        format!(
            "SimulatedFlow(id={}, src={}, dst={}, bytes={}, tag={}, start={}, finish={:?})",
            self.id, self.src, self.dst, self.bytes, self.tag, self.start, self.finish
        )
    }
}

impl From<&Flow> for SimulatedFlow {
    fn from(f: &Flow) -> Self {
        SimulatedFlow {
            id: f.spec.id,
            src: f.spec.src,
            dst: f.spec.dst,
            bytes: f.spec.bytes,
            tag: f.spec.tag,
            start: f.start(),
            finish: f.finish,
        }
    }
}

/// What the Python object and the observer inside the simulation share.
#[derive(Default)]
struct Shared {
    /// Flows injected while the simulation runs, added when the callback returns.
    pending: Mutex<Vec<FlowSpec>>,
    /// The simulation is running (inject queues instead of adding).
    running: AtomicBool,
    /// Simulated time of the last callback (what `now` says while running).
    now: AtomicU64,
    /// Callbacks: completion, load-balancer event, drop.
    on_complete: Mutex<Option<Py<PyAny>>>,
    on_lb_event: Mutex<Option<Py<PyAny>>>,
    on_drop: Mutex<Option<Py<PyAny>>>,
    /// The first exception a callback raised (raised again when the step returns; later
    /// callbacks are skipped).
    error: Mutex<Option<PyErr>>,
    /// Injected flows the simulation refused once the step had them, with the reason.
    rejected: Mutex<Vec<String>>,
}

/// Locks `m`, whatever a panic left in it.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// Adds the flows injected since the last look (not from a completion callback, whose
    /// flows the simulation takes when it returns); those it refuses go to `rejected`.
    fn add_pending(&self, sim: &mut SplitSimulation) {
        let pending = std::mem::take(&mut *lock(&self.pending));
        for spec in pending {
            let id = spec.id;
            if let Err(e) = sim.add_flow(spec) {
                lock(&self.rejected).push(format!("flow {id}: {e}"));
            }
        }
    }

    /// Calls the callback in `slot` with `args` unless an earlier one failed.
    fn call<A>(&self, slot: &Mutex<Option<Py<PyAny>>>, args: impl FnOnce(Python<'_>) -> A)
    where
        A: for<'py> pyo3::call::PyCallArgs<'py>,
    {
        if lock(&self.error).is_some() {
            return;
        }
        Python::attach(|py| {
            let Some(cb) = lock(slot).as_ref().map(|c| c.clone_ref(py)) else {
                return;
            };
            if let Err(e) = cb.call1(py, args(py)) {
                lock(&self.error).get_or_insert(e);
            }
        });
    }
}

/// The observer installed in the simulation: forwards events to the Python callbacks.
struct PyObserver(Arc<Shared>);

impl Observer for PyObserver {
    fn flow_completed(&mut self, flow: &Flow, inject: &mut Injector) {
        let s = &self.0;
        s.now.store(flow.finish.unwrap_or(0), Ordering::Relaxed);
        if lock(&s.on_complete).is_some() {
            let done = SimulatedFlow::from(flow);
            s.call(&s.on_complete, |_| (done,));
        }
        for spec in lock(&s.pending).drain(..) {
            inject.add_flow(spec);
        }
    }

    fn lb_event(&mut self, record: &LbRecord) {
        let s = &self.0;
        if lock(&s.on_lb_event).is_some() {
            let (time, flow, event) = (record.time, record.flow, record.event.name());
            s.now.store(time, Ordering::Relaxed);
            s.call(&s.on_lb_event, |_| (time, flow, event));
        }
    }

    fn packet_dropped(&mut self, drop: &PacketDrop) {
        let s = &self.0;
        if lock(&s.on_drop).is_some() {
            let d = *drop;
            s.now.store(d.time, Ordering::Relaxed);
            let (kind, cause) = (format!("{:?}", d.kind), format!("{:?}", d.cause));
            s.call(&s.on_drop, |_| (d.time, d.port, d.flow, kind, cause));
        }
    }
}

/// One run of a scenario, advanced from Python.
#[pyclass(module = "repsim._repsim", frozen)]
pub struct Simulation {
    sim: Mutex<SplitSimulation>,
    shared: Arc<Shared>,
    /// The next id `inject` gives.
    next_id: AtomicU64,
    /// The run's label, host count and packet sizes (fixed; readable from callbacks).
    label: String,
    hosts: u32,
    packet_sizes: (u32, u32),
    /// The scenario, load balancer run and seed it was built from (a split run's summary
    /// folds its partitions into the run built again).
    scenario: Py<Scenario>,
    run: LbRun,
    seed: Option<u64>,
}

impl Simulation {
    /// The simulation, unless it is running: a callback runs inside a step, which holds it
    /// (a callback reads what it is handed and injects flows; the rest waits for the step to
    /// return).
    fn sim(&self) -> PyResult<MutexGuard<'_, SplitSimulation>> {
        if self.shared.running.load(Ordering::Relaxed) {
            return Err(PyRuntimeError::new_err(
                "the simulation is running: from a callback, use inject() and the flow it is \
                 handed; read the simulation once the step returns",
            ));
        }
        Ok(lock(&self.sim))
    }

    /// Refuses a flow the simulation would reject, naming what is wrong.
    fn check_flow(&self, src: u32, dst: u32, bytes: u64) -> PyResult<()> {
        let hosts = self.hosts;
        if src >= hosts || dst >= hosts {
            return Err(PyValueError::new_err(format!(
                "inject: hosts are 0 to {}: got src {src}, dst {dst}",
                hosts - 1
            )));
        }
        if src == dst || bytes == 0 {
            return Err(PyValueError::new_err(format!(
                "inject: a flow goes between two hosts and carries at least a byte: got src \
                 {src}, dst {dst}, {bytes} bytes"
            )));
        }
        Ok(())
    }

    /// Runs `step` (which returns whether to go on) slice by slice without the GIL until it
    /// stops or Ctrl-C; then adds flows injected from elsewhere and raises a callback's error.
    fn drive(
        &self,
        py: Python<'_>,
        mut step: impl FnMut(&mut SplitSimulation) -> bool + Send,
    ) -> PyResult<()> {
        let shared = &self.shared;
        // Refuses a step from a callback (the step it runs in holds the simulation).
        let mut guard = self.sim()?;
        let sim: &mut SplitSimulation = &mut guard;
        shared.running.store(true, Ordering::Relaxed);
        let mut outcome = Ok(());
        loop {
            let more = py.detach(|| step(sim));
            shared.add_pending(sim);
            if lock(&shared.error).is_some() || !more {
                break;
            }
            if let Err(e) = py.check_signals() {
                outcome = Err(e);
                break;
            }
        }
        shared.running.store(false, Ordering::Relaxed);
        shared.now.store(sim.now(), Ordering::Relaxed);
        match lock(&shared.error).take() {
            Some(e) => Err(e),
            None => outcome,
        }
    }
}

#[pymethods]
impl Simulation {
    /// Builds the run of `scenario` for load balancer `lb` (a label or name; default its
    /// first) with `seed` (default the scenario's) on `threads` threads (default: the
    /// scenario's `threads`, else `REPSIM_THREADS`, else the machine's cores); nothing has run
    /// yet.
    #[new]
    #[pyo3(signature = (scenario, lb=None, seed=None, threads=None))]
    fn new(
        py: Python<'_>,
        scenario: Py<Scenario>,
        lb: Option<String>,
        seed: Option<u64>,
        threads: Option<u32>,
    ) -> PyResult<Self> {
        if threads == Some(0) {
            return Err(PyValueError::new_err("threads=0: use 1 or more"));
        }
        let scn = &scenario.get().loaded;
        let run = match lb {
            Some(name) => scn.select(&[name]),
            None => scn.runs().map(|mut r| {
                r.truncate(1);
                r
            }),
        }
        .map_err(py_err)?
        .pop()
        .ok_or_else(|| PyValueError::new_err("the scenario names no load balancer"))?;
        let spec = scn.build_run(&run, seed).map_err(py_err)?;
        let scenario_threads = scn.scenario.threads.map(|t| t.get());
        let (threads, note) = Threads::resolve(threads, scenario_threads, 1)
            .map_err(py_err)?
            .for_run(&run.label, &spec.split_blockers());
        if let Some(note) = note {
            let warning = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
            PyErr::warn(py, &warning, &std::ffi::CString::new(note)?, 1)?;
        }
        let spare = Mutex::new(Some(spec));
        let build = || -> Result<repsim::Simulation, SetupError> {
            let spec = match lock(&spare).take() {
                Some(spec) => spec,
                None => scn
                    .build_run(&run, seed)
                    .map_err(|e| SetupError::Invalid(format!("{e:#}")))?,
            };
            repsim::Simulation::new(spec)
        };
        let mut sim = py
            .detach(|| SplitSimulation::new(threads, build))
            .map_err(py_err)?;
        let shared = Arc::new(Shared::default());
        sim.set_observer(Box::new(PyObserver(shared.clone())));
        let first = sim.first();
        // A trace workload numbers its flows from 1 as they arrive, during the run: injected
        // flows take ids far above any it reaches.
        let first_free = first
            .flows()
            .iter()
            .map(|f| f.spec.id + 1)
            .max()
            .unwrap_or(0);
        let next_id = if scn.scenario.workload.any_is("trace") {
            first_free.max(INJECTED_IDS_OVER_A_TRACE)
        } else {
            first_free
        };
        let t = first.transport();
        let packet_sizes = (t.mtu, t.header);
        Ok(Simulation {
            label: first.label().to_string(),
            hosts: first.topology().hosts,
            packet_sizes,
            sim: Mutex::new(sim),
            shared,
            next_id: AtomicU64::new(next_id),
            scenario,
            run,
            seed,
        })
    }

    /// The threads (partitions) the run is split over (1: whole).
    #[getter]
    fn threads(&self) -> PyResult<u32> {
        Ok(self.sim()?.partitions())
    }

    /// Simulated time now (ps); inside a step, the time of the event being reported.
    #[getter]
    fn now(&self) -> Time {
        match self.sim() {
            Ok(sim) => sim.now(),
            Err(_) => self.shared.now.load(Ordering::Relaxed),
        }
    }

    /// The run's label (its load balancer).
    #[getter]
    fn label(&self) -> String {
        self.label.clone()
    }

    /// Number of hosts of the fabric.
    #[getter]
    fn hosts(&self) -> u32 {
        self.hosts
    }

    /// The transport's packet size and header size, bytes (`mtu`, `header`).
    #[getter]
    fn packet_sizes(&self) -> (u32, u32) {
        self.packet_sizes
    }

    /// Base round-trip time between two hosts (ps).
    fn base_rtt(&self, src: u32, dst: u32) -> PyResult<Time> {
        let sim = self.sim()?;
        let hosts = self.hosts;
        if src >= hosts || dst >= hosts {
            return Err(PyValueError::new_err(format!(
                "hosts are 0 to {}: got {src} and {dst}",
                hosts - 1
            )));
        }
        Ok(sim.first().base_rtt(src, dst))
    }

    /// Adds a flow of `bytes` from host `src` to host `dst`, starting at `start` (ps; default
    /// now, and never before now) once every flow of `after` (ids) has finished; returns its
    /// id. From a completion callback, the flow is added when the callback returns; from the
    /// other callbacks, when the current microsecond of simulated time has run.
    #[pyo3(signature = (src, dst, bytes, start=None, after=Vec::new(), tag=0))]
    fn inject(
        &self,
        src: u32,
        dst: u32,
        bytes: u64,
        start: Option<Time>,
        after: Vec<u64>,
        tag: u64,
    ) -> PyResult<u64> {
        self.check_flow(src, dst, bytes)?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut spec = FlowSpec::new(id, src, dst, bytes, start.unwrap_or(0));
        spec.after = after;
        spec.tag = tag;
        if self.shared.running.load(Ordering::Relaxed) {
            lock(&self.shared.pending).push(spec);
            return Ok(id);
        }
        let mut sim = self.sim()?;
        spec.start = spec.start.max(sim.now());
        sim.add_flow(spec)
            .map_err(|e| PyValueError::new_err(format!("inject: {e}")))?;
        Ok(id)
    }

    /// Sets the completion callback, `callback(flow: SimulatedFlow)`, called when a flow's
    /// last byte is acknowledged (`None` removes it).
    fn on_complete(&self, callback: Option<Py<PyAny>>) {
        *lock(&self.shared.on_complete) = callback;
    }

    /// Sets the load-balancer event callback, `callback(time_ps, flow_index, event)` (the
    /// flow's index is its row in `flows()`).
    fn on_lb_event(&self, callback: Option<Py<PyAny>>) {
        *lock(&self.shared.on_lb_event) = callback;
    }

    /// Sets the drop callback, `callback(time_ps, port, flow_index, kind, cause)` (the flow's
    /// index is its row in `flows()`).
    fn on_drop(&self, callback: Option<Py<PyAny>>) {
        *lock(&self.shared.on_drop) = callback;
    }

    /// Runs every event up to and including `until` (ps) and leaves the clock there; returns
    /// whether anything is left to do.
    fn run_until(&self, py: Python<'_>, until: Time) -> PyResult<bool> {
        let mut more = true;
        self.drive(py, |sim| {
            let next = (sim.now() + SLICE).min(until);
            more = sim.run_until(next);
            // Completions are what `step_until_completion` returns: only its own.
            sim.take_completions();
            if !more {
                // Nothing left to happen: the clock goes straight to `until`.
                sim.run_until(until);
            }
            more && next < until
        })?;
        Ok(more)
    }

    /// Runs until some flow finishes, and returns it (with any others that finished at the
    /// same step), or an empty list when nothing is left to do.
    fn step_until_completion(&self, py: Python<'_>) -> PyResult<Vec<SimulatedFlow>> {
        let mut done = Vec::new();
        self.drive(py, |sim| {
            let next = sim.now() + SLICE;
            if let Some(index) = sim.run_until_completion(next) {
                done.push(index);
                done.extend(sim.take_completions());
                return false;
            }
            sim.pending() && next < sim.first().config().end
        })?;
        let sim = lock(&self.sim);
        Ok(done
            .into_iter()
            .filter_map(|i| sim.flow(i).map(SimulatedFlow::from))
            .collect())
    }

    /// Runs until nothing is left to do (or the scenario's end time).
    fn run(&self, py: Python<'_>) -> PyResult<()> {
        self.drive(py, |sim| {
            let next = sim.now() + SLICE;
            let more = sim.run_until(next);
            sim.take_completions();
            more && next < sim.first().config().end
        })
    }

    /// Whether every flow has finished.
    fn all_done(&self) -> PyResult<bool> {
        Ok(self.sim()?.all_done())
    }

    /// Every flow so far, as `flows.csv`'s table.
    fn flows(&self) -> PyResult<ArrowTable> {
        frames::flows(self.sim()?.flow_row_refs()).map_err(arrow_err)
    }

    /// The run's summary (as a row of `summary.json`), as a table.
    fn summary(&self) -> PyResult<ArrowTable> {
        let sim = self.sim()?;
        let scn = &self.scenario.get().loaded;
        let fresh = || {
            repsim::Simulation::new(
                scn.build_run(&self.run, self.seed)
                    .map_err(|e| SetupError::Invalid(format!("{e:#}")))?,
            )
        };
        let s = sim.summary(0.0, fresh).map_err(py_err)?;
        frames::summary(std::slice::from_ref(&s)).map_err(arrow_err)
    }

    /// Flows that could not be added (by callbacks), with the reason.
    fn rejected_flows(&self) -> PyResult<Vec<String>> {
        let mut all = self.sim()?.rejected_flows().to_vec();
        all.extend(lock(&self.shared.rejected).iter().cloned());
        Ok(all)
    }

    /// The callbacks, for Python's cycle collector (a callback usually refers to its
    /// simulation).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let s = &self.shared;
        for slot in [&s.on_complete, &s.on_lb_event, &s.on_drop] {
            // Held only for an instant outside the collector; skip rather than wait.
            if let Ok(callback) = slot.try_lock() {
                visit.call(&*callback)?;
            }
        }
        Ok(())
    }

    /// Drops the callbacks, breaking a cycle through them.
    fn __clear__(&self) {
        let s = &self.shared;
        for slot in [&s.on_complete, &s.on_lb_event, &s.on_drop] {
            *lock(slot) = None;
        }
    }

    fn __repr__(&self) -> PyResult<String> {
        let sim = self.sim()?;
        Ok(format!(
            "Simulation({} on {}, t = {} ps, {} flows, {} thread(s))",
            sim.first().label(),
            sim.first().topology(),
            sim.now(),
            sim.flows().len(),
            sim.partitions()
        ))
    }
}
