"""Independent PyTorch (float64) reference for skinner's knowledge-graph embeddings (src/kge/kge.c).

Produces three fixture files that tests/test_kge.c parses:

  tests/fixtures/kge_transe.txt    TransE:  score = gamma - sum_j |h_j + r_j - t_j|
  tests/fixtures/kge_complex.txt   ComplEx: score = sum_j Re(h_j r_j conj(t_j))
  tests/fixtures/kge_rotate.txt    RotatE:  score = gamma - sum_j |h_j r_j - t_j|,
                                            r_j = cos(theta_j) + i sin(theta_j)

The scores are the textbook ones, written here directly on (h, r, t), not through the query
vectors of src/kge/kge.h: the C test checks that the header's formulation gives the same values.
The parameters live in one arena laid out as in kge.h: E entity rows, then R relation rows.
An entity row holds dim floats (TransE) or dim real parts then dim imaginary parts (ComplEx,
RotatE); a relation row holds dim floats (TransE), dim real then dim imaginary parts (ComplEx)
or dim phases (RotatE).

Each case has E = 7 entities, R = 3 relations, dim = 5, a batch of B = 4 positive triples and
N = 3 negative entities shared by the batch, and DeepProofLog's negative-sampling loss

    loss = 1/B sum_b [ -log sigmoid(s_b) - 1/N sum_k log sigmoid(-s_bk) ]

with s_b = score(h_b, r_b, t_b) and s_bk = score(h_b, r_b, neg_k) on the tail side or
score(neg_k, r_b, t_b) on the head side; and the same with RotatE's self-adversarial weights
(Sun et al. 2019) in place of 1/N, at temperature T = ADV_TEMPERATURE:

    loss = 1/B sum_b [ -log sigmoid(s_b) - sum_k w_bk log sigmoid(-s_bk) ],
    w_bk = softmax_k(T s_bk), detached (a constant: no gradient flows through it). The batch repeats entities and relations (gradients
accumulate), holds a triple whose head is its tail, has negatives equal to positives' own
entities on both sides, and leaves entity 6 and relation 2 untouched (zero gradient).
Parameters are uniform in [-1, 1) (phases in [-pi, pi)), rounded to float32 so that the C test
reads exactly the values used here.

File format: one record per line, `NAME COUNT v1 ... vCOUNT`, values printed with '%.17g';
lines starting with '#' are comments. Records:

  sizes 6          E R dim gamma B N
  params P         the arena (P = E * entity_width + R * relation_width)
  triples 3B       h r t of each positive, b-major
  negatives N      the negative entities
  then for each side S in tail, head:
  S.scores_pos B   s_b
  S.scores_neg BN  s_bk, b-major
  S.loss 1         the loss
  S.grad P         d loss / d arena
  adversarial 1    T
  then for each side S in tail, head:
  S.adv_loss 1     the self-adversarial loss
  S.adv_grad P     its gradient (the weights held constant)

Regenerate (from the repository root; uses Debian's python, which has torch):

    /usr/bin/python3 tests/reference/kge_reference.py [OUTPUT_DIR]

OUTPUT_DIR defaults to ../fixtures relative to this script. Output is deterministic. The script
also checks its autograd gradients against central finite differences, and that no L1 term or
complex modulus of TransE and RotatE is near its kink at 0 (so finite differences in the C test
with steps of 1e-3 stay on one side of it).
"""

import math
import os
import sys

import torch

from rnn_reference import check_finite_differences, fixture_values

DT = torch.float64
E, R, DIM, GAMMA = 7, 3, 5, 6.0
TRIPLES = [(0, 0, 1), (2, 1, 0), (3, 0, 3), (1, 1, 4)]  # (h, r, t); (3, 0, 3): head = tail
NEGATIVES = [4, 5, 0]  # 4: b3's tail (tail side), 0: b1's tail and b0's head (both sides)
ADV_TEMPERATURE = 1.0
KINK_MARGIN = 0.02  # smallest |h_j + r_j - t_j| (TransE) or |h_j r_j - t_j| (RotatE) allowed

# name: (entity_width, relation_width, seed)
MODELS = {
    "transe": (DIM, DIM, 21),  # seeds with every term clear of KINK_MARGIN
    "complex": (2 * DIM, 2 * DIM, 12),
    "rotate": (2 * DIM, DIM, 13),
}


def tables(model, arena):
    ew, rw, _ = MODELS[model]
    return arena[:E * ew].view(E, ew), arena[E * ew:].view(R, rw)


def split(x):
    """Real and imaginary parts of rows of dim complex numbers."""
    return x[..., :DIM], x[..., DIM:]


def terms(model, h, r, t):
    """The per-dimension terms whose sum (or gamma minus it) is the score, (..., dim)."""
    if model == "transe":
        return (h + r - t).abs()
    if model == "rotate":
        h_re, h_im = split(h)
        t_re, t_im = split(t)
        r_re, r_im = torch.cos(r), torch.sin(r)
        d_re = h_re * r_re - h_im * r_im - t_re
        d_im = h_re * r_im + h_im * r_re - t_im
        return torch.sqrt(d_re * d_re + d_im * d_im)
    h_re, h_im = split(h)
    r_re, r_im = split(r)
    t_re, t_im = split(t)
    hr_re = h_re * r_re - h_im * r_im
    hr_im = h_re * r_im + h_im * r_re
    return hr_re * t_re + hr_im * t_im  # Re((hr) conj(t))


