"""Single Gymnasium-style envs stepped by skinner (docs/python.md, "Gymnasium envs you have"):
skinner.from_gymnasium.

A list of single envs (or the callables that make them) becomes a Python-defined env
(skinner.register): a batch class that loops over its envs once per batch step, as
Gymnasium's SyncVectorEnv does, so that make, train, evaluate, bench and check_env treat it
like a built-in. skinner's C side does the rest as for any Python-defined env: the time limit
(the env's spec.max_episode_steps), same-step autoreset (reset(None, mask) right after the
step, with final_obs kept), and the episode statistics.

Seeding: a reset with seed s resets env i with seed s + i, as Gymnasium's vector envs do, so
the same seed gives the same episodes as gymnasium.vector.SyncVectorEnv(env_fns).reset(seed=s);
autoresets pass no seed (each env goes on with its own generator), as Gymnasium's do.

Spaces, read from the first env (each env made must have the same):
  observations: a 1-D Box as it is; a uint8 (H, W, C) Box as an image; any other Box
  reshaped to 1-D; Discrete, MultiDiscrete, MultiBinary, Dict and Tuple (Gymnasium's own)
  flattened with gymnasium.spaces.flatten into a float32 1-D Box (Discrete one-hot). Others
  (Text, Graph, Sequence, OneOf, or a composite space that is not Gymnasium's) are refused,
  by name.
  actions: Discrete(n, start), MultiDiscrete (1-D nvec, with its start), MultiBinary(n) (as
  n heads of 2) and a float Box of at most 16 values (reshaped to the space's shape). Others
  (Dict, Tuple, an integer Box, ...) are refused, by name.
Action masks (info["action_mask"]) are not read: the first reset that carries one warns.
"""

import copy as _copy
import warnings

import numpy as np

_SOURCES = {}  # env id -> the _Source its batches are made from (from_gymnasium)


def _name(space):
    return type(space).__name__


def _is_gymnasium_space(space):
    try:
        import gymnasium
    except ImportError:  # pragma: no cover - depends on the machine
        return False
    return isinstance(space, gymnasium.spaces.Space)


def _is_box(space):
    return (hasattr(space, "low") and hasattr(space, "high") and hasattr(space, "shape")
            and not hasattr(space, "n") and not hasattr(space, "nvec")
            and not hasattr(space, "spaces"))


class _ObsPlan:
    """How one env's observation becomes a row of the batch: as it is, reshaped, or
    flattened; with the Box skinner is told about (shape, dtype, low, high)."""

    def __init__(self, space):
        self.space = space
        self.flatten = None
        if _is_box(space):
            low, high = np.asarray(space.low), np.asarray(space.high)
            shape = tuple(space.shape)
            image = np.dtype(space.dtype) == np.uint8 and len(shape) == 3
            self.shape = shape if image or len(shape) == 1 else (int(np.prod(shape)),)
            self.dtype = np.uint8 if image else np.float32
            low = np.broadcast_to(low, shape).reshape(self.shape)
            high = np.broadcast_to(high, shape).reshape(self.shape)
        elif (hasattr(space, "n") or hasattr(space, "nvec") or hasattr(space, "spaces")) \
                and _name(space) in ("Discrete", "MultiDiscrete", "MultiBinary", "Dict", "Tuple"):
            if not _is_gymnasium_space(space):
                raise ValueError(f"observation space {space!r}: a {_name(space)} that is not "
                                 "gymnasium.spaces' cannot be flattened here (skinner flattens "
                                 "Gymnasium's own with gymnasium.spaces.flatten); flatten it in a "
                                 "wrapper into a 1-D Box")
            from gymnasium.spaces import flatten, flatten_space

            flat = flatten_space(space)
            self.flatten = lambda obs: flatten(space, obs)
            self.shape, self.dtype = tuple(flat.shape), np.float32
            low, high = np.asarray(flat.low), np.asarray(flat.high)
        else:
            raise ValueError(f"observation space {space!r}: {_name(space)} observations are not "
                             "supported (expected a Box, or Discrete, MultiDiscrete, MultiBinary, "
                             "Dict or Tuple of gymnasium.spaces, which are flattened)")
        self.low = low.astype(self.dtype)
        self.high = high.astype(self.dtype)

    def signature(self):
        return (self.shape, np.dtype(self.dtype).str, self.low.tobytes(), self.high.tobytes())

    def declared(self):
        """The Box skinner.register reads (shape, dtype, low, high)."""
        return _Declared(shape=self.shape, dtype=np.dtype(self.dtype), low=self.low,
                         high=self.high)


