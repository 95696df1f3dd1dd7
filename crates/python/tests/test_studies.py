"""`repsim.sweep` and `repsim.figure`: the command's points and rows, from Python."""

import subprocess

import polars as pl

import repsim

MICRO = "scenarios/reps-micro-asymmetric.toml"


def test_sweep_has_the_commands_points_and_rows(tmp_path, cli):
    sweep = dict(
        base=MICRO,
        axes={"transport.evs_size": [8, 64], "seed": {"values": [1, 2], "labels": ["s1", "s2"]}},
        lb=["reps", "ops"],
        set={"queue.size": "64pkt"},
        out=tmp_path / "py",
        jobs=2,
    )
    frame = repsim.sweep(**sweep)
    assert frame.height == 2 * 2 * 2
    assert frame.columns[:4] == ["point", "transport.evs_size", "lb", "seed"]
    assert frame["seed"].to_list() == [1, 1, 2, 2, 1, 1, 2, 2]
    assert frame["point"].to_list() == [0, 0, 1, 1, 2, 2, 3, 3]
    # The sweep file it wrote gives the same sweep.csv through the command.
    subprocess.run(
        [cli, "sweep", tmp_path / "py" / "sweep.toml", "--out", tmp_path / "cli", "--quiet", "-j", "2"],
        check=True,
    )
    assert (tmp_path / "py" / "sweep.csv").read_bytes() == (tmp_path / "cli" / "sweep.csv").read_bytes()
    on_disk = pl.read_csv(tmp_path / "cli" / "sweep.csv")
    assert on_disk.columns == frame.columns
    for column in ("point", "lb", "flows_completed", "fct_max_us", "events"):
        assert on_disk[column].to_list() == frame[column].to_list(), column
    # Finished points are kept: a second call runs nothing and returns the same rows.
    markers = sorted((tmp_path / "py" / "points").glob("*/run.complete"))
    assert len(markers) == 4
    written = [m.stat().st_mtime_ns for m in markers]
    again = repsim.sweep(**sweep)
    assert again.equals(frame)
    assert [m.stat().st_mtime_ns for m in markers] == written


def test_a_sweep_on_threads_gives_the_rows_of_one_thread(tmp_path):
    axes = {"seed": [1, 2]}
    one = repsim.sweep(MICRO, axes, lb="reps", out=tmp_path / "one", jobs=2)
    two = repsim.sweep(MICRO, axes, lb="reps", out=tmp_path / "two", jobs=2, threads=2)
    same = [c for c in one.columns if "wall" not in c]
    assert one.height == 2
    assert one.select(same).equals(two.select(same))


def test_sweep_of_a_scenario_given_as_text(tmp_path):
    text = repsim.load(MICRO, set={"lb": ["reps"]}).to_toml()
    frame = repsim.sweep(text, {"transport.evs_size": [16]}, out=tmp_path)
    assert frame["lb"].to_list() == ["reps"]
    assert len(list(tmp_path.glob("base-*.toml"))) == 1


def test_sweeps_of_different_texts_into_one_directory_do_not_share_points(tmp_path):
    base = repsim.load(MICRO, set={"lb": ["reps"]})
    fast = repsim.sweep(repsim.load(base.to_toml(), set={"queue.size": "100pkt"}).to_toml(),
                        {"seed": [1]}, out=tmp_path)
    slow = repsim.sweep(repsim.load(base.to_toml(), set={"queue.size": "8pkt"}).to_toml(),
                        {"seed": [1]}, out=tmp_path)
    assert fast["fct_max_us"].to_list() != slow["fct_max_us"].to_list()


def test_sweep_overrides_are_read_as_the_command_reads_set(tmp_path):
    # A value that is not TOML is a string (`64pkt`); a key set twice keeps its last value.
    scn = repsim.load(MICRO, set=["cc=nscc", "queue.size=64pkt"])
    frame = repsim.sweep(scn, {"seed": [1]}, lb="reps", set=["cc=mprdma", "queue.ecn_max=50pkt"], out=tmp_path)
    text = (tmp_path / "sweep.toml").read_text()
    assert '"queue.size" = "64pkt"' in text and '"cc" = "mprdma"' in text and "nscc" not in text
    direct = repsim.run(MICRO, lb="reps", seed=1, set=["cc=mprdma", "queue.size=64pkt", "queue.ecn_max=50pkt"])
    assert frame["fct_max_us"].to_list() == direct.summary["fct_max_us"].to_list()


def test_figure_returns_its_data_and_plots(tmp_path):
    fig = repsim.figure("reps-fig4", out=tmp_path)
    data, plots = fig
    assert set(data["lb"].to_list()) == {"ops", "reps"}
    assert any(p.suffix == ".svg" for p in plots) and all(p.exists() for p in plots)
    assert fig.page.exists()
    assert {"what", "paper", "ours"} <= set(fig.claims.columns)
    # At small scale every claim says its ratio to the paper's number means little.
    assert fig.claims["note"].to_list() == ["small scale: not comparable"] * fig.claims.height
    assert "reps-fig4" in repsim.figures()["id"].to_list()
