"""skinner: reinforcement learning at hardware speed, in C, driven from Python.

The hot loop stays in C: a vector env steps all its envs in C with the GIL
released, and Python sees NumPy views of skinner's own buffers (no copy).

    import numpy as np, skinner
    with skinner.make("CartPole-v1", num_envs=4096, seed=1) as env:
        obs, infos = env.reset()
        for _ in range(100):
            obs, rewards, terminations, truncations, infos = env.step(
                np.random.randint(0, 2, env.num_envs))

docs/python.md has the whole API, the buffer lifetime rules and the autoreset
convention (Gymnasium's same-step mode). Multi-agent envs (docs/multiagent.md): make
gives one row per (env, agent); parallel_env gives PettingZoo's Parallel API.
"""

import json
import math
import os
import signal
import threading

import numpy as np

from . import _core
from ._paths import CONFIG_DIRS

__version__ = _core.__version__

try:  # Gymnasium's spaces when it is there, skinner's own otherwise
    from gymnasium import spaces as _spaces

    HAVE_GYMNASIUM = True
except ImportError:  # pragma: no cover - depends on the machine
    from . import spaces as _spaces

    HAVE_GYMNASIUM = False
try:  # Gymnasium's autoreset mode enum (1.x), where Gymnasium has it
    from gymnasium.vector import AutoresetMode

    _SAME_STEP = AutoresetMode.SAME_STEP
except ImportError:  # pragma: no cover - depends on the machine
    _SAME_STEP = "SameStep"

__all__ = ["make", "gym_env", "GymEnv", "parallel_env", "ParallelEnv", "register", "train", "kge_train", "load", "evaluate", "bench", "envs", "describe",
           "check_env", "EnvCheckError",
           "VecEnv", "Policy", "spaces", "HAVE_GYMNASIUM", "__version__"]

from . import spaces  # noqa: E402  (skinner's own classes, always importable)
from .sweep import sweep  # noqa: E402  (skinner sweep, run as the program: docs/sweeps.md)
from .parallel import ParallelEnv  # noqa: E402  (PettingZoo's Parallel API: docs/multiagent.md)
from .single_env import GymEnv  # noqa: E402  (one env in Gymnasium's single-env API: docs/python.md)
from .gym_adapter import from_gymnasium  # noqa: E402  (single Gymnasium envs you have: docs/python.md)

__all__ += ["sweep", "from_gymnasium"]


def _value_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise TypeError(f"config value {value!r} must be a str, int, float, bool or path")


def _pairs(config, section=None):
    """(key, value) strings from a flat {"ppo.learning_rate": 1e-3} or nested
    {"ppo": {"learning_rate": 1e-3}} dict; bare keys go to `section`."""
    pairs = []
    for key, value in (config or {}).items():
        if isinstance(value, dict):
            pairs += [(f"{key}.{k}", _value_text(v)) for k, v in value.items()]
        elif "." in key or section is None:
            pairs.append((key, _value_text(value)))
        else:
            pairs.append((f"{section}.{key}", _value_text(value)))
    return pairs


def describe(env_id):
    """The env's spaces, limits and names, as a dict."""
    return _core.describe(env_id)


def envs():
    """The registered env ids (built-in, modules, plugins, Python-defined)."""
    return _core.env_ids()


def _env_pairs(config):
    pairs = _pairs(config, "env")
    for key, _ in pairs:
        if not key.startswith("env."):
            raise ValueError(f"'{key}' is not an env key: an env takes env.* keys (give them "
                             "without the prefix: dataset=...); the trainer's keys go to "
                             "skinner.train")
    return pairs


def _obs_bounds(d):
    """The env's declared observation Box (its obs_low/obs_high) in its shape and dtype
    (uint8 images: (H, W, C)), else unbounded (uint8: 0..255)."""
    shape = tuple(d.get("obs_shape") or (d["obs_size"],))
    if d.get("obs_dtype") == "uint8":
        if d.get("obs_low") is None:
            return np.zeros(shape, np.uint8), np.full(shape, 255, np.uint8), np.uint8
        return (np.array(d["obs_low"], np.uint8).reshape(shape),
                np.array(d["obs_high"], np.uint8).reshape(shape), np.uint8)
    if d.get("obs_low") is None:
        return np.full(shape, -np.inf, np.float32), np.full(shape, np.inf, np.float32), np.float32
    return (np.array(d["obs_low"], np.float32).reshape(shape),
            np.array(d["obs_high"], np.float32).reshape(shape), np.float32)


