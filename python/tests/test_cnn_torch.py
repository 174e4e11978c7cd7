"""The CNN encoder (policy.encoder = cnn) from Python: a checkpoint's state_dict loads into
the same network built from torch.nn.Conv2d and torch.nn.Linear, and that network picks the
policy's greedy actions. Checkpoints keep each tensor as 2-d (out, in*kh*kw): the memory of
torch's Conv2d.weight (out, in, kh, kw), so .view(conv.weight.shape) is the whole step.
skinner's observations are (H, W, C) channels last: torch reads them permuted to NCHW, and
the trunk reads the last map flattened channels last (permute back, then flatten). With
policy.cnn_dense = N a shared torch.nn.Linear + ReLU (encoder.dense) follows the flatten."""

import numpy as np
import pytest

import skinner
from conftest import require_torch

CHANNELS, KERNELS, STRIDES, PADDING = (8, 16), (3, 3), (1, 2), (1, 0)


@pytest.fixture(scope="module", params=[0, 32], ids=["no-dense", "dense-32"])
def cnn_policy(tmp_path_factory, request):
    run = tmp_path_factory.mktemp("breakout-cnn")
    config = {"policy.encoder": "cnn", "policy.cnn_input": "10,10,4",
              "policy.cnn_channels": ",".join(map(str, CHANNELS)),
              "policy.cnn_kernels": ",".join(map(str, KERNELS)),
              "policy.cnn_strides": ",".join(map(str, STRIDES)),
              "policy.cnn_padding": ",".join(map(str, PADDING)),
              "policy.cnn_dense": str(request.param)}
    skinner.train("MinAtar/Breakout-v1", config=config, run_dir=run, seed=1, threads=1,
                  total_steps=8192, force=True)
    policy = skinner.load(run)
    policy.dense_width = request.param
    return policy


def torch_network(torch, state):
    convs = []
    for layer, (out, kernel, stride, padding) in enumerate(zip(CHANNELS, KERNELS, STRIDES,
                                                               PADDING)):
        conv = torch.nn.Conv2d(4 if layer == 0 else CHANNELS[layer - 1], out, kernel,
                               stride=stride, padding=padding)
        conv.load_state_dict({
            "weight": torch.from_numpy(state[f"encoder.conv{layer}.weight"]).view(conv.weight.shape),
            "bias": torch.from_numpy(state[f"encoder.conv{layer}.bias"])})
        convs.append(conv)
    dense = None
    if "encoder.dense.weight" in state:
        weight = torch.from_numpy(state["encoder.dense.weight"])
        dense = torch.nn.Linear(weight.shape[1], weight.shape[0])
        dense.load_state_dict({"weight": weight,
                               "bias": torch.from_numpy(state["encoder.dense.bias"])})
    actor = []
    layer = 0
    while f"actor.{layer}.weight" in state:
        weight = torch.from_numpy(state[f"actor.{layer}.weight"])
        linear = torch.nn.Linear(weight.shape[1], weight.shape[0])
        linear.load_state_dict({"weight": weight, "bias": torch.from_numpy(state[f"actor.{layer}.bias"])})
        actor.append(linear)
        layer += 1

    def logits(obs):  # obs (B, 10, 10, 4)
        x = torch.from_numpy(obs).permute(0, 3, 1, 2)
        for conv in convs:
            x = torch.relu(conv(x))
        x = x.permute(0, 2, 3, 1).flatten(1)
        if dense is not None:
            x = torch.relu(dense(x))
        for linear in actor[:-1]:
            x = torch.tanh(linear(x))  # policy.activation's default
        return actor[-1](x)

    return logits


def test_state_dict_loads_into_torch_conv2d(cnn_policy):
    torch = require_torch()
    state = cnn_policy.state_dict()
    assert list(state)[:4] == ["encoder.conv0.weight", "encoder.conv0.bias",
                               "encoder.conv1.weight", "encoder.conv1.bias"]
    assert state["encoder.conv0.weight"].shape == (8, 4 * 3 * 3)
    assert ("encoder.dense.weight" in state) == (cnn_policy.dense_width > 0)
    if cnn_policy.dense_width:  # 10x10 -> 10x10x8 -> 4x4x16 = 256, flattened
        assert state["encoder.dense.weight"].shape == (32, 256)
    logits = torch_network(torch, state)
    rng = np.random.default_rng(5)
    obs = (rng.random((256, 10, 10, 4)) < 0.2).astype(np.float32)
    with torch.no_grad():
        scores = logits(obs).numpy()
    ordered = np.sort(scores, axis=1)
    clear = ordered[:, -1] - ordered[:, -2] > 1e-4  # rows whose greedy choice float noise cannot flip
    assert clear.sum() >= 128, clear.sum()
    actions = cnn_policy.act(obs.reshape(256, -1), deterministic=True)
    np.testing.assert_array_equal(np.asarray(actions).reshape(-1)[clear], scores.argmax(1)[clear])
