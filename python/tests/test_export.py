"""Policy.export_onnx and Policy.export_c (issue 36): a trained CartPole policy written as an
ONNX model that onnx's checker accepts, with the inputs and outputs docs/export.md lists, whose
greedy actions under ONNX Runtime (PyPI's onnxruntime) are Policy.act(deterministic=True)'s on
500 observations, and as a C header whose greedy actions (compiled with cc -Wall -Wextra
-Werror -std=c99, run by tests/export/driver.c) are too. test_export (C) runs the ONNX models
through ONNX Runtime for every policy kind, against skinner's outputs."""

import shutil
import subprocess

import numpy as np
import pytest

import skinner
from conftest import REPO, under_ci


def requirement_missing(message):
    if under_ci():
        pytest.fail(f"{message}; CI=true: a missing requirement fails the run", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def policy(tmp_path_factory):
    run = tmp_path_factory.mktemp("cartpole")
    skinner.train("CartPole-v1", run_dir=run, seed=1, threads=1, total_steps=20000, force=True)
    return skinner.load(run)


def greedy_rows(policy, count=500, seed=5):
    """count observations of CartPole-v1 under the policy's greedy actions, and those actions."""
    rows, want = [], []
    with skinner.make("CartPole-v1", num_envs=1, seed=seed) as env:
        obs, _ = env.reset(seed=seed)
        for _ in range(count):
            rows.append(obs[0].copy())
            action = policy.act(obs[0], deterministic=True)
            want.append(action)
            obs, _, _, _, _ = env.step(np.array([action], dtype=np.int32))
    return np.array(rows, dtype=np.float32), np.array(want)


def test_export_onnx(policy, tmp_path):
    path = tmp_path / "policy.onnx"
    policy.export_onnx(path)
    try:
        import onnx
        import onnxruntime
    except ImportError as error:
        requirement_missing(f"could not import onnx or onnxruntime ({error}): the test venv has "
                            "them (scripts/setup.sh --test)")
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == ["obs"]
    assert sorted(o.name for o in model.graph.output) == ["action", "logits_0", "value"]
    assert model.opset_import[0].version == 17
    rows, want = greedy_rows(policy)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (actions,) = session.run(["action"], {"obs": rows})
    assert actions.shape == (len(rows), 1) and actions.dtype == np.int64
    np.testing.assert_array_equal(actions[:, 0], want)


def test_export_c(policy, tmp_path):
    if shutil.which("cc") is None:
        requirement_missing("no C compiler (cc) on PATH")
    policy.export_c(tmp_path / "policy.h")
    rows, want = greedy_rows(policy)
    rows.tofile(tmp_path / "obs.bin")
    np.zeros(len(rows), np.uint8).tofile(tmp_path / "start.bin")
    subprocess.run(["cc", "-Wall", "-Wextra", "-Werror", "-std=c99", "-O2", "-I", str(tmp_path),
                    str(REPO / "tests" / "export" / "driver.c"), "-o", str(tmp_path / "driver"),
                    "-lm"], check=True)
    subprocess.run([str(tmp_path / "driver"), str(tmp_path)], check=True)
    out = np.fromfile(tmp_path / "out.bin", dtype=np.float32).reshape(len(rows), -1)
    np.testing.assert_array_equal(out[:, 0].astype(int), want)


def test_export_refuses_a_bad_path(policy, tmp_path):
    with pytest.raises(Exception, match="cannot write"):
        policy.export_onnx(tmp_path / "no" / "such" / "folder" / "policy.onnx")
