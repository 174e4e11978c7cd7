"""Independent PyTorch (float64) reference for skinner's recurrent layers (src/nn/rnn.c).

Produces two fixture files that tests/test_rnn.c parses:

  tests/fixtures/rnn_lstm.txt   torch.nn.LSTM(4, 6), one layer
  tests/fixtures/rnn_gru.txt    torch.nn.GRU(4, 6), one layer

Each runs a sequence of T = 5 steps of B = 3 rows step by step from a random initial state,
with episode resets: where resets[t][b] is 1 the state entering step t is zeroed for row b
(multiplied by 0, so no gradient flows through it), as skinner does. The loss is
sum(h * R) over every step's output h with a fixed random R, so dh = R. The fixture holds the
sizes, the module's parameters (its default initialisation under a fixed seed), x, h0, c0,
resets, R, the outputs h (and c), the loss and the gradients of every parameter, x, h0 and c0.

File format: one record per line, `NAME COUNT v1 ... vCOUNT`, values printed with '%.17g',
tensors flattened row-major; lines starting with '#' are comments. Parameter records are
named `param.<state-dict name>` and `grad.<state-dict name>`.

Regenerate (from the repository root; uses Debian's python, which has torch):

    /usr/bin/python3 tests/reference/rnn_reference.py [OUTPUT_DIR]

OUTPUT_DIR defaults to ../fixtures relative to this script. Output is deterministic. The script
also checks its autograd gradients against central finite differences.
"""

import os
import sys

import torch

DT = torch.float64
T, B, INPUT, HIDDEN = 5, 3, 4, 6
# (step, row) pairs where an episode starts: row 1 in mid-sequence, row 2 at the first step
# (so its h0 and c0 get no gradient), row 0 never.
RESETS = [(2, 1), (0, 2), (4, 2)]


def run_sequence(module, x, h0, c0, resets):
    """Every step's h (T, B, H) (and c for an LSTM), one module call per step."""
    is_lstm = isinstance(module, torch.nn.LSTM)
    h, c = h0, c0
    hs, cs = [], []
    for t in range(x.shape[0]):
        keep = (1.0 - resets[t]).unsqueeze(-1)
        h = h * keep
        if is_lstm:
            c = c * keep
            _, (h_next, c_next) = module(x[t:t + 1], (h.unsqueeze(0), c.unsqueeze(0)))
            c = c_next.squeeze(0)
            cs.append(c)
        else:
            _, h_next = module(x[t:t + 1], h.unsqueeze(0))
        h = h_next.squeeze(0)
        hs.append(h)
    return torch.stack(hs), (torch.stack(cs) if is_lstm else None)


def fixture_values(value):
    """A record's values as floats: a tensor (flattened), a list or one number."""
    if isinstance(value, torch.Tensor):
        value = value.detach().reshape(-1).tolist()
    elif not isinstance(value, (list, tuple)):
        value = [value]
    return [float(v) for v in value]


def check_finite_differences(loss, tensors, grads, eps=1e-6, rtol=1e-6, atol=1e-9):
    """Central differences of loss() for every entry of tensors (changed in place and put
    back) against autograd's grads."""
    worst = 0.0
    checked = 0
    with torch.no_grad():
        for tensor, grad in zip(tensors, grads):
            flat, grad_flat = tensor.view(-1), grad.view(-1)
            for j in range(flat.numel()):
                orig = flat[j].item()
                flat[j] = orig + eps
                up = loss()
                flat[j] = orig - eps
                down = loss()
                flat[j] = orig
                numeric, analytic = (up - down) / (2 * eps), grad_flat[j].item()
                err = abs(numeric - analytic)
                assert err <= rtol * max(abs(numeric), abs(analytic)) + atol, \
                    f"entry {j}: autograd {analytic!r}, finite differences {numeric!r}"
                worst = max(worst, err / max(abs(analytic), 1e-3))
                checked += 1
    return checked, worst


def generate_case(name, module_type, seed):
    torch.manual_seed(seed)
    module = module_type(INPUT, HIDDEN).to(DT)  # default init: uniform(+-1/sqrt(H))
    gen = torch.Generator().manual_seed(seed + 1000)
    x = torch.randn((T, B, INPUT), generator=gen, dtype=DT)
    h0 = 0.5 * torch.randn((B, HIDDEN), generator=gen, dtype=DT)
    c0 = 0.5 * torch.randn((B, HIDDEN), generator=gen, dtype=DT)
    weights = torch.randn((T, B, HIDDEN), generator=gen, dtype=DT)  # R
    resets = torch.zeros((T, B), dtype=DT)
    for t, b in RESETS:
        resets[t, b] = 1.0
    is_lstm = module_type is torch.nn.LSTM
    if not is_lstm:
        c0 = None  # a GRU has no cell state

    names = [n for n, _ in module.named_parameters()]
    assert names == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"], names

    inputs = [t for t in (x, h0, c0) if t is not None]
    leaves = [t.clone().requires_grad_(True) for t in inputs]
    params = list(module.parameters())
    hs, cs = run_sequence(module, leaves[0], leaves[1], leaves[2] if is_lstm else None, resets)
    loss = (hs * weights).sum()
    loss.backward()
    checked, worst = check_finite_differences(
        lambda: (run_sequence(module, x, h0, c0, resets)[0] * weights).sum().item(),
        [*params, *inputs], [*(p.grad for p in params), *(t.grad for t in leaves)])
    for b in {b for t, b in RESETS if t == 0}:
        assert leaves[1].grad[b].abs().max() == 0.0, "a reset at step 0 must stop dh0"

    recs = []

    def rec(key, value):
        recs.append((key, fixture_values(value)))

    rec("steps", T)
    rec("rows", B)
    rec("input_size", INPUT)
    rec("hidden_size", HIDDEN)
    for n, p in zip(names, params):
        rec("param." + n, p)
    rec("x", x)
    rec("h0", h0)
    if is_lstm:
        rec("c0", c0)
    rec("resets", resets)
    rec("dh", weights)
    rec("h", hs)
    if is_lstm:
        rec("c", cs)
    rec("loss", loss.item())
    for n, p in zip(names, params):
        rec("grad." + n, p.grad)
    rec("grad.x", leaves[0].grad)
    rec("grad.h0", leaves[1].grad)
    if is_lstm:
        rec("grad.c0", leaves[2].grad)

    header = [
        f"# {module_type.__name__}({INPUT}, {HIDDEN}) reference fixture {name} (generated by "
        f"tests/reference/rnn_reference.py, torch {torch.__version__} float64, seed {seed})",
        "# format: NAME COUNT v1 ... vCOUNT ; values '%.17g'",
    ]
    lines = header + [f"{k} {len(v)} " + " ".join("%.17g" % x for x in v) for k, v in recs]
    print(f"{name}: loss={loss.item()!r}; autograd agrees with finite differences on "
          f"{checked} entries (worst relative error {worst:.1e})")
    return "\n".join(lines) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "fixtures")
    os.makedirs(out_dir, exist_ok=True)
    for name, module_type, seed in (("rnn_lstm", torch.nn.LSTM, 7), ("rnn_gru", torch.nn.GRU, 8)):
        path = os.path.join(out_dir, name + ".txt")
        with open(path, "w") as f:
            f.write(generate_case(name, module_type, seed))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
