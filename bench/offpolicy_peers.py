"""skinner's SAC and DQN against Stable-Baselines3's on the same hyperparameters (issue 51 ask 6).

One measurement is one fresh process, skinner's and SB3's alternating. Each runs past
learning_starts by a fixed number of env steps; the figures cover only the steps after
learning starts: gradient updates per wall second and per CPU-second (user + system of the
whole process, which the other jobs of a shared machine distort less), and env steps per
second. The table gives the median of the repeats.

skinner's side: `skinner train` in a child process; when its metrics.csv first shows a step at or
past learning_starts, the child's CPU time is read from /proc/PID/stat and the wall clock noted;
at its exit, wait4's rusage gives its total CPU time. SB3's side: model.learn in a child process
of this script (run with --sb3-child), a callback noting time.perf_counter and
time.process_time at learning_starts and at the end.

usage: see bench/offpolicy_peers.sh
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# (name, env, learner, shared hyperparameters); skinner's keys and SB3's keywords follow from
# them in skinner_flags and sb3_child. SB3 updates SAC's actor every gradient step; CleanRL's
# schedule (skinner's) takes 2 actor steps every 2nd: the same number of actor steps.
TASKS = {
    "pendulum_sac": dict(env="Pendulum-v1", algo="sac", hidden=256, layers=2, batch=256,
                         buffer=100000, learning_starts=1000, train_freq=1, gradient_steps=1),
    "cheetah_sac": dict(env="HalfCheetah-v5", algo="sac", hidden=256, layers=2, batch=256,
                        buffer=100000, learning_starts=1000, train_freq=1, gradient_steps=1),
    "cartpole_dqn": dict(env="CartPole-v1", algo="dqn", hidden=128, layers=2, batch=128,
                         buffer=10000, learning_starts=10000, train_freq=10, gradient_steps=1,
                         target_freq=500),
    # DQN on uint8 images: skinner's MinAtar network (configs/minatar.ini: a 3x3 convolution to
    # 16 channels, ReLU, a 64-unit ReLU layer, two 64-unit tanh layers) and its image defaults
    # (CleanRL's dqn_atari: batch 32, a gradient step every 4 env steps, target every 1,000,
    # Adam at 1e-4), sticky actions 0.1 on both sides (MinAtar's -v1 default)
    "breakout_dqn": dict(env="MinAtar/Breakout-v1", algo="dqn", image=True, hidden=64, layers=2,
                         batch=32, buffer=100000, learning_starts=10000, train_freq=4,
                         gradient_steps=1, target_freq=1000),
}


def skinner_flags(t, steps, seed):
    flags = ["--train.algo", t["algo"], "--env.num_envs", "1", "--total-steps", str(steps),
             "--seed", str(seed), "--threads", "1", "--replay.size", str(t["buffer"]),
             "--replay.save", "false", "--quiet"]
    if t["algo"] == "sac":
        a = "sac"
        flags += ["--sac.hidden", str(t["hidden"]), "--sac.layers", str(t["layers"]),
                  "--sac.batch_size", str(t["batch"])]
    else:
        a = "dqn"
        if not t.get("image"):  # an image env trains its preset's network
            flags += ["--policy.hidden", str(t["hidden"]), "--policy.layers", str(t["layers"]),
                      "--policy.activation", "relu"]
        flags += ["--dqn.batch_size", str(t["batch"]),
                  "--dqn.target_network_frequency", str(t["target_freq"])]
    flags += ["--%s.learning_starts" % a, str(t["learning_starts"]),
              "--%s.train_frequency" % a, str(t["train_freq"]),
              "--%s.gradient_steps" % a, str(t["gradient_steps"])]
    return flags


def last_steps(metrics):
    try:
        with open(metrics, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4096))
            lines = f.read().decode(errors="replace").strip().splitlines()
        return int(lines[-1].split(",")[1]) if len(lines) > 1 else 0
    except (OSError, ValueError, IndexError):
        return 0


def proc_cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick  # utime, stime


def run_skinner(skinner, t, measured, seed):
    total = t["learning_starts"] + measured
    with tempfile.TemporaryDirectory() as d:
        run = os.path.join(d, "run")
        p = subprocess.Popen([skinner, "train", t["env"], "--run-dir", run] + skinner_flags(t, total, seed),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        mark = None
        while p.poll() is None and mark is None:
            s = last_steps(os.path.join(run, "metrics.csv"))
            if s >= t["learning_starts"]:
                mark = (time.perf_counter(), proc_cpu(p.pid), s)
            else:
                time.sleep(0.05)
        _, status, usage = os.wait4(p.pid, 0)
        end = time.perf_counter()
        err = p.stderr.read().decode(errors="replace")
        if status != 0 or mark is None:
            raise SystemExit("skinner failed on %s: %s" % (t["env"], err.strip()[-400:]))
        steps = total - mark[2]
        wall = end - mark[0]
        cpu = usage.ru_utime + usage.ru_stime - mark[1]
    return dict(steps=steps, updates=steps * t["gradient_steps"] // t["train_freq"], wall=wall, cpu=cpu)


def minatar_policy(torch, env):
    """SB3 policy keywords for skinner's MinAtar network: the (10, 10, C) observation as C
    channels, a 3x3 convolution to 16 (no padding), ReLU, a 64-unit ReLU layer, then two
    64-unit tanh layers and the Q head."""
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class MinAtarCNN(BaseFeaturesExtractor):
        def __init__(self, space):
            super().__init__(space, features_dim=64)
            h, w, c = space.shape
            self.conv = torch.nn.Conv2d(c, 16, 3)
            self.dense = torch.nn.Linear(16 * (h - 2) * (w - 2), 64)

        def forward(self, obs):
            x = torch.relu(self.conv(obs.permute(0, 3, 1, 2)))
            return torch.relu(self.dense(x.flatten(1)))

    return dict(features_extractor_class=MinAtarCNN, net_arch=[64, 64], activation_fn=torch.nn.Tanh)


def sb3_child(task, measured, seed, threads):
    import gymnasium as gym
    import torch
    from stable_baselines3 import DQN, SAC
    from stable_baselines3.common.callbacks import BaseCallback

    torch.set_num_threads(threads)
    t = TASKS[task]
    if t.get("image"):
        import minatar.gym
        minatar.gym.register_envs()
    env = gym.make(t["env"])
    arch = [t["hidden"]] * t["layers"]
    common = dict(buffer_size=t["buffer"], learning_starts=t["learning_starts"], batch_size=t["batch"],
                  train_freq=t["train_freq"], gradient_steps=t["gradient_steps"], seed=seed, device="cpu",
                  verbose=0)
    if t["algo"] == "sac":
        model = SAC("MlpPolicy", env, policy_kwargs=dict(net_arch=arch), learning_rate=3e-4, **common)
    elif t.get("image"):
        model = DQN("MlpPolicy", env, policy_kwargs=minatar_policy(torch, env), learning_rate=1e-4,
                    target_update_interval=t["target_freq"], exploration_fraction=0.1,
                    exploration_final_eps=0.01, max_grad_norm=1e10, **common)
    else:
        model = DQN("MlpPolicy", env, policy_kwargs=dict(net_arch=arch), learning_rate=2.5e-4,
                    target_update_interval=t["target_freq"], exploration_fraction=0.5,
                    exploration_final_eps=0.05, max_grad_norm=1e10, **common)
    marks = {}

    class Mark(BaseCallback):
        def _on_step(self):
            if "start" not in marks and self.num_timesteps >= t["learning_starts"]:
                marks["start"] = (time.perf_counter(), time.process_time(), self.num_timesteps)
            return True

    total = t["learning_starts"] + measured
    model.learn(total_timesteps=total, callback=Mark())
    wall, cpu = time.perf_counter(), time.process_time()
    steps = total - marks["start"][2]
    print(json.dumps(dict(steps=steps, updates=steps * t["gradient_steps"] // t["train_freq"],
                          wall=wall - marks["start"][0], cpu=cpu - marks["start"][1])))


def sb3_child_result(script, task, args):
    """Runs `script --sb3-child TASK ARGS...` in a fresh Python process (SB3 and torch stay out
    of the measuring process) and returns the JSON object its last line prints."""
    out = subprocess.run([sys.executable, script, "--sb3-child", task] + args,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("SB3 failed on %s: %s" % (task, out.stderr.strip()[-400:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def write_table(header, lines, out):
    """The results file: the header, then the table's lines; printed as well."""
    text = header + "\n".join(lines) + "\n"
    if out:
        with open(out, "w") as f:
            f.write(text)
    print(text)


