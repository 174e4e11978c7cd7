"""A MuJoCo run stopped and resumed continues bit for bit (issue 50): HalfCheetah-v5 and Ant-v5
(on ../shared's reference model files, or the embedded ones when this build has them) trained to
a budget in one go and in two legs (the second `--resume`) end with the same checkpoint, every
tensor byte for byte (the env's physics state, its RNG streams, the policy, Adam) but the clock's,
and the same metrics rows. Then a checkpoint whose physics holds a NaN velocity, a time below
zero or a position past MuJoCo's limit is refused, naming the part and the env.

Usage: mujoco_resume_check.py SKINNER SHARED_DIR. Exits 77 (skipped) when the module is not
built or the model files are missing, 1 under CI=true for either."""

import json
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import zlib

skinner = sys.argv[1]
shared = pathlib.Path(os.environ.get("SKINNER_SHARED_DIR") or sys.argv[2])
assets = shared / "reference" / "mujoco" / "assets"
CI = os.environ.get("CI", "") not in ("", "0", "false")


def skip(why):
    print(f"SKIPPED: mujoco_resume_check: {why}")
    sys.exit(1 if CI else 77)


def fail(why):
    print(f"mujoco_resume_check: FAIL: {why}")
    sys.exit(1)


def run(*args, ok=True):
    done = subprocess.run([skinner, *args], capture_output=True, text=True)
    if ok and done.returncode != 0:
        fail(f"skinner {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done


def tensors(path):
    """safetensors: {name: (dtype, shape, bytes)}"""
    data = pathlib.Path(path).read_bytes()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    return {name: (t["dtype"], t["shape"], body[t["data_offsets"][0]:t["data_offsets"][1]])
            for name, t in header.items() if name != "__metadata__"}


def model_args(task, file):
    listed = run("envs", ok=False).stdout
    if task not in listed:
        skip(f"{task} is not built (no MuJoCo at configure time: scripts/setup.sh installs it)")
    if run("check", task, "--steps", "1", ok=False).returncode == 0:
        return []  # the embedded model
    if not (assets / file).exists():
        skip(f"{assets / file} is missing and this build embeds no {file}")
    return ["--env.model", str(assets / file)]


def rows(run_dir):
    lines = (run_dir / "metrics.csv").read_text().splitlines()
    columns = lines[0].split(",")
    keep = [k for k, c in enumerate(columns) if c not in ("wall_seconds", "sps")]
    return [[line.split(",")[k] for k in keep] for line in lines[1:]]


def check_task(task, file, work):
    # no annealing: its schedule follows each leg's budget
    common = ["--env.num_envs", "4", "--threads", "2", "--seed", "3", "--quiet",
              "--ppo.anneal_lr", "false",
              *model_args(task, file)]
    whole, legs = work / f"{task}-whole", work / f"{task}-legs"
    run("train", task, "--total-steps", "6144", "--run-dir", str(whole), *common)
    run("train", task, "--total-steps", "2048", "--run-dir", str(legs), *common)
    run("train", task, "--total-steps", "6144", "--run-dir", str(legs), "--resume", str(legs),
        *common)
    a, b = tensors(whole / "policy.safetensors"), tensors(legs / "policy.safetensors")
    if sorted(a) != sorted(b):
        fail(f"{task}: the checkpoints hold different tensors")
    for name in a:
        if name != "state.seconds" and a[name] != b[name]:
            fail(f"{task}: tensor {name} differs between the run in one go and the resumed one")
    if "env.physics" not in a:
        fail(f"{task}: the checkpoint holds no env.physics")
    if rows(whole) != rows(legs):
        fail(f"{task}: metrics.csv differs between the run in one go and the resumed one")
    print(f"mujoco_resume_check: {task}: resumed at 2048 of 6144 steps, bit for bit "
          f"({len(a)} tensors)")
    return legs, common


def tamper(src, dst, name, index, value):
    data = bytearray(pathlib.Path(src).read_bytes())
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    start = 8 + size + header[name]["data_offsets"][0] + 8 * index
    data[start:start + 8] = struct.pack("<d", value)
    reseal(data, size)
    pathlib.Path(dst).write_bytes(bytes(data))


def reseal(data, size):
    """As a deliberate tamperer would (sk_st_reseal, src/io/safetensors.c): the data's CRC-32
    under skinner.crc32, then the whole file's, its own 8 digits read as zeros, under
    skinner.checksum."""
    header = bytes(data[8:8 + size])
    for key, whole in (("skinner.crc32", False), ("skinner.checksum", True)):
        needle = f'"{key}":"'.encode()
        at = header.find(needle)
        if at < 0:
            continue
        at += 8 + len(needle)
        if whole:
            data[at:at + 8] = b"00000000"
        crc = zlib.crc32(bytes(data) if whole else bytes(data[8 + size:]))
        data[at:at + 8] = f"{crc:08x}".encode()


def check_refused(task, legs, common, work):
    nq = 9  # HalfCheetah's model: time, then 9 positions, then 9 velocities
    size = len(tensors(legs / "policy.safetensors")["env.physics"][2]) // 8 // 4  # per env
    cases = [(1 * size + 1 + nq + 2, float("nan"), "env 1", "qvel[2]"),
             (2 * size + 0, -1.0, "env 2", "time[0]"),
             (3 * size + 1 + 4, 1e11, "env 3", "qpos[4]")]
    for index, value, env, part in cases:
        bad = work / f"bad-{part}"
        bad.mkdir()
        for item in legs.iterdir():
            if item.is_file():
                (bad / item.name).write_bytes(item.read_bytes())
        tamper(legs / "policy.safetensors", bad / "policy.safetensors", "env.physics", index,
               value)
        done = run("train", task, "--total-steps", "8192", "--run-dir", str(bad), "--resume",
                   str(bad), *common, ok=False)
        out = done.stdout + done.stderr
        if done.returncode == 0 or part not in out or env not in out:
            fail(f"a checkpoint with {part} = {value} in {env} was not refused by name:\n{out}")
        print(f"mujoco_resume_check: {part} = {value} refused: {out.strip().splitlines()[-1]}")


with tempfile.TemporaryDirectory() as tmp:
    work = pathlib.Path(tmp)
    legs, common = check_task("HalfCheetah-v5", "half_cheetah.xml", work)
    check_task("Ant-v5", "ant.xml", work)
    check_refused("HalfCheetah-v5", legs, common, work)