class _Declared:
    """A space as skinner.register reads it: only the attributes it looks at."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)


class _ActionPlan:
    """How a batch of skinner's actions becomes one action per env."""

    def __init__(self, space):
        self.space = space
        name = _name(space)
        shape = tuple(getattr(space, "shape", None) or ())
        if hasattr(space, "spaces"):
            raise ValueError(f"action space {space!r}: {name} actions are not supported "
                             "(expected Discrete, MultiDiscrete, MultiBinary or a float Box)")
        if hasattr(space, "nvec"):
            nvec = np.asarray(space.nvec)
            if nvec.ndim != 1:
                raise ValueError(f"action space {space!r}: a MultiDiscrete of shape "
                                 f"{nvec.shape} is not supported (expected a 1-D nvec)")
            self.kind, self.start = "multi", np.asarray(getattr(space, "start", 0), np.int64)
            self.declared = _Declared(nvec=nvec.astype(np.int64))
        elif hasattr(space, "n") and shape == ():
            self.kind, self.start = "discrete", int(getattr(space, "start", 0))
            self.declared = _Declared(n=int(space.n), shape=())
        elif hasattr(space, "n"):  # MultiBinary(n): n heads of 2
            if len(shape) != 1:
                raise ValueError(f"action space {space!r}: a {name} of shape {shape} is not "
                                 "supported (expected a 1-D one)")
            self.kind = "binary"
            self.declared = _Declared(nvec=np.full(shape[0], 2, np.int64))
        elif _is_box(space) and np.issubdtype(np.dtype(space.dtype), np.floating):
            low = np.broadcast_to(np.asarray(space.low), shape).reshape(-1)
            high = np.broadcast_to(np.asarray(space.high), shape).reshape(-1)
            self.kind, self.shape, self.dtype = "box", shape, np.dtype(space.dtype)
            self.declared = _Declared(low=low.astype(np.float32), high=high.astype(np.float32))
        else:
            raise ValueError(f"action space {space!r}: {name} actions are not supported "
                             "(expected Discrete, MultiDiscrete, MultiBinary or a float Box)")

    def signature(self):
        return (self.kind, repr(sorted((k, np.asarray(v).tobytes())
                                       for k, v in vars(self.declared).items())),
                np.asarray(getattr(self, "start", 0)).tobytes())

    def per_env(self, actions):
        """skinner's batch of actions (int32 (N,) or (N, heads), float32 (N, dim)) -> a list
        of one action per env, in the env's own form."""
        if self.kind == "discrete":
            return (actions + self.start).tolist() if self.start else actions.tolist()
        if self.kind == "multi":
            return list(actions.astype(np.int64) + self.start)
        if self.kind == "binary":
            return list(actions.astype(np.int8))
        return list(actions.astype(self.dtype).reshape((len(actions),) + self.shape))


def _is_env_object(item):
    return not isinstance(item, type) and hasattr(item, "step") and hasattr(item, "reset")


class _Source:
    """What from_gymnasium was given: env objects and callables, the plans read from the
    first env, and which objects a live batch holds."""

    def __init__(self, env_fns, first, obs_plan, action_plan):
        self.items = list(env_fns)
        self.first = first  # env 0 made to read the spaces, handed to the first batch
        self.obs_plan, self.action_plan = obs_plan, action_plan
        self.held = set()  # indices of env objects a live batch holds

    def signature(self, limit, threshold):
        return (self.obs_plan.signature(), self.action_plan.signature(), limit, threshold)

    def make(self, k):
        """Env k of a new batch and whether the batch owns it (closes it): item k % K,
        called if it is a callable; an env object not held by another batch is lent,
        a held one is deep-copied."""
        index = k % len(self.items)
        item = self.items[index]
        if not _is_env_object(item):
            if index == 0 and self.first is not None:
                env, self.first = self.first, None
                return env, True, None
            return item(), True, None
        if index not in self.held:
            self.held.add(index)
            return item, False, index
        try:
            return _copy.deepcopy(item), True, None
        except Exception as error:
            raise TypeError(f"env object {index} is already stepped by another batch and cannot "
                            f"be copied for this one ({type(error).__name__}: {error}); give "
                            "from_gymnasium callables that make the env (lambda: "
                            "gymnasium.make(...)) instead of env objects") from error