def run_sb3(task, measured, seed, threads):
    return sb3_child_result(__file__, task, ["--measured", str(measured), "--seed", str(seed),
                                             "--threads", str(threads)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sb3-child")
    ap.add_argument("--skinner")
    ap.add_argument("--tasks", default="pendulum_sac,cheetah_sac,cartpole_dqn,breakout_dqn")
    ap.add_argument("--measured", type=int, default=2000, help="env steps past learning_starts (SAC)")
    ap.add_argument("--dqn-measured", type=int, default=20000, help="env steps past learning_starts (DQN)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--header", default="")
    args = ap.parse_args()
    if args.sb3_child:
        sb3_child(args.sb3_child, args.measured, args.seed, args.threads)
        return
    rows = []
    for task in args.tasks.split(","):
        t = TASKS[task]
        measured = args.dqn_measured if t["algo"] == "dqn" else args.measured
        runs = {"skinner": [], "SB3": []}
        for r in range(args.repeats):
            runs["skinner"].append(run_skinner(args.skinner, t, measured, args.seed + r))
            runs["SB3"].append(run_sb3(task, measured, args.seed + r, args.threads))
            print("%s: repeat %d of %d: skinner %s, SB3 %s" % (task, r + 1, args.repeats,
                  runs["skinner"][-1], runs["SB3"][-1]), file=sys.stderr, flush=True)
        med = {}
        for who, rs in runs.items():
            med[who] = dict(ups=statistics.median(x["updates"] / x["wall"] for x in rs),
                            upc=statistics.median(x["updates"] / x["cpu"] for x in rs),
                            sps=statistics.median(x["steps"] / x["wall"] for x in rs))
        rows.append("| %s (%s) | %d past %d | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %.0f | %.0f |" % (
            t["env"], t["algo"].upper(), measured, t["learning_starts"], med["skinner"]["ups"], med["SB3"]["ups"],
            med["skinner"]["ups"] / med["SB3"]["ups"], med["skinner"]["upc"], med["SB3"]["upc"],
            med["skinner"]["upc"] / med["SB3"]["upc"], med["skinner"]["sps"], med["SB3"]["sps"]))
    table = ["| task | env steps measured | skinner updates/s | SB3 updates/s | ratio | skinner updates per CPU-s "
             "| SB3 updates per CPU-s | ratio | skinner env steps/s | SB3 env steps/s |",
             "|---|---|---|---|---|---|---|---|---|---|"] + rows
    write_table(args.header, table, args.out)


if __name__ == "__main__":
    main()
