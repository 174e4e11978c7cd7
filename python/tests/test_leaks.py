"""No leak: resident memory and Python allocations stay flat over 1e5 steps
and 100 make/close cycles (each with views kept past close)."""

import gc
import tracemalloc

import numpy as np

import skinner


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def growth(work):
    """Python allocations and resident memory added by work(), after a warm-up
    run of it: (bytes traced by tracemalloc, KiB of RSS)."""
    work()
    gc.collect()
    tracemalloc.start()
    rss0 = rss_kib()
    snap0 = tracemalloc.take_snapshot()
    work()
    gc.collect()
    grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap0, "filename"))
    rss1 = rss_kib()
    tracemalloc.stop()
    return grown, rss1 - rss0


def steps(env, actions, n):
    for i in range(n):
        out = env.step(actions[i % len(actions)])
    return out


def test_steps_do_not_leak():
    with skinner.make("CartPole-v1", num_envs=64, seed=0) as env:
        env.reset()
        actions = np.random.default_rng(0).integers(0, 2, (16, 64)).astype(np.int32)
        grown, rss = growth(lambda: steps(env, actions, 100_000))
    # a leak of one small object per step would be >= 3 MB here
    assert grown < 64 * 1024, grown
    assert rss < 2048, rss


def test_make_close_cycles_do_not_leak():
    def cycle():
        env = skinner.make("CartPole-v1", num_envs=1024, threads=2, seed=1)
        obs, _ = env.reset()
        kept = env.step(np.zeros(1024, np.int32))[0]  # a view kept past close
        env.close()
        return float(kept.sum())

    grown, rss = growth(lambda: [cycle() for _ in range(100)])
    # each cycle allocates ~100 kB of buffers and a thread: a leak would be > 10 MB
    assert grown < 64 * 1024, grown
    assert rss < 4096, rss
