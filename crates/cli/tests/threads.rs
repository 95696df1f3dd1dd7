//! One run on several threads writes the bytes of one thread: scenarios cut short with `--set`,
//! every time series on (`--collect all`), run with `--threads 1, 2, 3, 8` (8 is more threads
//! than most machines running the suite have cores) write every output file the same, and a
//! second process at 2 threads writes them again. `run.json` is compared without its
//! wall-clock fields, `peak_packets`, which measures the simulator (its partitions' arenas)
//! rather than the network, and `partitions`, the split it ran as. (PFC's pauses and its
//! deadlock watch on threads are checked in the library's `tests/pfc.rs`; a switch scheme from
//! outside the crate that has not declared its state its own, the one kind of run that cannot
//! be split, is refused there, in `tests/outside_schemes.rs`.)
mod common;

use std::path::PathBuf;

use common::{repsim, repsim_ok};

/// (scenario, `--set` overrides that keep it short, load balancers: empty for the scenario's).
const SPLIT: &[(&str, &[&str], &[&str])] = &[
    (
        "baselines-permutation-128",
        &["end=300us"],
        &[
            "reps",
            "ops",
            "ecmp",
            "plb",
            "flowlet",
            "mprdma",
            "mptcp",
            "bitmap",
            "reps-legacy",
            "mixed",
            // Switch schemes: per-port estimates and queue lengths at the deciding switch.
            "ops+adaptive",
            "ecmp+drill",
            "ecmp+wcmp",
        ],
    ),
    // The other congestion controls and load balancers.
    (
        "baselines-permutation-128",
        &["end=300us", "cc=nscc"],
        &["reps", "spray", "incremental"],
    ),
    ("baselines-permutation-128", &["end=300us", "cc=dctcp"], &["ops"]),
    ("baselines-permutation-128", &["end=300us", "cc=constant"], &["ecmp"]),
    ("baselines-permutation-128", &["end=300us", "cc=dctcp-rate"], &["reps"]),
    // Switch schemes whose switches learn from each other by packets: flowlets at the source
    // ToR, CONGA's piggybacked feedback, ConWeave's probes and reorder queues.
    ("conweave-leafspine-irn", &["end=300us"], &[]),
    (
        "baselines-incast-128",
        &["end=200us"],
        &["reps", "ecmp", "ops", "bitmap"],
    ),
    // A trace workload: flows arrive from a source as the run goes.
    ("websearch-128", &["workload.duration=60us", "end=2ms"], &[]),
    // Per-pair connection reuse: a finished flow's controller and balancer carry on at its
    // source.
    (
        "websearch-128",
        &[
            "workload.duration=60us",
            "end=2ms",
            "transport.reuse_connections=true",
        ],
        &[],
    ),
    ("evs-sweep-128", &["end=200us"], &[]),
    // Receiver-driven credit (EQDS): each receiving host's pull pacer runs where the host
    // does; PULLs are packets, and the pacer drops a connection when its receiver hears the
    // sender finished.
    ("evs-sweep-128", &["end=200us", "cc=eqds"], &["reps"]),
    // The UEC reference's queues (ECN decided as a packet leaves, so a packet bound for
    // another partition is sent there only then; a header budget; a port's wake-up before
    // same-time arrivals) and its receiver-side oversubscription control (each host's own
    // update times).
    (
        "evs-sweep-128",
        &[
            "end=200us",
            "queue.ecn_at_departure=true",
            "queue.header_limit=\"10pkt\"",
            "queue.departures_first=true",
            "cc={ algo = \"eqds\", oversubscribed = { min_rate = 0.25, interval = \"5us\" } }",
        ],
        &["reps", "ops"],
    ),
    ("reps-micro-asymmetric", &[], &[]),
    ("incast-with-background", &["end=200us"], &[]),
    // Elephants counted per link (each partition counts the links into its nodes).
    (
        "ring-2gb-elephants",
        &[
            "end=200us",
            "metrics.elephants={ every = \"20us\", min_size = \"1MB\" }",
        ],
        &[],
    ),
    ("permutation-128", &["end=200us"], &[]),
    // Faults: a failed cable's timeline and reconvergence run in every partition; flows on it
    // are given up (three at one instant, listed in one thread's order).
    ("failures-one-cable-32", &[], &[]),
    // Timed outages with REPS freezing, and MPRDMA's fast increase switched on at 650 us.
    ("reps-micro-failures", &[], &[]),
    // Links going down one after another while flows run.
    ("failures-incremental", &["end=900us"], &[]),
    // Every other fault kind: a switch down and back, a flapping link, a slower link, random
    // loss on one link and trimmed losses on random cables failing one after another.
    (
        "failures-incremental",
        &[
            "end=300us",
            "fault=[{ kind = \"switch_down\", switch = \"spine1\", start = \"50us\", duration = \"100us\" }, \
             { kind = \"flap\", link = \"tor1->spine2\", period = \"60us\", down_for = \"20us\", start = \"20us\" }, \
             { kind = \"rate\", link = \"tor2->spine3\", speed = \"50Gbps\", start = \"30us\" }, \
             { kind = \"drop\", link = \"tor3->spine0\", probability = 0.01, loss = \"trim\", start = \"10us\" }, \
             { kind = \"random_cables\", percent = 5, loss = \"trim\", start = \"40us\", stagger = \"10us\" }]",
        ],
        &[],
    ),
    // Collectives: each step's flows wait for the previous step's, and hear of it one
    // crossing of the fabric later, from another partition or their own.
    ("allreduce-ring-128", &["end=300us"], &[]),
    // The REPS artifact's AllToAll matrix: each trigger is one host's, released at once at
    // that host; its ring AllReduce with instant triggers, which act at once on every host
    // of the ring (the split keeps them in one partition), and with triggers that notify
    // across the fabric.
    (
        "permutation-128",
        &[
            "workload.file=../data/htsim/connection_matrices/alltoall8_n128.cm",
            "end=400us",
        ],
        &["reps"],
    ),
    (
        "permutation-128",
        &[
            "workload.file=../data/htsim/connection_matrices/allreduce_128.cm",
            "end=300us",
        ],
        &["reps"],
    ),
    (
        "permutation-128",
        &[
            "workload.file=../data/htsim/connection_matrices/allreduce_128.cm",
            "workload.triggers=\"notice\"",
            "end=300us",
        ],
        &["bitmap"],
    ),
    ("allreduce-butterfly-128", &["end=300us"], &["reps"]),
    ("alltoall-128", &["end=300us"], &["ecmp"]),
    // Lossless (PFC) on a Dragonfly, with the reorder metrics; LetFlow at every switch over
    // the LAPS candidates, CONGA with the LAPS code's global table (every router in one
    // partition, the hosts in the others), ConWeave, and LAPS's source routes and path probes.
    (
        "laps-dragonfly-hdp",
        &["end=300us"],
        &["ecmp", "plb", "letflow", "conga", "conweave", "laps"],
    ),
    ("laps-rail-dm", &["end=300us"], &["laps"]),
    // Reunion: sketches, marks and interval timers at every switch, notifications (their link
    // lists as payload) from destination ToRs to source ToRs, acted on as they arrive or at
    // the source's interval end.
    (
        "reunion-irn",
        &[
            "workload.size=4MB",
            "end=300us",
            "lb=[{ scheme = \"ecmp\", label = \"reunion\", switch = { scheme = \"reunion\", interval = \"20us\" } }, \
             { scheme = \"ecmp\", label = \"reunion-end\", switch = { scheme = \"reunion\", interval = \"20us\", act_on = \"interval-end\" } }]",
        ],
        &[],
    ),
    // LAPS paced as the paper's text describes, with random loss at every port.
    (
        "laps-llm-incast",
        &["end=300us", "loss.probability=0.01"],
        &["laps-paper-text"],
    ),
];

