"""Independent PyTorch (float64) reference for SAC's updates (CleanRL sac_continuous_action
semantics: two Q networks with targets, a tanh-squashed Gaussian actor with its log-std squashed
into [-5, 2], automatic entropy tuning, delayed actor updates).

Produces two fixture files that tests/test_sac_torch.c parses:

  tests/fixtures/sac_case1.txt   obs 4, act 2 with bounds [-1, 1] x [-2, 0.5], hidden 8, 2 hidden
                                 layers, batch 12, alpha learned from log_alpha = -0.7,
                                 policy_frequency 2, target_frequency 1; global steps 1 (critic and
                                 targets) and 2 (critic, two actor and alpha steps, targets).
  tests/fixtures/sac_case2.txt   obs 3, act 1 with bounds [-2, 2] (Pendulum's), hidden 16, 1 hidden
                                 layer, batch 10, fixed alpha 0.2, policy_frequency 2,
                                 target_frequency 2; global steps 2 (critic, two actor steps,
                                 targets) and 3 (critic only).

Each file holds the sizes and hyperparameters, the initial parameters (targets perturbed away
from the online Q networks, so that a learner that bootstraps from the wrong networks shows),
one batch and the noise draws (N(0, 1)) of each step, and after each step: the losses, the
gradients (the Q networks' of the step's critic update, the actor's of its last actor update),
and every parameter, target and log_alpha. Plus one sampled and one deterministic action pass.
Every input is rounded to float32 first, so the C learner starts from the same values.

File format: one record per line, `NAME COUNT v1 ... vCOUNT`, values printed with '%.17g';
lines starting with '#' are comments. Tensor names and layouts follow torch.nn.Linear
(weight (out, in), row-major).

Regenerate (from the repository root; Debian's python has torch):

    /usr/bin/python3 tests/reference/sac_reference.py [OUTPUT_DIR]

OUTPUT_DIR defaults to ../fixtures relative to this script. Output is deterministic.
"""

import os
import sys

import torch

from rnn_reference import fixture_values

torch.set_default_dtype(torch.float64)
DT = torch.float64
LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


def f32(x):
    """x rounded to float32, held in float64: the C side reads the same value."""
    return x.float().to(DT)


def mlp_names(prefix, layers, actor):
    names = []
    for i in range(layers):
        names += [f"{prefix}.{i}.weight", f"{prefix}.{i}.bias"]
    if actor:
        names += [f"{prefix}.mean.weight", f"{prefix}.log_std.weight",
                  f"{prefix}.mean.bias", f"{prefix}.log_std.bias"]
    else:
        names += [f"{prefix}.{layers}.weight", f"{prefix}.{layers}.bias"]
    return names


