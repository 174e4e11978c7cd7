"""Each MuJoCo task trains with its own preset (issue 50 ask 4): `skinner config ID` (what
`skinner train ID` runs with no --config) holds every key of the preset file the task names,
with the file's value: HalfCheetah its own (configs/mujoco_halfcheetah.ini, CleanRL's settings
with a narrower start and half the learner's work), Ant-v5 its own (configs/mujoco_ant.ini: no contact forces observed), the other
tasks configs/mujoco.ini (CleanRL's settings).
Usage: mujoco_preset_check.py SKINNER SOURCE_DIR"""
import configparser
import os
import subprocess
import sys

skinner, source = sys.argv[1], sys.argv[2]
EXPECTED = {"HalfCheetah-v5": "mujoco_halfcheetah", "Hopper-v5": "mujoco",
            "Walker2d-v5": "mujoco", "Ant-v5": "mujoco_ant", "Humanoid-v5": "mujoco"}


def parse(text):
    config = configparser.ConfigParser(inline_comment_prefixes=(";",))
    config.read_string(text)
    return config


envs = subprocess.run([skinner, "envs"], capture_output=True, text=True, check=True).stdout
if "HalfCheetah-v5 " not in envs:
    print("SKIPPED: mujoco_preset_check: no MuJoCo tasks in this build")
    sys.exit(1 if os.environ.get("CI", "") not in ("", "0", "false") else 77)
failures = 0
for task, preset in EXPECTED.items():
    shown = parse(subprocess.run([skinner, "config", task], capture_output=True, text=True,
                                 check=True).stdout)
    with open("%s/configs/%s.ini" % (source, preset)) as f:
        wanted = parse(f.read())
    for section in wanted.sections():
        for key, value in wanted[section].items():
            got = shown.get(section, key, fallback=None)
            same = got == value
            if not same and got is not None:
                try:
                    same = float(got) == float(value)
                except ValueError:
                    pass
            if not same:
                print("FAIL: %s: [%s] %s = %s, expected %s (configs/%s.ini)"
                      % (task, section, key, got, value, preset))
                failures += 1
    print("%s: configs/%s.ini's keys as shown by skinner config" % (task, preset))
sys.exit(1 if failures else 0)
