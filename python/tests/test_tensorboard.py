"""telemetry.tensorboard: a run's TensorBoard event file, read back by TensorBoard's own
reader (EventAccumulator, keeping every event), holds every metrics.csv column (and a SAC or
DQN run's learner.csv columns) as a scalar by env steps, value for value (the CSV's number rounded to float32, as simple_value
stores it), and config.ini as a text summary; a resumed run's curves go on as one, even
after a crash that left rows past its checkpoint."""

import csv
import glob
import os
import re
import shutil
import socket

import numpy as np
import pytest

import skinner
from conftest import under_ci

try:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
except ImportError:  # the test venv pins tensorboard (python/requirements-test.txt)
    EventAccumulator = None

BATCH = 16 * 128  # configs/cartpole.ini: env.num_envs x ppo.horizon
ON = {"telemetry.tensorboard": True}


@pytest.fixture(autouse=True)
def tensorboard_installed():
    if EventAccumulator is None:
        message = "tensorboard is missing (scripts/setup.sh --test installs it in .venv)"
        if under_ci():
            pytest.fail(f"{message}; CI=true: a missing requirement fails the run", pytrace=False)
        pytest.skip(message)


def event_file(run):
    """The run's one event file, named as TensorBoard names them."""
    files = glob.glob(os.path.join(run, "events.out.tfevents.*"))
    assert len(files) == 1, files
    name = os.path.basename(files[0])
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\." + re.escape(socket.gethostname()), name)
    return files[0]


def read_back(run):
    """TensorBoard's view of the run, after checking it against metrics.csv: the
    scalars' tags, steps and values, then the config texts as (step, text)."""
    event_file(run)
    acc = EventAccumulator(str(run), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    with open(os.path.join(run, "metrics.csv")) as f:
        rows = list(csv.DictReader(f))
    if os.path.exists(os.path.join(run, "learner.csv")):  # SAC's and DQN's own figures
        with open(os.path.join(run, "learner.csv")) as f:
            figures = list(csv.DictReader(f))
        assert [(r["update"], r["steps"]) for r in figures] == [(r["update"], r["steps"]) for r in rows]
        rows = [{**row, **own} for row, own in zip(rows, figures)]
    columns = list(rows[0])
    assert acc.Tags()["scalars"] == columns
    steps = [int(row["steps"]) for row in rows]
    assert steps == sorted(set(steps))
    for tag in columns:
        events = acc.Scalars(tag)
        assert [e.step for e in events] == steps, tag
        want = np.array([float(row[tag]) for row in rows], dtype=np.float32)
        got = np.array([e.value for e in events], dtype=np.float32)
        bad = np.flatnonzero((want != got) & ~(np.isnan(want) & np.isnan(got)))
        assert bad.size == 0, (f"{tag}: {bad.size} of {len(rows)} values differ, first at steps "
                               f"{[steps[k] for k in bad[:3]]}: metrics.csv {want[bad[:3]]}, "
                               f"TensorBoard {got[bad[:3]]}")
    assert acc.Tags()["tensors"] == ["config"]
    assert acc.SummaryMetadata("config").plugin_data.plugin_name == "text"
    texts = []
    for e in acc.Tensors("config"):
        assert e.tensor_proto.dtype == 7 and not e.tensor_proto.tensor_shape.dim  # scalar string
        texts.append((e.step, e.tensor_proto.string_val[0].decode()))
    return rows, texts


def config_ini(run):
    with open(os.path.join(run, "config.ini")) as f:
        return f.read()


def test_off_by_default(tmp_path):
    skinner.train("CartPole-v1", seed=1, total_steps=BATCH, run_dir=tmp_path / "run")
    assert not glob.glob(str(tmp_path / "run" / "events.out.tfevents.*"))
    assert "[telemetry]\ntensorboard = false\n" in config_ini(tmp_path / "run")


def test_the_event_file_holds_metrics_csv_and_the_config_and_resumes_as_one_curve(tmp_path):
    run = tmp_path / "run"
    skinner.train("CartPole-v1", config=ON, seed=1, total_steps=5 * BATCH, run_dir=run)
    first_config = config_ini(run)
    rows, texts = read_back(run)
    assert len(rows) == 5
    assert texts == [(0, first_config)]

    skinner.train("CartPole-v1", resume=run, total_steps=9 * BATCH)
    rows, texts = read_back(run)
    assert [int(row["update"]) for row in rows] == list(range(1, 10))
    # the resumed run's config (its own total_steps) from where it took over
    assert texts == [(0, first_config), (5 * BATCH, config_ini(run))]
    assert config_ini(run) != first_config


def test_an_off_policy_run_adds_its_learner_figures(tmp_path):
    run = tmp_path / "run"
    config = {**ON, "train.algo": "sac", "sac.hidden": 32, "sac.learning_starts": 200}
    skinner.train("Pendulum-v1", config=config, seed=1, total_steps=800, run_dir=run)
    rows, _ = read_back(run)
    assert {"alpha", "qf1_value", "qf2_value", "gradient_steps", "replay_rows"} <= set(rows[0])
    assert float(rows[-1]["alpha"]) < 1.0 and float(rows[-1]["gradient_steps"]) == 600


def test_a_crash_after_the_checkpoint_resumes_without_duplicates(tmp_path):
    """Rows written after the last checkpoint are cut on resume, as metrics.csv's are,
    with train.log_every thinning both alike."""
    run, saved = tmp_path / "run", tmp_path / "at_update_3.safetensors"

    def keep_checkpoint(stats):
        if stats["update"] == 3:  # the callback runs after that update's checkpoint
            shutil.copy(run / "policy.safetensors", saved)
        return True

    config = {**ON, "train.checkpoint_every": 3, "train.log_every": 2}
    skinner.train("CartPole-v1", config=config, seed=2, total_steps=7 * BATCH, run_dir=run,
                  callback=keep_checkpoint)
    rows, _ = read_back(run)
    assert [int(row["update"]) for row in rows] == [2, 4, 6, 7]
    shutil.copy(saved, run / "policy.safetensors")  # a crash after update 7: back to 3

    skinner.train("CartPole-v1", resume=run, total_steps=10 * BATCH)
    rows, texts = read_back(run)
    assert [int(row["update"]) for row in rows] == [2, 4, 6, 8, 10]
    assert [step for step, _ in texts] == [0, 3 * BATCH]
    assert texts[-1][1] == config_ini(run)