def _single_spaces(d):
    low, high, dtype = _obs_bounds(d)
    obs = _spaces.Box(low, high, dtype=dtype)
    if d["kind"] == "continuous":
        act = _spaces.Box(np.array(d["low"], np.float32), np.array(d["high"], np.float32),
                          dtype=np.float32)
    elif len(d["heads"]) == 1:
        act = _spaces.Discrete(d["heads"][0])
    else:
        act = _spaces.MultiDiscrete(np.array(d["heads"], np.int64))
    return obs, act


def _batch_spaces(d, n):
    low, high, dtype = _obs_bounds(d)
    tiles = (n,) + (1,) * low.ndim
    obs = _spaces.Box(np.tile(low, tiles), np.tile(high, tiles), dtype=dtype)
    if d["kind"] == "continuous":
        act = _spaces.Box(np.tile(np.array(d["low"], np.float32), (n, 1)),
                          np.tile(np.array(d["high"], np.float32), (n, 1)), dtype=np.float32)
    elif len(d["heads"]) == 1:
        act = _spaces.MultiDiscrete(np.full(n, d["heads"][0], np.int64))
    else:
        act = _spaces.MultiDiscrete(np.tile(np.array(d["heads"], np.int64), (n, 1)))
    return obs, act


class VecEnv(_core.Vec):
    """num_envs envs of one kind, stepped in C, with Gymnasium 1.x's vector-env
    API and same-step autoreset. Make it with skinner.make.

    A multi-agent env (num_agents > 1) has one row per (env, agent), row = env *
    num_agents + agent: every array is (num_rows, ...), `active` says which rows' agents
    act at the next step, and agent_names names the agents of one env.

    step() and reset() return NumPy arrays that view skinner's buffers: they
    stay valid, and are overwritten in place, until the next step() or reset()
    (make(copy=True) gives fresh arrays instead). `actions` is the action
    buffer itself: fill it and pass it to step() to skip the copy.
    """

    render_mode = None

    def __init__(self, env_id, num_envs=1, threads=1, seed=None, copy=False, config=None,
                 render_mode=None):
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode={render_mode!r} (expected None or 'rgb_array')")
        self.render_mode = render_mode
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        super().__init__(env_id, num_envs, threads, seed, _env_pairs(config), copy)
        d = self._describe()  # the sizes this config gives the env
        self.spec_info = d
        self.max_episode_steps = d["max_episode_steps"]
        self.reward_threshold = d["reward_threshold"]
        self.single_observation_space, self.single_action_space = _single_spaces(d)
        self.observation_space, self.action_space = _batch_spaces(d, self.num_rows)
        self.agent_names = list(d["agent_names"])
        self.metadata = {"autoreset_mode": _SAME_STEP}

    def render(self):
        """With render_mode="rgb_array": each env's picture as drawn now, a tuple of
        (height, width, 3) uint8 arrays (Gymnasium's vector envs' form); None otherwise."""
        if self.render_mode != "rgb_array":
            return None
        return tuple(self._render(i) for i in range(self.num_envs))

    @property
    def unwrapped(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        state = "closed" if self.closed else f"num_envs={self.num_envs}"
        return f"skinner.VecEnv({self.env_id!r}, {state})"


def make(env_id, num_envs=1, threads=1, seed=None, copy=False, render_mode=None, **config):
    """A vector env of num_envs copies of env_id: a built-in id or alias
    ("CartPole-v1", "cartpole"), a plugin ("./libmyenv.so:MyEnv-v0") or a
    Python-defined env (skinner.register). num_envs: 1..2**24, the CLI's cap.
    threads: worker threads stepping
    slices of the envs (0: one per core; Python-defined envs step on one).
    seed: the first reset's seed, in [0, 2**64) (None: random). config: the env's keys
    (dataset="...", precision="float32"), with or without "env.". render_mode="rgb_array":
    render() gives each env's picture (the env's render: classic control and MinAtar).
    """
    return VecEnv(env_id, num_envs=num_envs, threads=threads, seed=seed, copy=copy,
                  config=config, render_mode=render_mode)


def gym_env(env_id, seed=None, render_mode=None, **config):
    """One env of env_id in Gymnasium's single-env API (a GymEnv, a gymnasium.Env when
    Gymnasium is importable): reset(seed=None) -> (obs, info), step(action) -> (obs, reward,
    terminated, truncated, info), the ending observation on the step an episode ends. config:
    the env's keys, as make takes them."""
    return GymEnv(env_id, seed=seed, render_mode=render_mode, **config)


def parallel_env(env_id, seed=None, copy=False, render_mode=None, **config):
    """One env of a multi-agent id in PettingZoo's Parallel API (a ParallelEnv): dicts
    keyed by agent name, agents, possible_agents, observation_space(agent),
    action_space(agent); its `batch` is the VecEnv of rows it steps. config: the env's
    keys, as make takes them."""
    return ParallelEnv(env_id, seed=seed, copy=copy, render_mode=render_mode, **config)


def register(env_id, cls, max_episode_steps=None, reward_threshold=None, kwargs=None,
             observation_space=None, action_space=None, num_agents=None, agent_names=None):
    """Registers a batched env written in Python (NumPy), so that make, train,
    evaluate and bench use it like a built-in.

    cls(num_envs, **kwargs) must give an object with
        reset(seed, mask=None) -> obs            (num_envs, obs_size) float, or
                                                 (num_envs, H, W, C) uint8 for an image
        step(actions) -> (obs, rewards, terminations, truncations)
    and the spaces of one env as single_observation_space (a 1-D Box, or a uint8
    Box of an image's shape (H, W, C), kept as bytes until the policy reads it) and
    single_action_space (Discrete, MultiDiscrete or a 1-D Box), on the class
    or given here. skinner calls step once per batch step; it applies the
    time limit (max_episode_steps), autoresets ended envs by calling
    reset(None, mask) with the rows to reset, and keeps episode statistics.

    A multi-agent env (num_agents >= 2, names in agent_names or "agent_0", ...) works
    in rows, row = env * num_agents + agent: reset gives (num_envs * num_agents, ...)
    observations, with mask (num_envs,) naming the envs to reset; step takes
    (num_envs * num_agents,) actions and returns rows, optionally a fifth array, active
    (rows, bool): whether each row's agent acts at the next step (omitted: every agent
    that has not finished). An agent finishes on the step its row says terminated or
    truncated; its row is then inactive, its later rewards and flags ignored, until its
    env resets, which skinner does (reset(None, mask)) once every agent of it has
    finished or the env reaches max_episode_steps.
    """
    if max_episode_steps is not None and int(max_episode_steps) < 1:
        raise ValueError(f"max_episode_steps = {max_episode_steps} (expected 1 or more, or None "
                         "for no time limit)")
    obs_space = observation_space or getattr(cls, "single_observation_space", None)
    act_space = action_space or getattr(cls, "single_action_space", None)
    if obs_space is None or act_space is None:
        raise ValueError(f"{env_id}: give the spaces of one env, as class attributes "
                         "single_observation_space and single_action_space or as arguments")
    if agent_names is not None:
        agent_names = [str(name) for name in agent_names]
        if num_agents is None:
            num_agents = len(agent_names)
    _core.register(env_id, cls, obs_space, act_space,
                   int(max_episode_steps) if max_episode_steps is not None else 0,
                   reward_threshold, kwargs, int(num_agents or 1), agent_names)


def _preset_paths(env_id):
    """The files of the env's preset, in the order they layer: one name, or
    several separated by spaces ("minatar minatar_seaquest"), as `skinner
    train` reads them; a name with no file is left out."""
    preset = _core.describe(env_id)["preset"] or ""
    dirs = ([os.environ["SKINNER_CONFIG_DIR"]] if os.environ.get("SKINNER_CONFIG_DIR") else [])
    paths = []
    for name in preset.split():
        for d in dirs + list(CONFIG_DIRS):
            path = os.path.join(d, name + ".ini")
            if os.path.isfile(path):
                paths.append(path)
                break
    return paths


def train(env, config=None, run_dir=None, total_steps=None, seed=None, threads=None,
          callback=None, stop_when_solved=None, force=False, resume=None):
    """Trains a policy on env with skinner's C trainer (PPO, or the learner
    train.algo names: docs/algorithms.md) and returns the run's summary as a dict.

    env: an env id (or a VecEnv, whose id is used; one from from_gymnasium also
    gives its number of envs, as env.num_envs). config: a dict of config
    keys ({"ppo.learning_rate": 1e-3} or {"ppo": {"learning_rate": 1e-3}}) or
    the path of an INI file, layered on the env's preset as `skinner train
    --config` does; total_steps, seed, threads and stop_when_solved set the
    train.* keys. run_dir: where the run folder goes (config.ini, metrics.csv,
    policy.safetensors, ...); None writes nothing. A non-empty run_dir is
    refused unless force. resume: a run folder to continue (its config is
    used; built-in and plugin envs only) up to total_steps; a run that
    stopped when solved trains on unless stop_when_solved=True is given again.

    The trainer runs with the GIL released. callback(stats) is called once per
    update with that update's figures; returning False stops the run cleanly.
    Ctrl-C stops it as it stops the CLI (after the current update, with the
    checkpoint written when there is a run_dir) and then raises
    KeyboardInterrupt. An exception in the callback or in a Python-defined env
    stops the run the same way and is raised.
    """
    files, pairs = [], []
    given_from = None  # files from this index on are the user's (None: none of them)
    if isinstance(env, _core.Vec):
        # from_gymnasium's: as many envs as given (a config dict's env.num_envs comes after
        # and wins; an INI config names its own)
        if getattr(env, "train_num_envs", None) and not isinstance(config, (str, os.PathLike)):
            pairs.append(("env.num_envs", str(env.train_num_envs)))
        env = env.env_id
    if resume is not None:
        if config is not None or run_dir is not None:
            raise ValueError("resume continues a run with its own config.ini in its own folder; "
                             "drop config and run_dir")
        run_dir = resume
        if stop_when_solved is None:  # as `skinner train --resume`: a resume trains on
            stop_when_solved = False
        files.append(os.path.join(resume, "config.ini"))
        resume = os.path.join(resume, "policy.safetensors")
        if not os.path.isfile(files[0]):
            raise FileNotFoundError(f"cannot resume '{run_dir}': no config.ini in it")
    else:
        described = _core.describe(env)
        files.extend(_preset_paths(env))
        if isinstance(config, (str, os.PathLike)):
            given_from = len(files)
            files.append(os.fspath(config))
        elif config is not None:
            pairs += _pairs(config)
        pairs.append(("env.id", described["id"]))
        if run_dir is not None and os.path.isdir(run_dir) and os.listdir(run_dir) and not force:
            raise FileExistsError(f"run_dir '{run_dir}' exists and is not empty; give force=True "
                                  "to write into it, or another folder")
    if _core.describe(env)["python"]:
        # a Python-defined env steps its whole batch in one call: one worker
        asked = threads if threads is not None else dict(pairs).get("train.threads")
        if asked is not None and str(asked) not in ("0", "1"):  # 0: as many as it can
            raise ValueError(f"{env} is a Python-defined env: it steps its whole batch on one "
                             f"thread (threads = {asked}; expected 1)")
        threads = 1
    for key, value in (("train.total_steps", total_steps), ("train.seed", seed),
                       ("train.threads", threads), ("train.stop_when_solved", stop_when_solved)):
        if value is not None:
            pairs.append((key, _value_text(value)))
    return _core.train(files, pairs, run_dir=run_dir, callback=callback, resume=resume,
                       given_from=len(files) if given_from is None else given_from)


class Policy(_core.Agent):
    """A policy loaded from a checkpoint (skinner.load).

    act(obs, deterministic=False, action_mask=None): actions for one
    observation (obs_size,) or a batch (B, obs_size), normalised as in
    training; Discrete envs give an int (or (B,) int32), MultiDiscrete (heads,)
    or (B, heads), Box (dim,) or (B, dim) float32. state_dict(): the policy's
    tensors as float32 arrays named as in the checkpoint, so that
    {k: torch.from_numpy(v) for k, v in p.state_dict().items()} is a PyTorch
    state dict.
    """

    def __init__(self, path, **data):
        self.path = os.fspath(path)
        super().__init__(self.path, _env_pairs(data))

    def __repr__(self):
        return f"skinner.Policy({self.path!r}, env={self.env_id!r})"


def load(path, **data):
    """Loads a policy checkpoint (policy.safetensors of a run folder, or the
    folder itself). data: new locations of the run's data (dataset=...)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, "policy.safetensors")
    return Policy(path, **data)


def kge_train(dataset=None, run_dir=None, config=None, resume=None, force=False, callback=None,
              **options):
    """Trains a knowledge-graph embedding as `skinner kge train` does
    (docs/prover.md), in C: dataset, a folder in DeepProofLog's format;
    run_dir, where config.ini, metrics.csv and kge.safetensors go; config, an
    INI file with [kge] keys or a dict of them ({"dim": 50} or {"kge.dim":
    50}); options, the same keys as arguments (model="rotate", dim=50,
    epochs=20, lr=0.01, ...), which win over config's. resume=RUN continues that run up to epochs. callback(info) after
    every epoch ({"epoch", "epochs", "steps", "seconds", "loss", "valid"}:
    valid is None or the valid split's {"mrr", "hits1", "hits3", "hits10"});
    returning False stops the run (KeyboardInterrupt). Returns {"model",
    "dim", "entities", "relations", "train_facts", "first_epoch", "epochs",
    "seconds", "loss", "valid", "dataset", "run_dir", "model_path"}. A bad key
    or value raises ValueError naming it."""
    config_path = None
    if isinstance(config, dict):
        options = {**{key.removeprefix("kge."): value for key, value in config.items()}, **options}
    elif config is not None:
        config_path = os.fspath(config)
    for key, value in (("dataset", dataset), ("run_dir", run_dir), ("resume", resume)):
        if value is not None:
            options[key] = value
    if force:
        options["force"] = True
    return _core.kge_train(_pairs(options, "kge"), config_path, callback)


def evaluate(checkpoint, episodes=10, greedy=False, seed=0, opponent=None, epsilon=0.0, **data):
    """Runs `episodes` episodes of a checkpoint's policy on its env, as
    `skinner eval` does, and returns the returns' statistics.

    epsilon (a DQN run, as `skinner eval --epsilon`; CleanRL evaluates at
    0.05): each step, with chance epsilon, a uniform allowed action in place
    of the argmax of Q, drawn from the seed's stream. ValueError naming the
    value for one outside [0, 1], for one above 0 with another learner's run,
    and for one with opponent=.

    opponent (a multi-agent env, as `skinner eval --opponent`): "random",
    "heuristic", one of the env's own ("alphabeta:4" for Connect Four), or
    another checkpoint (a run folder or its policy.safetensors) plays the other
    agents, the first move alternating; the dict then holds games, wins, draws
    and losses with their rates and 95% Wilson intervals (wins_ci95, ...) and
    by_role, the split by the agent the policy played."""
    checkpoint = os.fspath(checkpoint)
    if os.path.isdir(checkpoint):
        checkpoint = os.path.join(checkpoint, "policy.safetensors")
    if opponent is not None:
        if data:
            raise ValueError("evaluate(opponent=...) takes no data locations (%s)"
                             % ", ".join(sorted(data)))
        opponent = os.fspath(opponent)
    return _core.evaluate(checkpoint, episodes=episodes, greedy=greedy, seed=seed,
                          config=_env_pairs(data), opponent=opponent, epsilon=epsilon)


def bench(env_id, num_envs=4096, threads=1, seconds=1.0, seed=0, **config):
    """Raw env stepping in C, as `skinner bench env` measures it: uniformly
    random actions (16 batches drawn before the clock starts and cycled;
    drawn each step among the allowed ones for masked envs), for every row of a
    multi-agent env. Returns {"steps_per_second", "steps", "seconds", "num_envs",
    "threads", "env", "num_agents", "agent_steps_per_second"} (steps are env steps;
    agent steps are env steps x num_agents).
    A Python-defined env is called once per batch step."""
    return _core.bench(env_id, num_envs=num_envs, threads=threads, seconds=float(seconds),
                       seed=seed, config=_env_pairs(config))


class EnvCheckError(Exception):
    """A check of skinner.check_env failed; `report` holds the whole report."""

    def __init__(self, message, report):
        super().__init__(message)
        self.report = report


def check_env(env_id, num_envs=0, steps=0, seed=1, threads=0, raise_on_failure=True, **config):
    """Checks an env as `skinner check` does (docs/check.md): canaries and
    guard zones around its buffers, observations inside its observation
    space, finite rewards, legal masks, flags, the time limit, final
    observations and episode statistics, the same trajectory for the same seed
    and another for another seed, state restored bit for bit, a corrupted
    state refused, and its speed. 0 for num_envs, steps or threads: the
    defaults. config: the env's keys, as make takes them.

    Returns the report as a dict ({"env", "checks": [{"name", "status",
    "detail", "env", "step"}, ...], "passed", "failed", ...}); with
    raise_on_failure, a failed check raises EnvCheckError naming it. An
    exception raised by the env propagates as itself. env_id may be a VecEnv (its id)."""
    if isinstance(env_id, _core.Vec):
        env_id = env_id.env_id
    report = json.loads(_core.check_env(env_id, config=_env_pairs(config), num_envs=num_envs,
                                        steps=steps, seed=seed, threads=threads))
    if raise_on_failure and report["failed"]:
        lines = []
        for check in report["checks"]:
            if check["status"] != "FAIL":
                continue
            where = "" if check["env"] is None else f"env {check['env']}"
            if check["step"] is not None:
                where += (" " if where else "") + (f"step {check['step']}" if check["step"]
                                                   else "at reset")
            lines.append(f"{check['name']}: {where + ': ' if where else ''}{check['detail']}")
        raise EnvCheckError(f"{report['env']}: {report['failed']} check(s) failed\n  "
                            + "\n  ".join(lines), report)
    return report