class Sac:
    """The networks as plain tensors: one dict of leaf tensors per network."""

    def __init__(self, cfg, gen):
        self.cfg = cfg
        L, H, O, A = cfg["layers"], cfg["hidden"], cfg["obs_size"], cfg["act_dim"]
        self.actor = {}
        self.q = [{}, {}]
        # torch.nn.Linear's layers in float64 (their default init), rounded to float32
        def linear(into, prefix, name_w, name_b, fan_in, fan_out):
            layer = torch.nn.Linear(fan_in, fan_out, dtype=DT)
            with torch.no_grad():
                into[name_w] = f32(layer.weight.detach().clone())
                into[name_b] = f32(layer.bias.detach().clone())
        torch.manual_seed(cfg["seed"])
        for i in range(L):
            linear(self.actor, "actor", f"actor.{i}.weight", f"actor.{i}.bias", O if i == 0 else H, H)
        linear(self.actor, "actor", "actor.mean.weight", "actor.mean.bias", H, A)
        linear(self.actor, "actor", "actor.log_std.weight", "actor.log_std.bias", H, A)
        for k, name in enumerate(("qf1", "qf2")):
            for i in range(L + 1):
                linear(self.q[k], name, f"{name}.{i}.weight", f"{name}.{i}.bias",
                       O + A if i == 0 else H, 1 if i == L else H)
        # targets: the online Q networks, perturbed
        self.target = [{}, {}]
        for k, name in enumerate(("qf1", "qf2")):
            for n, t in self.q[k].items():
                noise = 0.05 * torch.randn(t.shape, generator=gen, dtype=DT)
                self.target[k][n.replace(name, name + "_target", 1)] = f32(t + noise)
        for d in (self.actor, self.q[0], self.q[1]):
            for t in d.values():
                t.requires_grad_(True)
        low = torch.tensor(cfg["act_low"], dtype=DT)
        high = torch.tensor(cfg["act_high"], dtype=DT)
        self.scale = (high - low) / 2.0
        self.bias = (high + low) / 2.0
        self.log_alpha = torch.tensor([cfg["log_alpha_init"]], dtype=DT, requires_grad=True)

    def actor_forward(self, obs):
        L = self.cfg["layers"]
        p = self.actor
        x = obs
        for i in range(L):
            x = torch.relu(x @ p[f"actor.{i}.weight"].T + p[f"actor.{i}.bias"])
        mean = x @ p["actor.mean.weight"].T + p["actor.mean.bias"]
        log_std = torch.tanh(x @ p["actor.log_std.weight"].T + p["actor.log_std.bias"])
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)
        return mean, log_std

    def get_action(self, obs, noise):
        """(action, log_prob, deterministic action), reparameterised with the given noise."""
        mean, log_std = self.actor_forward(obs)
        std = log_std.exp()
        normal = torch.distributions.Normal(mean, std)
        x_t = mean + std * noise
        y_t = torch.tanh(x_t)
        action = y_t * self.scale + self.bias
        log_prob = normal.log_prob(x_t) - torch.log(self.scale * (1 - y_t.pow(2)) + 1e-6)
        return action, log_prob.sum(1), torch.tanh(mean) * self.scale + self.bias

    @staticmethod
    def q_forward(params, prefix, layers, obs, actions):
        x = torch.cat([obs, actions], 1)
        for i in range(layers):
            x = torch.relu(x @ params[f"{prefix}.{i}.weight"].T + params[f"{prefix}.{i}.bias"])
        return (x @ params[f"{prefix}.{layers}.weight"].T + params[f"{prefix}.{layers}.bias"]).view(-1)

    def alpha(self):
        return self.log_alpha.exp().item() if self.cfg["autotune"] else self.cfg["alpha"]