fn out_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("threads")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `repsim run` arguments for `scenario` on `threads` threads into `out`.
fn args<'a>(
    scenario: &'a str,
    sets: &[&'a str],
    lbs: &[&'a str],
    threads: &'a str,
    out: &'a str,
) -> Vec<&'a str> {
    let mut a = vec![
        "run",
        scenario,
        "--out",
        out,
        "--collect",
        "all",
        "--quiet",
        "--threads",
        threads,
    ];
    for s in sets {
        a.extend(["--set", s]);
    }
    for lb in lbs {
        a.extend(["--lb", lb]);
    }
    a
}

#[test]
fn every_thread_count_writes_the_files_of_one_thread() {
    for (scenario, sets, lbs) in SPLIT {
        let file = format!("scenarios/{scenario}.toml");
        let run = |threads: &str, tag: &str| {
            let out = out_dir(&format!("{scenario}-{threads}{tag}"));
            let o = out.to_str().unwrap().to_string();
            repsim_ok(&args(&file, sets, lbs, threads, &o));
            out
        };
        let one = run("1", "");
        for threads in ["2", "3", "8"] {
            let many = run(threads, "");
            let what = format!("{scenario} on {threads} threads");
            let n =
                common::assert_same_outputs(&what, &one, &many, &["peak_packets", "partitions"]);
            assert!(n >= 8, "{what}: only {n} files written");
        }
        let again = run("2", "-again");
        let first = out_dir(&format!("{scenario}-2-check"));
        let f = first.to_str().unwrap().to_string();
        repsim_ok(&args(&file, sets, lbs, "2", &f));
        common::assert_same_outputs(
            &format!("{scenario} on 2 threads in two processes"),
            &again,
            &first,
            &[],
        );
    }
}

