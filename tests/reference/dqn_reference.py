"""Independent PyTorch (float64) reference for one DQN update (CleanRL dqn.py semantics:
mean squared TD error, Adam), with masked targets, double DQN and n-step returns.

Writes three fixtures that tests/test_dqn_torch.c parses:

  tests/fixtures/dqn_plain.txt    one-step targets, max over the legal next actions
  tests/fixtures/dqn_double.txt   one-step, double DQN (online argmax, target's value)
  tests/fixtures/dqn_nstep.txt    3-step returns, stopping at terminations and cutting
                                  at truncations (bootstrapping from the final observation)

Each holds a small replay buffer (a full ring of `capacity` transitions added `streams` at
a time, stream i's next transition `streams` slots on), the sampled slots, the online and
target Q networks' weights (Linear -> ReLU -> Linear -> ReLU -> Linear, torch's (out, in)
layout, named as skinner's actor net), and after one Adam step on the batch: the loss, the mean
Q(s, a) of the batch (learner.csv's q_value), the gradients and the new weights.

File format: one record per line, `NAME COUNT v1 ... vCOUNT` ('%.17g'); '#' lines are
comments.

Regenerate (from the repository root; Debian's python has torch):

    /usr/bin/python3 tests/reference/dqn_reference.py [OUTPUT_DIR]
"""

import os
import sys

import torch

torch.set_default_dtype(torch.float64)

OBS, HIDDEN, ACTIONS = 4, 8, 3
CAPACITY, STREAMS, BATCH = 12, 2, 8
GAMMA, LR, ADAM_EPS = 0.9, 0.01, 1e-8
NAMES = ["actor.0.weight", "actor.0.bias", "actor.1.weight", "actor.1.bias",
         "actor.2.weight", "actor.2.bias"]


def qnet(gen):
    sizes = [(HIDDEN, OBS), (HIDDEN, HIDDEN), (ACTIONS, HIDDEN)]
    params = []
    for rows, cols in sizes:
        params.append((torch.rand(rows, cols, generator=gen) - 0.5) * 2.0 / cols ** 0.5)
        params.append((torch.rand(rows, generator=gen) - 0.5) * 0.2)
    return [p.clone().requires_grad_(True) for p in params]


def forward(params, x):
    w0, b0, w1, b1, w2, b2 = params
    h = torch.relu(x @ w0.T + b0)
    h = torch.relu(h @ w1.T + b1)
    return h @ w2.T + b2


def nstep(buf, slot, n):
    """The n-step return from slot along its stream, the bootstrap's discount and the slot
    whose next observation it reads."""
    ret, scale = 0.0, 1.0
    for k in range(n):
        at = (slot + k * STREAMS) % CAPACITY
        ret += scale * float(buf["rewards"][at])
        scale *= GAMMA
        if buf["terminated"][at]:
            return ret, 0.0, at
        if buf["truncated"][at]:
            return ret, scale, at
        last = at
    return ret, scale, last


def make_case(seed, double_q, n_step):
    gen = torch.Generator().manual_seed(seed)
    buf = {
        "obs": torch.randn(CAPACITY, OBS, generator=gen),
        "next_obs": torch.randn(CAPACITY, OBS, generator=gen),
        "actions": torch.randint(0, ACTIONS, (CAPACITY,), generator=gen),
        "rewards": torch.randn(CAPACITY, generator=gen),
        "terminated": (torch.rand(CAPACITY, generator=gen) < 0.2).long(),
        "truncated": (torch.rand(CAPACITY, generator=gen) < 0.15).long(),
        "next_masks": (torch.rand(CAPACITY, ACTIONS, generator=gen) < 0.7).long(),
    }
    buf["truncated"] *= 1 - buf["terminated"]
    for i in range(CAPACITY):  # at least one legal action
        if buf["next_masks"][i].sum() == 0:
            buf["next_masks"][i, i % ACTIONS] = 1
    pos = 4  # the ring is full; the oldest transition is at pos
    sampleable = CAPACITY - (n_step - 1) * STREAMS
    slots = [(pos + int(j)) % CAPACITY
             for j in torch.randint(0, sampleable, (BATCH,), generator=gen)]
    online, target = qnet(gen), qnet(gen)

    returns, discounts, lasts = zip(*(nstep(buf, s, n_step) for s in slots))
    returns, discounts = torch.tensor(returns), torch.tensor(discounts)
    lasts = list(lasts)
    obs, next_obs = buf["obs"][slots], buf["next_obs"][lasts]
    masks = buf["next_masks"][lasts].bool()
    with torch.no_grad():
        q_target = forward(target, next_obs)
        if double_q:
            q_online_next = forward(online, next_obs).masked_fill(~masks, -float("inf"))
            next_value = q_target.gather(1, q_online_next.argmax(1, keepdim=True)).squeeze(1)
        else:
            next_value = q_target.masked_fill(~masks, -float("inf")).max(1).values
        y = returns + discounts * next_value
    q = forward(online, obs).gather(1, buf["actions"][slots].unsqueeze(1)).squeeze(1)
    loss = torch.nn.functional.mse_loss(q, y)
    optimizer = torch.optim.Adam(online, lr=LR, eps=ADAM_EPS)
    optimizer.zero_grad()
    loss.backward()
    grads = [p.grad.detach().clone() for p in online]
    init = [p.detach().clone() for p in online]
    optimizer.step()

    out = []

    def put(name, values):
        flat = [float(v) for v in torch.as_tensor(values).reshape(-1)]
        out.append("%s %d %s" % (name, len(flat), " ".join("%.17g" % v for v in flat)))

    for key, value in [("obs_size", OBS), ("hidden", HIDDEN), ("actions", ACTIONS),
                       ("capacity", CAPACITY), ("streams", STREAMS), ("batch", BATCH),
                       ("pos", pos), ("gamma", GAMMA), ("lr", LR), ("adam_eps", ADAM_EPS),
                       ("double", int(double_q)), ("n_step", n_step)]:
        put(key, [value])
    for key in ["obs", "next_obs", "actions", "rewards", "terminated", "truncated",
                "next_masks"]:
        put("replay." + key, buf[key])
    put("slots", slots)
    for name, value in zip(NAMES, init):
        put("init." + name, value)
    for name, value in zip(NAMES, target):
        put("target." + name, value.detach())
    put("loss", [loss.item()])
    put("q_taken", [q.mean().item()])
    for name, value in zip(NAMES, grads):
        put("grad." + name, value)
    for name, value in zip(NAMES, online):
        put("new." + name, value.detach())
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "fixtures")
    cases = [("dqn_plain", 11, False, 1), ("dqn_double", 12, True, 1), ("dqn_nstep", 13, False, 3)]
    for name, seed, double_q, n_step in cases:
        lines = ["# %s: written by tests/reference/dqn_reference.py (PyTorch %s, float64)"
                 % (name, torch.__version__)]
        lines += make_case(seed, double_q, n_step)
        with open(os.path.join(out_dir, name + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
