"""The MuJoCo envs' pictures (modules/mujoco/render.c, docs/mujoco.md "Seeing it") against
MuJoCo's own renderer: skinner's frame of an env after some random steps, and MuJoCo's
segmentation render (headless through EGL, in a child process with MUJOCO_GL=egl) of the same
qpos from the same free camera, placed as docs/mujoco.md says skinner places it (looking along
+y, framed on the geoms' bounding box at qpos0, 15 or 55 degrees above, following body 1 in x
and y). The pixels of the bodies (brown: red above green and blue) must be the pixels MuJoCo
finds a body geom in, all but the edges (IoU above 0.99). Without EGL it skips, saying why, and
fails under CI=true (scripts/setup.sh --test installs Mesa's EGL)."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import skinner
from conftest import under_ci

MODELS = pathlib.Path(__file__).resolve().parents[2] / "modules" / "mujoco" / "models"

# MuJoCo's side, in a child: the camera from the model at qpos0, then the segmentation of qpos
REFERENCE = r"""
import json, sys
import numpy as np, mujoco
path, qpos = sys.argv[1], json.loads(sys.argv[2])
m = mujoco.MjModel.from_xml_path(path)
d = mujoco.MjData(m)
mujoco.mj_kinematics(m, d)
T = mujoco.mjtGeom
lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
for g in range(m.ngeom):
    kind, (r, h, _) = m.geom_type[g], m.geom_size[g]
    if kind == T.mjGEOM_PLANE or m.geom_rgba[g][3] == 0 or m.geom_group[g] > 2:
        continue
    half = {T.mjGEOM_SPHERE: [r, r, r], T.mjGEOM_CAPSULE: [r, r, h + r],
            T.mjGEOM_CYLINDER: [r, r, h]}[kind]
    reach = np.abs(d.geom_xmat[g].reshape(3, 3)) @ np.array(half)
    lo, hi = np.minimum(lo, d.geom_xpos[g] - reach), np.maximum(hi, d.geom_xpos[g] + reach)
span = hi - lo
centre, root = (lo + hi) / 2, d.xpos[1].copy()
cam = mujoco.MjvCamera()
cam.type = mujoco.mjtCamera.mjCAMERA_FREE
cam.azimuth = 90.0
cam.elevation = -55.0 if span[2] < 0.3 * max(span[0], span[1]) else -15.0
cam.distance = 1.3 * 0.5 * np.linalg.norm(span) / np.sin(np.radians(22.5))
d.qpos[:] = qpos
mujoco.mj_kinematics(m, d)
cam.lookat[:] = [centre[0] - root[0] + d.xpos[1][0], centre[1] - root[1] + d.xpos[1][1], centre[2]]
renderer = mujoco.Renderer(m, 480, 480)
renderer.enable_segmentation_rendering()
renderer.update_scene(d, camera=cam)
seg = renderer.render()
renderer.close()
bodies = [g for g in range(m.ngeom) if m.geom_type[g] != T.mjGEOM_PLANE]
mask = (seg[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM)) & np.isin(seg[..., 0], bodies)
np.save(sys.argv[3], mask)
"""


@pytest.mark.parametrize("env_id,model", [("HalfCheetah-v5", "half_cheetah.xml"),
                                          ("Hopper-v5", "hopper.xml"), ("Ant-v5", "ant.xml")])
def test_bodies_where_mujoco_draws_them(env_id, model, tmp_path):
    try:
        env = skinner.make(env_id, num_envs=1, seed=4, render_mode="rgb_array")
    except Exception as error:  # the module not built: loud, and a failure under CI
        if under_ci():
            pytest.fail(f"{env_id}: {error}; CI=true: a missing module fails the run")
        pytest.skip(f"{env_id}: {error}")
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(20):
        env.step(rng.uniform(-1, 1, (1, env.single_action_space.shape[0])).astype(np.float32))
    qpos, _ = env.get_state(0)
    (frame,) = env.render()
    env.close()
    out = tmp_path / "mask.npy"
    child = subprocess.run([sys.executable, "-c", REFERENCE, str(MODELS / model),
                            json.dumps(qpos.tolist()), str(out)],
                           env=dict(os.environ, MUJOCO_GL="egl"), capture_output=True,
                           text=True, timeout=120)
    if child.returncode != 0:
        why = f"MuJoCo's EGL renderer did not run: {child.stderr.strip()[-300:]}"
        if under_ci():
            pytest.fail(why)
        pytest.skip(why)
    theirs = np.load(out)
    r, g, b = (frame[..., k].astype(int) for k in range(3))
    ours = (r > g + 10) & (r > b + 10)
    iou = (ours & theirs).sum() / (ours | theirs).sum()
    print(f"{env_id}: {ours.sum()} body pixels, MuJoCo {theirs.sum()}, IoU {iou:.4f}")
    assert theirs.sum() > 1000 and iou > 0.99  # 0.998 measured; 3 degrees of azimuth: 0.981
