//! The `repsim` command-line tool: run scenarios, benchmark the engine, explore the theory.
use clap::Parser;
use repsim_cli::Cli;

/// Lets a closed stdout (`repsim check x.toml | head`) end the process quietly, as it does for
/// other command-line tools, instead of panicking in `println!`.
fn exit_quietly_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists; SIG_DFL is a valid
    // disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() {
    repsim_experiment::heap::heap_on_huge_pages();
    exit_quietly_on_closed_pipe();
    let cli = Cli::parse();
    if let Err(e) = cli.command.execute() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