def score(model, h, r, t):
    s = terms(model, h, r, t).sum(-1)
    return s if model == "complex" else GAMMA - s


def scores(model, arena, side):
    """s_b (B) and s_bk (B, N) from the textbook scores."""
    ent, rel = tables(model, arena)
    idx = torch.tensor(TRIPLES)
    neg = torch.tensor(NEGATIVES)
    h, r, t = ent[idx[:, 0]], rel[idx[:, 1]], ent[idx[:, 2]]
    pos = score(model, h, r, t)
    n = ent[neg].unsqueeze(0)  # (1, N, w)
    if side == "tail":
        negs = score(model, h.unsqueeze(1), r.unsqueeze(1), n)
    else:
        negs = score(model, n, r.unsqueeze(1), t.unsqueeze(1))
    return pos, negs


def loss_of(pos, negs):
    logsig = torch.nn.functional.logsigmoid
    return (-logsig(pos) - logsig(-negs).mean(1)).mean()


def adversarial_weights(negs):
    return torch.softmax(ADV_TEMPERATURE * negs.detach(), dim=1)


def adversarial_loss_of(pos, negs, weights):
    logsig = torch.nn.functional.logsigmoid
    return (-logsig(pos) - (weights * logsig(-negs)).sum(1)).mean()


def check_kinks(model, arena):
    """The smallest L1 term or modulus over every triple the C test scores (either side)."""
    if model == "complex":
        return
    ent, rel = tables(model, arena)
    smallest = math.inf
    for h, r, t in TRIPLES:
        for hh, tt in [(h, t)] + [(h, k) for k in NEGATIVES] + [(k, t) for k in NEGATIVES]:
            smallest = min(smallest, terms(model, ent[hh], rel[r], ent[tt]).min().item())
    assert smallest > KINK_MARGIN, f"{model}: a term is {smallest} from its kink; change the seed"


def generate_case(model):
    ew, rw, seed = MODELS[model]
    gen = torch.Generator().manual_seed(seed)
    entities = 2.0 * torch.rand((E, ew), generator=gen, dtype=DT) - 1.0
    if model == "rotate":
        relations = (2.0 * torch.rand((R, rw), generator=gen, dtype=DT) - 1.0) * math.pi
    else:
        relations = 2.0 * torch.rand((R, rw), generator=gen, dtype=DT) - 1.0
    arena = torch.cat([entities.reshape(-1), relations.reshape(-1)])
    arena = arena.to(torch.float32).to(DT)  # exactly what the C test reads
    if model == "rotate":
        assert arena[E * ew:].min() >= -math.pi and arena[E * ew:].max() < math.pi
    check_kinks(model, arena)

    recs = []

    def rec(key, value):
        recs.append((key, fixture_values(value)))

    rec("sizes", [E, R, DIM, GAMMA, len(TRIPLES), len(NEGATIVES)])
    rec("params", arena)
    rec("triples", [i for triple in TRIPLES for i in triple])
    rec("negatives", NEGATIVES)
    report = []
    for side in ("tail", "head"):
        leaf = arena.clone().requires_grad_(True)
        pos, negs = scores(model, leaf, side)
        loss = loss_of(pos, negs)
        loss.backward()
        _, worst = check_finite_differences(lambda: loss_of(*scores(model, arena, side)).item(),
                                            [arena], [leaf.grad])
        ent_grad, rel_grad = tables(model, leaf.grad)
        assert ent_grad[6].abs().max() == 0.0 and rel_grad[2].abs().max() == 0.0
        rec(side + ".scores_pos", pos)
        rec(side + ".scores_neg", negs)
        rec(side + ".loss", loss.item())
        rec(side + ".grad", leaf.grad)
        report.append(f"{side} loss={loss.item():.6f} (finite differences: worst {worst:.1e})")
    rec("adversarial", [ADV_TEMPERATURE])
    for side in ("tail", "head"):
        leaf = arena.clone().requires_grad_(True)
        pos, negs = scores(model, leaf, side)
        weights = adversarial_weights(negs)
        assert (weights.max(1).values - weights.min(1).values).min() > 0.05, "weights near 1/N"
        loss = adversarial_loss_of(pos, negs, weights)
        loss.backward()
        # the gradient is that of the loss with the weights frozen at these parameters
        _, worst = check_finite_differences(
            lambda: adversarial_loss_of(*scores(model, arena, side), weights).item(), [arena],
            [leaf.grad])
        rec(side + ".adv_loss", loss.item())
        rec(side + ".adv_grad", leaf.grad)
        report.append(f"{side} adversarial loss={loss.item():.6f} (worst {worst:.1e})")

    header = [
        f"# {model} reference fixture kge_{model} (generated by tests/reference/kge_reference.py, "
        f"torch {torch.__version__} float64, seed {seed})",
        "# format: NAME COUNT v1 ... vCOUNT ; values '%.17g'",
    ]
    lines = header + [f"{k} {len(v)} " + " ".join("%.17g" % x for x in v) for k, v in recs]
    print(f"kge_{model}: " + "; ".join(report))
    return "\n".join(lines) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "fixtures")
    os.makedirs(out_dir, exist_ok=True)
    for model in MODELS:
        path = os.path.join(out_dir, f"kge_{model}.txt")
        with open(path, "w") as f:
            f.write(generate_case(model))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
