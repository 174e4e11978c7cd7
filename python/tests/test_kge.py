"""skinner.kge_train: the library's KGE driver (skinner/kge.h), the one
`skinner kge train` runs, so the same keys give the same run from either."""

import csv
import subprocess

import pytest

import skinner
from conftest import BUILD

# a small run on countries_s3: a few seconds, one thread (bit-reproducible)
SMALL = dict(model="rotate", dim=8, epochs=4, batch_size=64, negatives=8, lr=0.01,
             eval_every=2, seed=3, threads=1)


def metrics_rows(run_dir):
    with open(run_dir / "metrics.csv") as f:
        return list(csv.DictReader(f))


def test_kge_train_matches_the_cli(countries, tmp_path):
    seen = []
    result = skinner.kge_train(dataset=countries, run_dir=tmp_path / "py",
                               callback=lambda info: seen.append(info), **SMALL)
    assert result["epochs"] == 4 and result["first_epoch"] == 1
    assert result["model"] == "rotate" and result["dim"] == 8
    assert result["model_path"] == str(tmp_path / "py" / "kge.safetensors")
    assert [info["epoch"] for info in seen] == [1, 2, 3, 4]
    # epochs 2 and 4 rank the valid split, the others do not
    assert [info["valid"] is not None for info in seen] == [False, True, False, True]
    assert 0.0 <= result["valid"]["mrr"] <= 1.0
    assert result["valid"] == seen[-1]["valid"]
    # the CLI with the same flags trains the same model: the same losses and valid figures
    cli = BUILD / "skinner"
    if not cli.exists():
        pytest.skip(f"{cli} is missing (build the skinner_cli target)")
    flags = []
    for key, value in SMALL.items():
        flags += ["--" + key.replace("_", "-"), str(value)]
    subprocess.run([str(cli), "kge", "train", "--dataset", countries, "--run-dir",
                    str(tmp_path / "cli"), "--quiet", *flags], check=True, capture_output=True)
    py_rows, cli_rows = metrics_rows(tmp_path / "py"), metrics_rows(tmp_path / "cli")
    assert len(py_rows) == 4
    for py_row, cli_row in zip(py_rows, cli_rows, strict=True):
        for column in ("epoch", "steps", "loss", "valid_mrr", "valid_hits1", "valid_hits10"):
            assert py_row[column] == cli_row[column], column
    assert float(py_rows[-1]["loss"]) == pytest.approx(result["loss"], rel=1e-5)
    assert float(py_rows[-1]["valid_mrr"]) == pytest.approx(result["valid"]["mrr"], rel=1e-5)


def test_kge_train_stops_and_resumes(countries, tmp_path):
    run = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        skinner.kge_train(dataset=countries, run_dir=run, callback=lambda info: info["epoch"] < 2,
                          **SMALL)
    assert len(metrics_rows(run)) == 2  # stopped after epoch 2, whose checkpoint was written
    resumed = skinner.kge_train(resume=run, epochs=4)
    assert resumed["first_epoch"] == 3 and resumed["epochs"] == 4
    assert [row["epoch"] for row in metrics_rows(run)] == ["1", "2", "3", "4"]
    # a key a resumed run cannot change is refused, naming it
    with pytest.raises(ValueError, match="kge.dim"):
        skinner.kge_train(resume=run, epochs=6, dim=16)


def test_kge_train_refuses_bad_keys(countries, tmp_path):
    with pytest.raises(ValueError, match="kge.dimensions"):
        skinner.kge_train(dataset=countries, run_dir=tmp_path / "a", dimensions=8)
    with pytest.raises(ValueError, match="kge.model"):
        skinner.kge_train(dataset=countries, run_dir=tmp_path / "b", model="distmult")
    with pytest.raises(ValueError, match="kge.dataset"):
        skinner.kge_train(run_dir=tmp_path / "c")
    # a folder that holds a model is kept unless force
    skinner.kge_train(dataset=countries, run_dir=tmp_path / "d", **{**SMALL, "epochs": 1})
    with pytest.raises(OSError, match="already holds a model"):
        skinner.kge_train(dataset=countries, run_dir=tmp_path / "d", **{**SMALL, "epochs": 1})
    again = skinner.kge_train(dataset=countries, run_dir=tmp_path / "d", force=True,
                              config={"kge.epochs": 1, "dim": 8})
    assert again["epochs"] == 1 and again["dim"] == 8