def _check_same_spaces(env, k, source):
    """Each env must have the first env's spaces (Gymnasium's vector envs ask the same)."""
    for what, plan, cls in (("observation", source.obs_plan, _ObsPlan),
                            ("action", source.action_plan, _ActionPlan)):
        space = getattr(env, f"{what}_space")
        if space is not plan.space and cls(space).signature() != plan.signature():
            raise ValueError(f"env {k} has {what} space {space!r}, env 0 {plan.space!r}: every "
                             "env must have the same spaces")


class GymnasiumBatch:
    """skinner's batch class over single Gymnasium-style envs (see the module's docstring):
    reset(seed, mask) and step(actions) as skinner.register asks, one env call per row."""

    def __init__(self, num_envs, source):
        self.source = _SOURCES[source]
        self.envs, self._owned, self._held = [], [], []
        try:
            for k in range(num_envs):
                env, owned, held = self.source.make(k)
                self.envs.append(env)
                self._owned.append(owned)
                if held is not None:
                    self._held.append(held)
                _check_same_spaces(env, k, self.source)
        except BaseException:
            self.close()
            raise
        plan = self.source.obs_plan
        self._obs = np.zeros((num_envs,) + plan.shape, plan.dtype)
        self._rewards = np.zeros(num_envs, np.float32)
        self._terminations = np.zeros(num_envs, bool)
        self._truncations = np.zeros(num_envs, bool)
        self._warned_mask = False

    def _put(self, k, obs):
        """Row k of the observations from env k's: reshaped or flattened as the plan says."""
        plan = self.source.obs_plan
        try:
            self._obs[k] = (plan.flatten(obs) if plan.flatten else
                            np.reshape(obs, plan.shape))
        except (ValueError, TypeError) as error:
            raise ValueError(f"env {k} returned an observation of shape {np.shape(obs)} (its "
                             f"observation space {plan.space!r}: {error})") from error

    def reset(self, seed, mask=None):
        rows = range(len(self.envs)) if mask is None else np.flatnonzero(mask).tolist()
        for k in rows:
            result = self.envs[k].reset(seed=None if seed is None else int(seed) + k)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise ValueError(f"env {k}: reset returned {type(result).__name__} (expected "
                                 "(obs, info), Gymnasium's API)")
            obs, info = result
            self._put(k, obs)
            if not self._warned_mask and isinstance(info, dict) and "action_mask" in info:
                self._warned_mask = True
                warnings.warn("from_gymnasium: the env gives info['action_mask'], which skinner "
                              "does not read: every action stays allowed", stacklevel=2)
        return self._obs

    def step(self, actions):
        rows, shape = self._obs, None if self.source.obs_plan.flatten else self._obs.shape[1:]
        rewards, terminations, truncations = [], [], []
        for k, (env, action) in enumerate(zip(self.envs, self.source.action_plan.per_env(actions))):
            result = env.step(action)
            if type(result) is not tuple or len(result) != 5:
                raise ValueError(f"env {k}: step returned {type(result).__name__} of "
                                 f"{len(result) if isinstance(result, tuple) else 1} values "
                                 "(expected (obs, reward, terminated, truncated, info), "
                                 "Gymnasium's API)")
            obs, reward, terminated, truncated, _ = result
            if type(obs) is np.ndarray and obs.shape == shape:  # the common case, ~1 us less
                rows[k] = obs
            else:
                self._put(k, obs)
            rewards.append(reward)
            terminations.append(terminated)
            truncations.append(truncated)
        try:  # one conversion of each list, not one NumPy store per env
            self._rewards[:] = rewards
        except (ValueError, TypeError) as error:
            raise ValueError(f"the rewards {rewards} are not all numbers ({error})") from error
        self._terminations[:] = terminations
        self._truncations[:] = truncations
        return rows, self._rewards, self._terminations, self._truncations

    def close(self):
        """Closes the envs this batch made and gives back the env objects it was lent."""
        for env, owned in zip(self.envs, self._owned):
            if owned and hasattr(env, "close"):
                env.close()
        self.source.held.difference_update(self._held)
        self.envs, self._owned, self._held = [], [], []

    def __del__(self):
        if getattr(self, "envs", None):
            self.close()


