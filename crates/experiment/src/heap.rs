//! The process heap on transparent huge pages (glibc), and how this process's heap was set up.
/// glibc's heap goes on transparent huge pages only if the process starts with this tunable.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const HUGE_HEAP_TUNABLE: &str = "glibc.malloc.hugetlb";

/// One malloc arena for every thread: a run split over threads then allocates its per-flow
/// state from the same huge-page heap as one thread does (with an arena per thread the 8,192-host
/// scale step on two threads took about 10 % longer). The event loop itself allocates nothing,
/// so the threads do not contend for the arena while they run.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const ONE_ARENA_TUNABLE: &str = "glibc.malloc.arena_max=1";

/// Restarts the process once with glibc's heap on transparent huge pages (and one arena, see
/// [`ONE_ARENA_TUNABLE`]). The per-flow
/// transport state and the ports' lane rings come from `malloc` in small pieces on ordinary
/// pages (84 of 179 MB resident were on huge pages a few seconds into the 8,192-host scale run,
/// 164 of 182 MB with the tunable, which took 8-18 % less CPU time; docs/performance.md). glibc
/// reads the tunable only at start-up, hence the restart; results do not change.
/// `REPSIM_HEAP_HUGE_PAGES=0` (or a `GLIBC_TUNABLES` that already names the tunable) keeps the
/// process as it is, and so does any failure to restart.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn heap_on_huge_pages() {
    use std::os::unix::process::CommandExt;
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    if tunables.contains(HUGE_HEAP_TUNABLE)
        || std::env::var_os("REPSIM_HEAP_HUGE_PAGES").is_some_and(|v| v == "0")
    {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
    let ours = if tunables.contains("glibc.malloc.arena_max") {
        format!("{HUGE_HEAP_TUNABLE}=1")
    } else {
        format!("{HUGE_HEAP_TUNABLE}=1:{ONE_ARENA_TUNABLE}")
    };
    let tunables = if tunables.is_empty() {
        ours
    } else {
        format!("{tunables}:{ours}")
    };
    // `exec` returns only if it failed: go on as we are.
    let _failed = std::process::Command::new(exe)
        .arg0(arg0)
        .args(args)
        .env("GLIBC_TUNABLES", tunables)
        .exec();
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn heap_on_huge_pages() {}

/// Whether this process's heap asked glibc for huge pages, and why (`repsim check --memory`
/// prints it): the tunable's value as the process started.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn heap_huge_pages_state() -> String {
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    let value = tunables
        .split(':')
        .find_map(|t| t.strip_prefix(HUGE_HEAP_TUNABLE)?.strip_prefix('='));
    match value {
        Some(v) if v != "0" => format!("on (GLIBC_TUNABLES {HUGE_HEAP_TUNABLE}={v})"),
        Some(_) => format!("off (GLIBC_TUNABLES {HUGE_HEAP_TUNABLE}=0)"),
        None if std::env::var_os("REPSIM_HEAP_HUGE_PAGES").is_some_and(|v| v == "0") => {
            "off (REPSIM_HEAP_HUGE_PAGES=0)".into()
        }
        None => "off (the restart with the tunable failed)".into(),
    }
}

/// Without glibc on Linux the heap stays as the allocator gives it.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn heap_huge_pages_state() -> String {
    "off (needs Linux with glibc)".into()
}