#[test]
fn bench_on_threads_runs_the_same_events() {
    let events = |threads: &str| -> String {
        let o = repsim_ok(&[
            "bench",
            "scenarios/permutation-128.toml",
            "--set",
            "end=100us",
            "--threads",
            threads,
        ]);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let at = text
            .find(" events")
            .expect("the bench line names its events");
        text[..at].rsplit(' ').next().unwrap().to_string()
    };
    assert_eq!(events("1"), events("2"));
}

#[test]
fn a_sweep_on_threads_writes_the_points_of_one_thread() {
    let dir = out_dir("sweep");
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = common::repo().join("scenarios/conweave-leafspine-irn.toml");
    let file = dir.join("sweep.toml");
    std::fs::write(
        &file,
        format!(
            "scenario = {:?}\nlb = [\"letflow\", \"conweave\"]\n\n[set]\nend = \"100us\"\n\n\
             [[axis]]\nkey = \"seed\"\nvalues = [1, 2]\n",
            scenario.display().to_string()
        ),
    )
    .unwrap();
    let sweep = |threads: &str| {
        let out = dir.join(format!("out-{threads}"));
        let (f, o) = (file.to_str().unwrap(), out.to_str().unwrap());
        repsim_ok(&[
            "sweep",
            f,
            "--out",
            o,
            "-j",
            "2",
            "--threads",
            threads,
            "--quiet",
        ]);
        out
    };
    let (one, two) = (sweep("1"), sweep("2"));
    for point in ["points/0000", "points/0001"] {
        common::assert_same_outputs(
            &format!("sweep {point} on 2 threads"),
            &one.join(point),
            &two.join(point),
            &["peak_packets", "partitions"],
        );
    }
    // sweep.csv: the same rows but for each run's own wall-clock time.
    let rows = |out: &std::path::Path| -> Vec<String> {
        let text = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        lines
            .map(|l| {
                l.split(',')
                    .zip(&header)
                    .filter(|(_, h)| !h.contains("wall"))
                    .map(|(v, _)| v)
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect()
    };
    assert_eq!(rows(&one), rows(&two));
    assert_eq!(rows(&one).len(), 4, "2 points x 2 load balancers");
}

#[test]
fn limits_and_stall_detection_stop_a_run_on_threads_where_one_thread_stops() {
    // ECMP flows hashed onto a dead cable make no progress: stall detection ends the run at
    // the same step on any thread count; an event limit stops it at the same microsecond.
    let cases: &[(&str, &[&str])] = &[
        (
            "failures-one-cable-32",
            &["--lb", "ecmp", "--set", "end=20ms", "--stall-after", "2ms"],
        ),
        (
            "permutation-128",
            &["--lb", "reps", "--max-events", "100000"],
        ),
    ];
    for (scenario, extra) in cases {
        let file = format!("scenarios/{scenario}.toml");
        let run = |threads: &str| {
            let out = out_dir(&format!("limited-{scenario}-{threads}"));
            let o = out.to_str().unwrap().to_string();
            let mut a = vec![
                "run",
                file.as_str(),
                "--out",
                o.as_str(),
                "--collect",
                "all",
                "--quiet",
                "--threads",
                threads,
            ];
            a.extend_from_slice(extra);
            let done = repsim(&a);
            (out, done.status.success())
        };
        let (one, one_ok) = run("1");
        let summary = std::fs::read_to_string(one.join("summary.json")).expect("summary.json");
        assert!(
            summary.contains("run stalled") || summary.contains("--max-events 100000 reached"),
            "{scenario}: the limit did not act: {summary}"
        );
        for threads in ["2", "3"] {
            let (many, ok) = run(threads);
            assert_eq!(ok, one_ok, "{scenario} on {threads} threads");
            let what = format!("{scenario} stopped on {threads} threads");
            common::assert_same_outputs(&what, &one, &many, &["peak_packets", "partitions"]);
        }
    }
}

#[test]
fn a_scenarios_threads_is_the_default_and_the_flag_overrides_it() {
    let run = |scenario: &str, extra: &[&str], vars: &[(&str, &str)]| {
        let out = out_dir(&format!(
            "default-threads-{}-{}",
            extra.join("-").replace('/', "_"),
            vars.len()
        ));
        let o = out.to_str().unwrap().to_string();
        let mut a = vec![
            "run",
            scenario,
            "--out",
            &o,
            "--collect",
            "none",
            "--set",
            "end=20us",
        ];
        a.extend_from_slice(extra);
        let result = common::repsim_with(&a, vars);
        assert!(
            result.status.success(),
            "{a:?}: {}",
            String::from_utf8_lossy(&result.stderr)
        );
        let text = std::fs::read_to_string(out.join("run.json")).expect("run.json");
        let v: serde_json::Value = serde_json::from_str(&text).expect("run.json parses");
        let partitions = v["runs"][0]["partitions"].as_u64().expect("partitions");
        (
            partitions,
            String::from_utf8_lossy(&result.stderr).into_owned(),
        )
    };
    let permutation = "scenarios/permutation-128.toml";
    let partitions = |extra: &[&str], vars: &[(&str, &str)]| {
        let mut a = vec!["--lb", "reps", "--quiet"];
        a.extend_from_slice(extra);
        run(permutation, &a, vars).0
    };
    assert_eq!(
        partitions(&[], &[]),
        1,
        "REPSIM_THREADS=1, as the tests set it"
    );
    // Unset: the machine's cores; -j runs the load balancers side by side instead.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let by_default = partitions(&[], &[("REPSIM_THREADS", "")]);
    assert_eq!(
        by_default > 1,
        cores > 1,
        "{cores} cores: {by_default} partitions"
    );
    assert!(by_default as usize <= cores);
    assert_eq!(partitions(&["-j", "2"], &[("REPSIM_THREADS", "")]), 1);
    assert_eq!(
        partitions(&["--set", "threads=2"], &[]),
        2,
        "the scenario's threads"
    );
    assert_eq!(
        partitions(&["--set", "threads=2", "--threads", "1"], &[]),
        1,
        "--threads overrides the scenario"
    );
    let from_env = [("REPSIM_THREADS", "2")];
    assert_eq!(partitions(&[], &from_env), 2, "REPSIM_THREADS");
    assert_eq!(
        partitions(&["--set", "threads=3"], &from_env),
        3,
        "the scenario's threads before REPSIM_THREADS"
    );
    let bad = common::repsim_with(&["run", permutation], &[("REPSIM_THREADS", "0")]);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && err.contains("REPSIM_THREADS"),
        "{err}"
    );
    let refused = repsim(&[
        "check",
        "scenarios/permutation-128.toml",
        "--set",
        "threads=0",
    ]);
    assert!(!refused.status.success(), "threads = 0 is refused");
}