def run_step(sac, opts, step, batch, noise):
    """One global step of CleanRL's loop after learning_starts; returns the figures it logs."""
    cfg = sac.cfg
    L = cfg["layers"]
    q_opt, actor_opt, alpha_opt = opts
    alpha = sac.alpha()
    out = {}
    with torch.no_grad():
        next_a, next_lp, _ = sac.get_action(batch["next_obs"], noise["next"])
        q1t = Sac.q_forward(sac.target[0], "qf1_target", L, batch["next_obs"], next_a)
        q2t = Sac.q_forward(sac.target[1], "qf2_target", L, batch["next_obs"], next_a)
        min_next = torch.min(q1t, q2t) - alpha * next_lp
        y = batch["rewards"] + (1 - batch["terminated"]) * cfg["gamma"] * min_next
    q1 = Sac.q_forward(sac.q[0], "qf1", L, batch["obs"], batch["actions"])
    q2 = Sac.q_forward(sac.q[1], "qf2", L, batch["obs"], batch["actions"])
    qf1_loss = torch.nn.functional.mse_loss(q1, y)
    qf2_loss = torch.nn.functional.mse_loss(q2, y)
    qf_loss = qf1_loss + qf2_loss
    q_opt.zero_grad()
    qf_loss.backward()
    out["grads"] = {n: t.grad.detach().clone() for d in sac.q for n, t in d.items()}
    q_opt.step()
    out.update(qf1_loss=qf1_loss.item(), qf2_loss=qf2_loss.item(), qf_loss=qf_loss.item(),
               qf1_value=q1.mean().item(), qf2_value=q2.mean().item())

    pf = cfg["policy_frequency"]
    if step % pf == 0:
        for k in range(pf):
            pi, log_pi, _ = sac.get_action(batch["obs"], noise["actor"][k])
            q1_pi = Sac.q_forward(sac.q[0], "qf1", L, batch["obs"], pi)
            q2_pi = Sac.q_forward(sac.q[1], "qf2", L, batch["obs"], pi)
            actor_loss = (alpha * log_pi - torch.min(q1_pi, q2_pi)).mean()
            actor_opt.zero_grad()
            actor_loss.backward()
            actor_grads = {n: t.grad.detach().clone() for n, t in sac.actor.items()}
            actor_opt.step()
            out["actor_loss"] = actor_loss.item()
            out["entropy"] = -log_pi.mean().item()
            if cfg["autotune"]:
                with torch.no_grad():
                    _, log_pi, _ = sac.get_action(batch["obs"], noise["alpha"][k])
                alpha_loss = (-sac.log_alpha.exp() * (log_pi + cfg["target_entropy"])).mean()
                alpha_opt.zero_grad()
                alpha_loss.backward()
                alpha_opt.step()
                out["alpha_loss"] = alpha_loss.item()
            alpha = sac.alpha()
            out["alpha"] = alpha
        out["grads"].update(actor_grads)

    if step % cfg["target_frequency"] == 0:
        with torch.no_grad():
            for k, name in enumerate(("qf1", "qf2")):
                for n, t in sac.q[k].items():
                    target = sac.target[k][n.replace(name, name + "_target", 1)]
                    target.copy_(cfg["tau"] * t + (1 - cfg["tau"]) * target)
    return out


