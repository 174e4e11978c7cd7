"""Runs an exported ONNX model with ONNX Runtime (PyPI's onnxruntime, in the test venv) over
recorded rows, as tests/export/driver.c runs the C header:
    python onnx_run.py MODEL DIR OBS_DTYPE OBS_SIZE MASK_SIZE STATE_SIZE HEADS|-DIM
First checks the model with onnx.checker.check_model(full_check=True). Reads DIR/obs.bin,
start.bin and mask.bin (if there); writes DIR/onnx_out.bin (per row: the action, the actor's
output, the value, state_out; float32) and, with masks, DIR/onnx_nomask.bin (the same with one
row of ones as the mask: every action allowed). A feed-forward model takes all rows as one
batch; a recurrent one steps row by row, carrying state_out into state_in and zeroing it where
an episode starts. Exit 0 on success; a missing package exits 3 naming it (test_export skips
that part loudly, and fails under CI=true)."""
import pathlib
import sys

import numpy as np

MISSING_PACKAGE = 3

try:
    import onnx
    import onnxruntime
except ImportError as error:
    print(f"onnx_run.py: {error} (the test venv of scripts/setup.sh --test has it)",
          file=sys.stderr)
    sys.exit(MISSING_PACKAGE)


def run_rows(session, obs, start, masks, mask_size, state_size, out_names, with_mask):
    rows = len(start)
    step = 1 if state_size else rows  # a recurrent model carries its state row by row
    state = np.zeros((1, state_size), np.float32)
    values = []
    for first in range(0, rows, step):
        count = min(step, rows - first)
        feeds = {"obs": obs[first:first + count]}
        if state_size:
            if start[first]:
                state = np.zeros((1, state_size), np.float32)
            feeds["state_in"] = state
        if mask_size:  # without the rows' masks: one row of ones, broadcast over the batch
            feeds["mask"] = (masks[first:first + count] if with_mask and masks is not None
                             else np.ones((1, mask_size), np.uint8))
        result = dict(zip(session_outputs(session), session.run(None, feeds)))
        columns = [result["action"].astype(np.float32)] + [result[name] for name in out_names]
        columns.append(result["value"])
        if state_size:
            state = result["state_out"]
            columns.append(state)
        values.append(np.concatenate(columns, axis=1).astype(np.float32))
    return np.concatenate(values, axis=0)


def session_outputs(session):
    return [output.name for output in session.get_outputs()]


def main(argv):
    model, folder, dtype, obs_size, mask_size, state_size, heads = argv
    obs_size, mask_size, state_size, heads = map(int, (obs_size, mask_size, state_size, heads))
    folder = pathlib.Path(folder)
    onnx.checker.check_model(onnx.load(model), full_check=True)
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    start = np.fromfile(folder / "start.bin", np.uint8)
    obs = np.fromfile(folder / "obs.bin", np.dtype(dtype)).reshape(len(start), obs_size)
    mask_path = folder / "mask.bin"
    masks = (np.fromfile(mask_path, np.uint8).reshape(len(start), mask_size)
             if mask_size and mask_path.exists() else None)
    out_names = [f"logits_{h}" for h in range(heads)] if heads > 0 else ["mean"]
    args = (session, obs, start, masks, mask_size, state_size, out_names)
    run_rows(*args, with_mask=True).tofile(folder / "onnx_out.bin")
    if masks is not None:
        run_rows(*args, with_mask=False).tofile(folder / "onnx_nomask.bin")


if __name__ == "__main__":
    main(sys.argv[1:])
