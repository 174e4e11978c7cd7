"""A CleanRL-style PPO in PyTorch on skinner's own MinAtar envs: the same-machine yardstick
for `skinner train` (issue 32, ask 5). Written here in the manner of CleanRL's ppo.py, one
file, one loop; Debian's python3-torch, never a dependency of skinner.

Same network and hyperparameters as skinner by construction: the script runs
`skinner config ENV [--config FILE] [--KEY VALUE ...]`, the config `skinner train` would run
with, and reads env.num_envs, ppo.* and policy.* from it. The network is skinner's
(src/policy/encoder.c, mlp.c): the convolutions with a ReLU after each, the last map
flattened channels last (h, w, c), then separate actor and critic MLPs of policy.layers
layers of policy.hidden units reading that code; CleanRL's orthogonal init (gain sqrt(2),
0.01 for the logits, 1 for the value). Its tensors are named as skinner's checkpoints name
them (encoder.conv0.weight, actor.0.weight, ...). PPO is skinner's (src/train/ppo.c,
learner.c, rollout.c): GAE cut at every ended episode, a truncated one bootstrapped from the
value of its final observation; clipped value loss; advantages normalised per minibatch;
Adam with ppo.adam_eps; the global gradient norm clipped; the learning rate annealed linearly.
What skinner has and this has not: the governor (the rollback of a non-finite update).

The envs are stepped through the Python module (skinner.make, uint8 (N, 10, 10, C) views),
on --threads threads, as torch computes on --threads threads. The wall time is split into
env stepping (the skinner calls), acting (the policy on the rollout: forward, sampling and
the bootstrap values), the update (forward, backward and Adam over the minibatches) and the
rest (GAE, copies, bookkeeping); the split and steps/s are printed at the end.

    PYTHONPATH=build/python /usr/bin/python3 bench/minatar_torch_ppo.py \\
        --env MinAtar/Breakout-v1 --config configs/minatar.ini --total-steps 100000 \\
        --out torch-breakout.csv

--out writes one row per update with the first columns of skinner's metrics.csv:
update,steps,wall_seconds,sps,mean_return,mean_length,episodes (mean_return: the last 100
finished episodes, nan before the first, as skinner's).
"""

import argparse
import collections
import configparser
import os
import shutil
import subprocess
import sys
import time

import numpy as np

import skinner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RETURN_WINDOW = 100  # episodes in the mean return, as skinner's SK_WINDOW (trainer_internal.h)
ADV_EPS = 1e-8  # advantage normalisation's epsilon, as learner.c's normalize_advantages


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="CleanRL-style PyTorch PPO on skinner's MinAtar envs, configured by "
                    "`skinner config` (the same network and hyperparameters as skinner train)")
    parser.add_argument("--env", default="MinAtar/Breakout-v1")
    parser.add_argument("--config", help="an INI layered on the env's preset, as skinner train's")
    parser.add_argument("--total-steps", type=int,
                        help="env steps (default: the config's train.total_steps)")
    parser.add_argument("--seed", type=int, help="default: the config's train.seed")
    parser.add_argument("--threads", type=int, default=2,
                        help="torch.set_num_threads, and the threads stepping the envs")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a config override passed to skinner config as --KEY VALUE "
                             "(e.g. ppo.learning_rate=5e-4); repeatable")
    parser.add_argument("--out", help="a CSV of update,steps,wall_seconds,sps,mean_return,...")
    parser.add_argument("--skinner", help="the skinner program (default: $SKINNER_BUILD/skinner, "
                                          "build/skinner, then skinner on PATH)")
    return parser.parse_args(argv)


def skinner_program(explicit):
    if explicit:
        return explicit
    for folder in (os.environ.get("SKINNER_BUILD"), os.path.join(ROOT, "build")):
        if folder and os.access(os.path.join(folder, "skinner"), os.X_OK):
            return os.path.join(folder, "skinner")
    found = shutil.which("skinner")
    if not found:
        sys.exit("minatar_torch_ppo: no skinner program (pass --skinner PATH or set SKINNER_BUILD)")
    return found


