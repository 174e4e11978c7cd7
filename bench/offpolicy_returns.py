"""skinner's SAC and DQN against Stable-Baselines3's on returns (issue 51 ask 6: "returns at
least as good"), whole runs on the same tasks, budgets and hyperparameters, one env and one
thread a side, SEEDS training seeds each.

SAC on Pendulum-v1: configs/pendulum_sac.ini's settings (CleanRL's sac_continuous_action: two
256 x 256 Q networks, batch 256, a 1M buffer, learning starts 5,000, tau 0.005, automatic
entropy tuning) for 20,000 env steps, the issue's budget. SB3 has one learning rate for every
network: 3e-4, skinner's actor rate, where skinner's critics learn at 1e-3 (CleanRL's); SB3
steps its actor every gradient step, skinner 2 actor steps every 2nd (the same count).
DQN on CartPole-v1: configs/cartpole_dqn.ini's settings (CleanRL's dqn: 128 x 128 ReLU, batch
128, buffer 10,000, learning starts 10,000, a step every 10 env steps, target every 500,
epsilon 1 -> 0.05 over half the run, Adam at 2.5e-4, no gradient clipping) for 500,000 env steps,
with one env on both sides (the preset steps 16).

Each final policy plays EPISODES evaluation episodes, deterministic (SB3's evaluate_policy with
deterministic=True; `skinner eval --episodes N`, which plays SAC's mean action and DQN's greedy
one), on a fresh env seeded 1,000 + the training seed.

usage: see bench/offpolicy_returns.sh
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from offpolicy_peers import sb3_child_result, skinner_flags, write_table  # noqa: E402  shared with the speed bench

TASKS = {
    "pendulum_sac": dict(env="Pendulum-v1", algo="sac", hidden=256, layers=2, batch=256,
                         buffer=1000000, learning_starts=5000, train_freq=1, gradient_steps=1,
                         steps=20000),
    "cartpole_dqn": dict(env="CartPole-v1", algo="dqn", hidden=128, layers=2, batch=128,
                         buffer=10000, learning_starts=10000, train_freq=10, gradient_steps=1,
                         target_freq=500, steps=500000),
}


def skinner_run(skinner, t, seed, episodes):
    with tempfile.TemporaryDirectory() as d:
        run = os.path.join(d, "run")
        start = time.perf_counter()
        flags = skinner_flags(t, t["steps"], seed)
        if t["algo"] == "dqn":
            flags += ["--dqn.learning_rate", "0.00025", "--dqn.exploration_fraction", "0.5",
                      "--dqn.end_e", "0.05"]
        subprocess.run([skinner, "train", t["env"], "--run-dir", run] + flags, check=True,
                       stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        out = subprocess.run([skinner, "eval", t["env"], "--checkpoint", run, "--episodes",
                              str(episodes), "--seed", str(1000 + seed), "--json"],
                             check=True, capture_output=True, text=True)
    ev = json.loads(out.stdout)
    return dict(ret=ev["mean_return"], wall=wall)


def sb3_child(task, seed, episodes):
    import gymnasium as gym
    import torch
    from stable_baselines3 import DQN, SAC
    from stable_baselines3.common.evaluation import evaluate_policy

    torch.set_num_threads(1)
    t = TASKS[task]
    env = gym.make(t["env"])
    arch = [t["hidden"]] * t["layers"]
    common = dict(buffer_size=t["buffer"], learning_starts=t["learning_starts"], batch_size=t["batch"],
                  train_freq=t["train_freq"], gradient_steps=t["gradient_steps"], seed=seed,
                  device="cpu", verbose=0, gamma=0.99)
    if t["algo"] == "sac":
        model = SAC("MlpPolicy", env, policy_kwargs=dict(net_arch=arch), learning_rate=3e-4,
                    tau=0.005, ent_coef="auto", **common)
    else:
        model = DQN("MlpPolicy", env, policy_kwargs=dict(net_arch=arch), learning_rate=2.5e-4,
                    target_update_interval=t["target_freq"], exploration_initial_eps=1.0,
                    exploration_fraction=0.5, exploration_final_eps=0.05, max_grad_norm=1e10,
                    **common)
    start = time.perf_counter()
    model.learn(total_timesteps=t["steps"])
    wall = time.perf_counter() - start
    eval_env = gym.make(t["env"])
    eval_env.reset(seed=1000 + seed)
    mean, _ = evaluate_policy(model, eval_env, n_eval_episodes=episodes, deterministic=True)
    print(json.dumps(dict(ret=float(mean), wall=wall)))


def sb3_run(task, seed, episodes):
    return sb3_child_result(__file__, task, ["--seed", str(seed), "--episodes", str(episodes)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sb3-child")
    ap.add_argument("--skinner")
    ap.add_argument("--tasks", default="pendulum_sac,cartpole_dqn")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--out")
    ap.add_argument("--header", default="")
    args = ap.parse_args()
    if args.sb3_child:
        sb3_child(args.sb3_child, args.seed, args.episodes)
        return
    rows = []
    for task in args.tasks.split(","):
        t = TASKS[task]
        res = {"skinner": [], "SB3": []}
        for seed in (int(s) for s in args.seeds.split(",")):
            res["skinner"].append(skinner_run(args.skinner, t, seed, args.episodes))
            res["SB3"].append(sb3_run(task, seed, args.episodes))
            print("%s seed %d: skinner %s, SB3 %s" % (task, seed, res["skinner"][-1], res["SB3"][-1]),
                  file=sys.stderr, flush=True)
        cells = []
        for who in ("skinner", "SB3"):
            rets = [r["ret"] for r in res[who]]
            cells += ["%.1f (%s)" % (statistics.mean(rets), " / ".join("%.1f" % x for x in rets)),
                      "%.0f" % statistics.median(r["wall"] for r in res[who])]
        rows.append("| %s (%s) | %d | %s |" % (t["env"], t["algo"].upper(), t["steps"], " | ".join(cells)))
    table = ["| task | env steps | skinner return, mean (per seed) | skinner s a run | SB3 return, mean "
             "(per seed) | SB3 s a run |", "|---|---|---|---|---|---|"] + rows
    write_table(args.header, table, args.out)


if __name__ == "__main__":
    main()
