use clap::Parser;
#[derive(Parser)]
struct A { #[command(flatten)] t: theory::cli::TheoryArgs }
fn main() -> anyhow::Result<()> { theory::cli::run(A::parse().t) }