def resolved_config(args):
    """The config `skinner train` would run with these options: {section: {key: text}}."""
    command = [skinner_program(args.skinner), "config", args.env]
    if args.config:
        command += ["--config", args.config]
    overrides = list(args.set)
    if args.total_steps is not None:
        overrides.append(f"train.total_steps={args.total_steps}")
    if args.seed is not None:
        overrides.append(f"train.seed={args.seed}")
    for item in overrides:
        key, equals, value = item.partition("=")
        if not equals or "." not in key:
            sys.exit(f"minatar_torch_ppo: --set '{item}' (expected SECTION.KEY=VALUE, "
                     f"e.g. ppo.learning_rate=5e-4)")
        command += ["--" + key.lstrip("-"), value]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"minatar_torch_ppo: {' '.join(command)} failed:\n{result.stderr.strip()}")
    ini = configparser.ConfigParser(interpolation=None)
    ini.read_string(result.stdout)
    return {section: dict(ini[section]) for section in ini.sections()}


def flag(text):
    return {"true": True, "false": False}[text]


def int_list(text):
    return [int(v) for v in text.split(",")]


class Settings:
    """The keys of the resolved config this PPO reads, typed; refuses what it does not do."""

    def __init__(self, config):
        env, ppo, policy, train = config["env"], config["ppo"], config["policy"], config["train"]
        self.num_envs = int(env["num_envs"])
        # the env's own keys, for skinner.make (id and num_envs are the vector's)
        self.env_keys = {k: v for k, v in env.items() if k not in ("id", "num_envs")}
        self.horizon = int(ppo["horizon"])
        self.num_minibatches = int(ppo["num_minibatches"])
        self.update_epochs = int(ppo["update_epochs"])
        self.learning_rate = float(ppo["learning_rate"])
        self.anneal_lr = flag(ppo["anneal_lr"])
        self.gamma, self.gae_lambda = float(ppo["gamma"]), float(ppo["gae_lambda"])
        self.clip_coef, self.clip_vloss = float(ppo["clip_coef"]), flag(ppo["clip_vloss"])
        self.ent_coef, self.vf_coef = float(ppo["ent_coef"]), float(ppo["vf_coef"])
        self.max_grad_norm, self.norm_adv = float(ppo["max_grad_norm"]), flag(ppo["norm_adv"])
        self.adam_eps, self.target_kl = float(ppo["adam_eps"]), float(ppo["target_kl"])
        self.bootstrap_truncated = flag(ppo["bootstrap_truncated"])
        self.total_steps, self.seed = int(train["total_steps"]), int(train["seed"])
        self.policy = policy
        refusals = [
            (policy["type"] != "mlp", f"policy.type = {policy['type']} (expected mlp)"),
            (policy["core"] != "none", f"policy.core = {policy['core']} (expected none)"),
            (policy.get("cnn_precision", "fp32") != "fp32",
             f"policy.cnn_precision = {policy.get('cnn_precision')} (expected fp32)"),
            (flag(ppo["norm_obs"]), "ppo.norm_obs = true (expected false)"),
            (flag(ppo["norm_reward"]), "ppo.norm_reward = true (expected false)"),
        ]
        for refused, what in refusals:
            if refused:
                sys.exit(f"minatar_torch_ppo: {what}: this PPO implements skinner's feed-forward "
                         f"mlp kind with fp32 convolutions and no running normalisation")
        self.batch_size = self.num_envs * self.horizon
        self.minibatch_size = self.batch_size // self.num_minibatches
        self.num_updates = max(1, self.total_steps // self.batch_size)


def build_agent(torch, policy, obs_shape, num_actions):
    """skinner's mlp kind (with policy.encoder = mlp or cnn) as a torch module whose
    state_dict names are the checkpoint's."""
    nn = torch.nn
    activation = {"tanh": torch.tanh, "relu": torch.relu}[policy["activation"]]
    hidden, layers = int(policy["hidden"]), int(policy["layers"])

    def init(module, gain):  # CleanRL's layer_init; a Conv2d's weight is orthogonal over (out, in*kh*kw)
        nn.init.orthogonal_(module.weight, gain)
        nn.init.zeros_(module.bias)
        return module

    class Encoder(nn.Module):
        """Convolutions over an (N, H, W, C) image, ReLU after each, flattened as (h, w, c),
        then policy.cnn_dense's shared Linear + ReLU if it is set."""

        def __init__(self):
            super().__init__()
            height, width, channels = obs_shape
            specs = zip(int_list(policy["cnn_channels"]), int_list(policy["cnn_kernels"]),
                        int_list(policy["cnn_strides"]), int_list(policy["cnn_padding"]))
            self.num_layers = 0
            for out, kernel, stride, padding in specs:
                conv = nn.Conv2d(channels, out, kernel, stride=stride, padding=padding)
                self.add_module(f"conv{self.num_layers}", init(conv, np.sqrt(2)))
                height = (height + 2 * padding - kernel) // stride + 1
                width = (width + 2 * padding - kernel) // stride + 1
                channels, self.num_layers = out, self.num_layers + 1
            self.code_size = height * width * channels
            dense = int(policy.get("cnn_dense", "0"))
            self.dense = init(nn.Linear(self.code_size, dense), np.sqrt(2)) if dense else None
            self.code_size = dense or self.code_size

        def forward(self, images):
            x = images.permute(0, 3, 1, 2)  # NHWC -> NCHW, torch's layout
            for l in range(self.num_layers):
                x = torch.relu(getattr(self, f"conv{l}")(x))
            x = x.permute(0, 2, 3, 1).flatten(1)  # back to (h, w, c), the order skinner reads
            return torch.relu(self.dense(x)) if self.dense is not None else x

    def mlp(in_size, out_size, last_gain):
        sizes = [in_size] + [hidden] * layers + [out_size]
        return nn.ModuleList(init(nn.Linear(sizes[l], sizes[l + 1]),
                                  last_gain if l == layers else np.sqrt(2))
                             for l in range(layers + 1))

    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            if policy["encoder"] == "cnn":
                self.encoder = Encoder()
                code_size = self.encoder.code_size
            else:  # mlp: the trunk reads the observation itself, flattened (h, w, c)
                self.encoder = None
                code_size = int(np.prod(obs_shape))
            self.actor = mlp(code_size, num_actions, 0.01)
            self.critic = mlp(code_size, 1, 1.0)

        def code(self, obs):
            x = obs.float()  # uint8 0/1 bytes as they are (skinner's sk_obs_widen)
            return self.encoder(x) if self.encoder is not None else x.flatten(1)

        @staticmethod
        def head(net, x):
            for linear in net[:-1]:
                x = activation(linear(x))
            return net[-1](x)

        def forward(self, obs):
            """-> (logits, values): both nets read one pass of the encoder, as skinner's."""
            code = self.code(obs)
            return self.head(self.actor, code), self.head(self.critic, code).squeeze(-1)

        def value(self, obs):
            return self.head(self.critic, self.code(obs)).squeeze(-1)

    return Agent()


class Clock:
    """Wall seconds per part of the loop: lap(part) adds the time since the last lap to part;
    lap(None) to none (other is what the named parts leave of the total)."""

    PARTS = ("env", "act", "update")
    NAMES = {"env": "env stepping (skinner)", "act": "acting (policy on the rollout)",
             "update": "update (forward, backward, Adam)", "other": "other (GAE, copies, CSV)"}

    def __init__(self):
        self.seconds = dict.fromkeys(self.PARTS, 0.0)
        self.start = self.last = time.perf_counter()

    def lap(self, part):
        now = time.perf_counter()
        if part:
            self.seconds[part] += now - self.last
        self.last = now

    def wall(self):
        return time.perf_counter() - self.start

    def report(self, steps):
        total = self.wall()
        parts = dict(self.seconds, other=total - sum(self.seconds.values()))
        lines = [f"{steps} steps in {total:.2f} s: {steps / total:.0f} steps/s; where the time went:"]
        for part, seconds in parts.items():
            lines.append(f"  {self.NAMES[part]:<34} {seconds:9.4f} s {100 * seconds / total:5.1f}%")
        return "\n".join(lines)


def gae(s, rewards, values, next_value, terminated, truncated, bootstrap):
    """skinner's sk_gae (src/train/ppo.c), every env at once: an ended step cuts the trace;
    a truncated one (not terminated) adds gamma times the value of its final observation
    (bootstrap), or nothing with ppo.bootstrap_truncated = false."""
    advantages = rewards.new_zeros(rewards.shape)
    last = rewards.new_zeros(rewards.shape[1])
    for t in reversed(range(s.horizon)):
        following = next_value if t == s.horizon - 1 else values[t + 1]
        ended = terminated[t] | truncated[t]
        cut = truncated[t] & ~terminated[t] & s.bootstrap_truncated
        after = following.where(~ended, bootstrap[t] * cut)
        delta = rewards[t] + s.gamma * after - values[t]
        last = delta + s.gamma * s.gae_lambda * last * ~ended
        advantages[t] = last
    return advantages


def ppo_loss(s, agent, torch, obs, actions, old_logp, advantages, returns, old_values):
    """The minibatch loss of src/train/ppo.c, and its approx KL (for ppo.target_kl)."""
    logits, values = agent(obs)
    dist = torch.distributions.Categorical(logits=logits)
    logratio = dist.log_prob(actions) - old_logp
    ratio = logratio.exp()
    if s.norm_adv:  # per minibatch, unbiased std, as learner.c
        advantages = (advantages - advantages.mean()) / (advantages.std() + ADV_EPS)
    clip = s.clip_coef
    policy_loss = torch.max(-advantages * ratio, -advantages * ratio.clamp(1 - clip, 1 + clip)).mean()
    unclipped = (values - returns) ** 2
    if s.clip_vloss:
        clipped = (old_values + (values - old_values).clamp(-clip, clip) - returns) ** 2
        value_loss = 0.5 * torch.max(unclipped, clipped).mean()
    else:
        value_loss = 0.5 * unclipped.mean()
    loss = policy_loss - s.ent_coef * dist.entropy().mean() + s.vf_coef * value_loss
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean().item()
    return loss, approx_kl


def main(argv=None):
    args = parse_args(argv)
    # libgomp's threads spin while they wait (OMP_WAIT_POLICY=ACTIVE, its default): on a 2-core
    # machine with anything else running, a thread spins through the timeslice its partner
    # needs, and a batch-16 forward took 60-120 ms on 2 threads against 0.4-2 ms on one
    # (2026-11-27, load 11). PASSIVE sleeps instead; it must be set before torch loads libgomp.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch
    except ImportError as error:
        sys.exit(f"minatar_torch_ppo: could not import torch ({error}): install python3-torch")
    s = Settings(resolved_config(args))
    torch.set_num_threads(args.threads)
    torch.manual_seed(s.seed)
    env = skinner.make(args.env, num_envs=s.num_envs, threads=args.threads, seed=s.seed,
                       **s.env_keys)
    obs_shape = env.single_observation_space.shape
    agent = build_agent(torch, s.policy, obs_shape, int(env.single_action_space.n))
    optimizer = torch.optim.Adam(agent.parameters(), lr=s.learning_rate, eps=s.adam_eps)
    num_params = sum(p.numel() for p in agent.parameters())
    print(f"{args.env}: {s.num_envs} envs x {s.horizon} steps, {s.num_updates} updates, "
          f"{num_params} parameters, {args.threads} threads (torch {torch.__version__}, "
          f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']})")

    T, N = s.horizon, s.num_envs
    obs_dtype = torch.from_numpy(np.zeros(0, env.single_observation_space.dtype)).dtype
    obs = torch.zeros((T, N) + tuple(obs_shape), dtype=obs_dtype)  # uint8 images stay bytes
    actions = torch.zeros((T, N), dtype=torch.long)
    logp, rewards, values, bootstrap = (torch.zeros((T, N)) for _ in range(4))
    terminated, truncated = (torch.zeros((T, N), dtype=torch.bool) for _ in range(2))

    out = open(args.out, "w") if args.out else None
    if out:
        out.write("update,steps,wall_seconds,sps,mean_return,mean_length,episodes\n")
    recent = collections.deque(maxlen=RETURN_WINDOW)  # (return, length) of finished episodes
    episodes = steps = 0
    clock = Clock()
    next_obs, _ = env.reset()  # a view of skinner's buffer, valid until the next step
    clock.lap("env")
    for update in range(1, s.num_updates + 1):
        frac = 1.0 - (update - 1) / s.num_updates
        optimizer.param_groups[0]["lr"] = frac * s.learning_rate if s.anneal_lr else s.learning_rate
        for t in range(T):
            obs[t].copy_(torch.from_numpy(next_obs))
            clock.lap(None)
            with torch.no_grad():
                logits, values[t] = agent(obs[t])
                dist = torch.distributions.Categorical(logits=logits)
                actions[t] = dist.sample()
                logp[t] = dist.log_prob(actions[t])
            clock.lap("act")
            next_obs, reward, term, trunc, infos = env.step(actions[t].numpy())
            clock.lap("env")
            rewards[t].copy_(torch.from_numpy(reward))
            terminated[t].copy_(torch.from_numpy(term))
            truncated[t].copy_(torch.from_numpy(trunc))
            if "episode" in infos:
                done = infos["_episode"]
                recent.extend(zip(infos["episode"]["r"][done].tolist(),
                                  infos["episode"]["l"][done].tolist()))
                episodes += int(done.sum())
            cut = trunc & ~term
            if cut.any():  # the value of the final observation, seen from where the episode was
                rows = np.flatnonzero(cut)
                final_obs = torch.from_numpy(infos["final_obs"][rows])
                clock.lap(None)
                with torch.no_grad():
                    bootstrap[t, rows] = agent.value(final_obs)
                clock.lap("act")
        with torch.no_grad():
            next_value = agent.value(torch.from_numpy(next_obs))
        clock.lap("act")
        advantages = gae(s, rewards, values, next_value, terminated, truncated, bootstrap)
        returns = advantages + values
        steps += s.batch_size

        flat = (obs.reshape((-1,) + tuple(obs_shape)), actions.flatten(), logp.flatten(),
                advantages.flatten(), returns.flatten(), values.flatten())
        clock.lap(None)
        for _ in range(s.update_epochs):
            order = torch.randperm(s.batch_size)
            for lo in range(0, s.batch_size, s.minibatch_size):
                rows = order[lo:lo + s.minibatch_size]
                loss, approx_kl = ppo_loss(s, agent, torch, *(x[rows] for x in flat))
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(agent.parameters(), s.max_grad_norm)
                optimizer.step()
            if s.target_kl > 0 and approx_kl > s.target_kl:
                break
        clock.lap("update")

        wall = clock.wall()
        mean_return = np.mean([r for r, _ in recent]) if recent else float("nan")
        mean_length = np.mean([l for _, l in recent]) if recent else float("nan")
        if out:
            out.write(f"{update},{steps},{wall:.3f},{steps / wall:.0f},{mean_return:.6g},"
                      f"{mean_length:.6g},{episodes}\n")
            out.flush()
        if update % 10 == 0 or update == s.num_updates:
            print(f"update {update}/{s.num_updates}: {steps} steps, {steps / wall:.0f} steps/s, "
                  f"mean return {mean_return:.2f} ({len(recent)} episodes)", flush=True)
        clock.lap(None)
    env.close()
    if out:
        out.close()
    print(clock.report(steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
