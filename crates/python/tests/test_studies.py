"""`repsim.sweep` and `repsim.figure`: the command's points and rows, from Python."""

import subprocess

import polars as pl

import repsim

MICRO = "scenarios/reps-micro-asymmetric.toml"


def test_sweep_has_the_commands_points_and_rows(tmp_path, cli):
    frame = repsim.sweep(
        MICRO,
        {"transport.evs_size": [8, 64], "seed": {"values": [1, 2], "labels": ["s1", "s2"]}},
        lb=["reps", "ops"],
        set={"queue.size": "64pkt"},
        out=tmp_path / "py",
        jobs=2,
    )
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
    again = repsim.sweep(
        MICRO,
        {"transport.evs_size": [8, 64], "seed": {"values": [1, 2], "labels": ["s1", "s2"]}},
        lb=["reps", "ops"],
        set={"queue.size": "64pkt"},
        out=tmp_path / "py",
    )
    assert again.equals(frame)


def test_sweep_of_a_scenario_given_as_text(tmp_path):
    text = repsim.load(MICRO, set={"lb": ["reps"]}).to_toml()
    frame = repsim.sweep(text, {"transport.evs_size": [16]}, out=tmp_path)
    assert frame["lb"].to_list() == ["reps"]
    assert (tmp_path / "base.toml").exists()


def test_figure_returns_its_data_and_plots(tmp_path):
    fig = repsim.figure("reps-fig4", out=tmp_path)
    data, plots = fig
    assert set(data["lb"].to_list()) == {"ops", "reps"}
    assert any(p.suffix == ".svg" for p in plots) and all(p.exists() for p in plots)
    assert fig.page.exists()
    assert {"what", "paper", "ours"} <= set(fig.claims.columns)
    assert "reps-fig4" in repsim.figures()["id"].to_list()