def generate_case(name, cfg):
    gen = torch.Generator().manual_seed(cfg["seed"])
    sac = Sac(cfg, gen)
    O, A, B, L = cfg["obs_size"], cfg["act_dim"], cfg["batch"], cfg["layers"]
    actor_names = mlp_names("actor", L, True)
    q_names = mlp_names("qf1", L, False) + mlp_names("qf2", L, False)
    target_names = mlp_names("qf1_target", L, False) + mlp_names("qf2_target", L, False)

    def all_tensors():
        d = dict(sac.actor)
        d.update(sac.q[0])
        d.update(sac.q[1])
        d.update(sac.target[0])
        d.update(sac.target[1])
        return d

    recs = []

    def rec(key, value):
        recs.append((key, fixture_values(value)))

    for k in ("obs_size", "act_dim", "hidden", "layers", "batch", "policy_lr", "q_lr", "alpha_lr",
              "gamma", "tau", "policy_frequency", "target_frequency", "autotune", "alpha",
              "log_alpha_init", "target_entropy", "act_low", "act_high"):
        rec(k, cfg[k])
    rec("steps", cfg["steps"])
    tensors = all_tensors()
    for n in actor_names + q_names + target_names:
        rec("init." + n, tensors[n])

    # one sampled and one deterministic action pass from the initial actor
    act_obs = f32(torch.randn((B, O), generator=gen, dtype=DT))
    act_noise = f32(torch.randn((B, A), generator=gen, dtype=DT))
    with torch.no_grad():
        a, lp, mean_action = sac.get_action(act_obs, act_noise)
        _, lp0, _ = sac.get_action(act_obs, torch.zeros_like(act_noise))
    rec("act.obs", act_obs)
    rec("act.noise", act_noise)
    rec("act.actions", a)
    rec("act.logp", lp)
    rec("act.mean_actions", mean_action)
    rec("act.mean_logp", lp0)

    q_params = [t for d in sac.q for t in d.values()]
    opts = (torch.optim.Adam(q_params, lr=cfg["q_lr"]),
            torch.optim.Adam(list(sac.actor.values()), lr=cfg["policy_lr"]),
            torch.optim.Adam([sac.log_alpha], lr=cfg["alpha_lr"]))
    low = torch.tensor(cfg["act_low"], dtype=DT)
    high = torch.tensor(cfg["act_high"], dtype=DT)
    pf = cfg["policy_frequency"]
    for i, step in enumerate(cfg["steps"]):
        terminated = (torch.rand(B, generator=gen, dtype=DT) < 0.3).to(DT)
        terminated[0], terminated[1] = 1.0, 0.0  # both kinds of row
        batch = dict(
            obs=f32(torch.randn((B, O), generator=gen, dtype=DT)),
            actions=f32(low + (high - low) * torch.rand((B, A), generator=gen, dtype=DT)),
            rewards=f32(torch.randn(B, generator=gen, dtype=DT)),
            terminated=terminated,
            next_obs=f32(torch.randn((B, O), generator=gen, dtype=DT)),
        )
        noise = dict(
            next=f32(torch.randn((B, A), generator=gen, dtype=DT)),
            actor=[f32(torch.randn((B, A), generator=gen, dtype=DT)) for _ in range(pf)],
            alpha=[f32(torch.randn((B, A), generator=gen, dtype=DT)) for _ in range(pf)],
        )
        out = run_step(sac, opts, step, batch, noise)
        p = f"s{i}."
        for k in ("obs", "actions", "rewards", "terminated", "next_obs"):
            rec(p + k, batch[k])
        rec(p + "noise.next", noise["next"])
        rec(p + "noise.actor", torch.cat(noise["actor"]))
        rec(p + "noise.alpha", torch.cat(noise["alpha"]))
        for k in ("qf1_loss", "qf2_loss", "qf_loss", "qf1_value", "qf2_value", "actor_loss",
                  "entropy", "alpha_loss", "alpha"):
            if k in out:
                rec(p + k, out[k])
        for n, g in out["grads"].items():
            rec(p + "grad." + n, g)
        tensors = all_tensors()
        for n in actor_names + q_names + target_names:
            rec(p + n, tensors[n])
        rec(p + "log_alpha", sac.log_alpha)
        print(f"{name} step {step}: " + ", ".join(
            f"{k}={out[k]:.6g}" for k in ("qf_loss", "actor_loss", "alpha") if k in out))

    header = [
        f"# SAC reference fixture {name} (generated by tests/reference/sac_reference.py, "
        f"torch {torch.__version__} float64, seed {cfg['seed']})",
        "# format: NAME COUNT v1 ... vCOUNT ; values '%.17g'",
    ]
    lines = header + [f"{k} {len(v)} " + " ".join("%.17g" % x for x in v) for k, v in recs]
    return "\n".join(lines) + "\n"


BASE = dict(policy_lr=3e-4, q_lr=1e-3, alpha_lr=1e-3, gamma=0.99, tau=0.005)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "fixtures")
    os.makedirs(out_dir, exist_ok=True)
    cases = [
        ("sac_case1", dict(BASE, seed=5, obs_size=4, act_dim=2, hidden=8, layers=2, batch=12,
                           act_low=[-1.0, -2.0], act_high=[1.0, 0.5], autotune=1, alpha=0.0,
                           log_alpha_init=-0.7, target_entropy=-2.0, policy_frequency=2,
                           target_frequency=1, steps=[1, 2])),
        ("sac_case2", dict(BASE, seed=6, obs_size=3, act_dim=1, hidden=16, layers=1, batch=10,
                           act_low=[-2.0], act_high=[2.0], autotune=0, alpha=0.2,
                           log_alpha_init=0.0, target_entropy=-1.0, policy_frequency=2,
                           target_frequency=2, steps=[2, 3])),
    ]
    for name, cfg in cases:
        text = generate_case(name, cfg)
        path = os.path.join(out_dir, name + ".txt")
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
