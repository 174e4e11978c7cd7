"""Two threads stepping one VecEnv: one step at a time. A step whose actions
are still being converted (an object whose __array__ takes time and releases
the GIL) holds the env: the other thread gets RuntimeError and changes
nothing, and every step that runs sees exactly its own actions."""

import threading
import time

import numpy as np

import skinner

NUM_ENVS = 64
CHOICES = 1000


class Echo:
    """obs = the action just taken, so a step's observations say which actions it ran."""

    single_observation_space = skinner.spaces.Box(0, CHOICES, (1,), np.float32)
    single_action_space = skinner.spaces.Discrete(CHOICES)

    def __init__(self, num_envs):
        self.num_envs = num_envs

    def reset(self, seed, mask=None):
        return np.zeros((self.num_envs, 1), np.float32)

    def step(self, actions):
        zeros = np.zeros(self.num_envs, bool)
        return (actions[:, None].astype(np.float32), np.zeros(self.num_envs, np.float32), zeros,
                zeros)


if "Echo-v0" not in skinner.envs():
    skinner.register("Echo-v0", Echo)


def actions_of(base):
    """A distinct action per env, all of them telling `base` apart from other bases."""
    return ((base * 7 + np.arange(NUM_ENVS)) % CHOICES).astype(np.int64)


class WaitingActions:
    """Actions whose conversion blocks (GIL released) until `release` is set."""

    def __init__(self, values, converting, release):
        self.values, self.converting, self.release = values, converting, release

    def __array__(self, dtype=None, copy=None):
        self.converting.set()
        assert self.release.wait(10), "the other thread never tried its step"
        return self.values if dtype is None else self.values.astype(dtype)


def test_a_step_converting_its_actions_holds_the_env():
    env = skinner.make("Echo-v0", num_envs=NUM_ENVS, seed=1, copy=True)
    env.reset()
    rounds, results, failures = 5, [], []
    barrier = threading.Barrier(2, timeout=10)
    converting, release = threading.Event(), threading.Event()

    def slow_thread():
        try:
            for k in range(rounds):
                barrier.wait()  # the round starts
                obs = env.step(WaitingActions(actions_of(k), converting, release))[0]
                results.append(("slow", k, obs[:, 0].copy()))
                barrier.wait()  # the round is over
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            failures.append(e)
            barrier.abort()

    thread = threading.Thread(target=slow_thread)
    thread.start()
    try:
        for k in range(rounds):
            barrier.wait()
            assert converting.wait(10)
            try:  # the other thread is inside its step, converting its actions
                obs = env.step(actions_of(100 + k))[0]
                results.append(("fast", k, obs[:, 0].copy()))
            except RuntimeError as e:
                results.append(("refused", k, str(e)))
            release.set()
            barrier.wait()
            converting.clear()
            release.clear()
    finally:
        release.set()
        thread.join(10)
    assert not failures, failures
    for k in range(rounds):
        mine = {r[0]: r[2] for r in results if r[1] == k}
        # the second caller was refused, naming why, and did not step
        assert "refused" in mine, (k, sorted(mine))
        assert "another thread" in mine["refused"]
        # the step that held the env ran its own actions, not the refused ones
        np.testing.assert_array_equal(mine["slow"], actions_of(k))
    env.close()


def test_free_running_threads_each_see_their_own_actions():
    env = skinner.make("Echo-v0", num_envs=NUM_ENVS, seed=1, copy=True)
    env.reset()
    slow_steps, stop = 40, threading.Event()
    seen = {"slow": [], "fast": []}
    refused = {"slow": 0, "fast": 0}
    failures = []

    class SlowActions:
        def __init__(self, values):
            self.values = values

        def __array__(self, dtype=None, copy=None):
            time.sleep(0.002)  # releases the GIL mid-conversion
            return self.values if dtype is None else self.values.astype(dtype)

    def run(name, make_actions, count):
        try:
            k = 0
            while (k < count) if count else not stop.is_set():
                base = (k % 50) + (0 if name == "slow" else 50)
                try:
                    obs = env.step(make_actions(actions_of(base)))[0]
                    seen[name].append((base, obs[:, 0].copy()))
                except RuntimeError:
                    refused[name] += 1
                k += 1
                if name == "slow":
                    time.sleep(0.001)  # lets the other thread in between its steps
        except BaseException as e:  # noqa: BLE001 - reported below
            failures.append(e)

    fast = threading.Thread(target=run, args=("fast", lambda a: a, 0))
    fast.start()
    run("slow", SlowActions, slow_steps)
    stop.set()
    fast.join(10)
    assert not failures, failures
    for name in ("slow", "fast"):
        wrong = [base for base, obs in seen[name] if not np.array_equal(obs, actions_of(base))]
        assert not wrong, f"{len(wrong)} of {len(seen[name])} {name} steps saw other actions"
    assert len(seen["slow"]) + refused["slow"] == slow_steps
    assert seen["slow"] and seen["fast"], (len(seen["slow"]), len(seen["fast"]), refused)
    env.close()