def _default_id(env):
    spec = getattr(env, "spec", None)
    name = getattr(spec, "id", None) or type(getattr(env, "unwrapped", env)).__name__
    return "Gymnasium-" + name.replace(":", "-").replace("/", "-")


def from_gymnasium(env_fns, env_id=None, seed=None, max_episode_steps=None,
                   reward_threshold=None, copy=False):
    """A skinner vector env over single Gymnasium-style envs: env_fns is a list of callables
    that make one env each (as gymnasium.vector.SyncVectorEnv takes), of env objects, or of
    both; or one callable or env object. Each env has reset(seed=..., options=...) -> (obs,
    info), step(action) -> (obs, reward, terminated, truncated, info), observation_space
    and action_space (gymnasium.spaces, or objects with the same attributes).

    Returns skinner.make(env_id, num_envs=len(env_fns), seed=seed, copy=copy): same-step
    autoreset with infos["final_obs"], as skinner's own envs. env_id (default
    "Gymnasium-" + the env's spec id) is registered as a Python-defined env, so
    skinner.train(env), skinner.check_env(env) and skinner.evaluate(run) work on it;
    train gives it len(env_fns) envs unless config sets env.num_envs. A batch of another
    size takes env k from env_fns[k % len(env_fns)]: a callable is called, an env object
    is lent to one batch at a time and deep-copied for the others.

    max_episode_steps and reward_threshold default to the env's spec (gymnasium.make's
    TimeLimit, the registry's threshold). Calling from_gymnasium again with the same env_id
    and the same spaces and limits replaces the envs later batches are made from.
    """
    from . import envs, make, register  # the package's, here to avoid an import cycle

    items = list(env_fns) if isinstance(env_fns, (list, tuple)) else [env_fns]
    if not items:
        raise ValueError("env_fns is empty: give at least one env or callable")
    for k, item in enumerate(items):
        if not (_is_env_object(item) or callable(item)):
            raise TypeError(f"env_fns[{k}] = {item!r} is neither an env (with reset and step) "
                            "nor a callable that makes one")
    first = items[0] if _is_env_object(items[0]) else items[0]()
    try:
        for attribute in ("observation_space", "action_space", "reset", "step"):
            if not hasattr(first, attribute):
                raise TypeError(f"env 0 ({first!r}) has no {attribute}: a Gymnasium-style env "
                                "has reset, step, observation_space and action_space")
        source = _Source(items, None if first is items[0] else first,
                         _ObsPlan(first.observation_space), _ActionPlan(first.action_space))
    except BaseException:
        if first is not items[0] and hasattr(first, "close"):
            first.close()
        raise
    spec = getattr(first, "spec", None)
    if max_episode_steps is None:
        max_episode_steps = getattr(spec, "max_episode_steps", None)
    if reward_threshold is None:
        reward_threshold = getattr(spec, "reward_threshold", None)
    env_id = env_id or _default_id(first)
    signature = source.signature(max_episode_steps, reward_threshold)
    if env_id in _SOURCES:
        if _SOURCES[env_id].registered != signature:
            raise ValueError(f"{env_id} is already registered by from_gymnasium with other spaces "
                             "or limits; give another env_id")
    elif env_id in envs():
        raise ValueError(f"{env_id} is already an env id; give from_gymnasium another env_id")
    source.registered = signature
    previous = _SOURCES.get(env_id)
    _SOURCES[env_id] = source
    if previous is None:
        try:
            register(env_id, GymnasiumBatch, max_episode_steps=max_episode_steps,
                     reward_threshold=reward_threshold, kwargs={"source": env_id},
                     observation_space=source.obs_plan.declared(),
                     action_space=source.action_plan.declared)
        except BaseException:
            del _SOURCES[env_id]
            raise
    vec = make(env_id, num_envs=len(items), seed=seed, copy=copy)
    vec.train_num_envs = len(items)
    return vec
