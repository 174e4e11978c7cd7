"""skinner's own small space classes, used when gymnasium is not importable.

They carry the attributes Gymnasium's spaces have (shape, dtype, n / nvec /
low / high, sample(), contains(), seed()), so code written against
gymnasium.spaces runs on them unchanged for these uses.
"""

import numpy as np


class Space:
    def __init__(self, shape, dtype, seed=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self._np_random = np.random.default_rng(seed)

    def seed(self, seed=None):
        self._np_random = np.random.default_rng(seed)
        return [seed]

    @property
    def np_random(self):
        return self._np_random


class Discrete(Space):
    """Integers 0 .. n - 1 (start 0)."""

    def __init__(self, n, seed=None):
        super().__init__((), np.int64, seed)
        self.n = np.int64(n)
        self.start = np.int64(0)

    def sample(self, mask=None):
        if mask is not None:
            allowed = np.flatnonzero(mask)
            return np.int64(self._np_random.choice(allowed))
        return np.int64(self._np_random.integers(self.n))

    def contains(self, x):
        return np.ndim(x) == 0 and np.issubdtype(np.asarray(x).dtype, np.integer) and 0 <= int(x) < self.n

    def __repr__(self):
        return f"Discrete({int(self.n)})"

    def __eq__(self, other):
        return isinstance(other, Discrete) and self.n == other.n


class MultiDiscrete(Space):
    """Arrays of integers, entry k in 0 .. nvec[k] - 1."""

    def __init__(self, nvec, seed=None):
        self.nvec = np.asarray(nvec, dtype=np.int64)
        super().__init__(self.nvec.shape, np.int64, seed)

    def sample(self, mask=None):
        return (self._np_random.random(self.nvec.shape) * self.nvec).astype(np.int64)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and np.issubdtype(x.dtype, np.integer) and bool(np.all((x >= 0) & (x < self.nvec)))

    def __repr__(self):
        return f"MultiDiscrete({self.nvec.tolist()})"

    def __eq__(self, other):
        return isinstance(other, MultiDiscrete) and np.array_equal(self.nvec, other.nvec)


class Box(Space):
    """Real arrays within [low, high] (bounds may be infinite)."""

    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        if shape is None:
            shape = np.broadcast(np.asarray(low), np.asarray(high)).shape
        super().__init__(shape, dtype, seed)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape).copy()

    def sample(self, mask=None):
        low = np.where(np.isfinite(self.low), self.low, -1.0)
        high = np.where(np.isfinite(self.high), self.high, 1.0)
        bounded = np.isfinite(self.low) & np.isfinite(self.high)
        draw = self._np_random.uniform(low, high, self.shape)
        draw = np.where(bounded, draw, self._np_random.normal(size=self.shape))
        return draw.astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all((x >= self.low) & (x <= self.high)))

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"

    def __eq__(self, other):
        return (isinstance(other, Box) and self.shape == other.shape
                and np.array_equal(self.low, other.low) and np.array_equal(self.high, other.high))


class Dict:
    """Dicts of named values, one space a key (keys sorted, as Gymnasium sorts a dict's):
    skinner.parallel_env's {"observation", "action_mask"} of an env with masks."""

    def __init__(self, spaces, seed=None):
        self.spaces = {key: spaces[key] for key in sorted(spaces)}
        self.shape, self.dtype = None, None
        self.seed(seed)

    def seed(self, seed=None):
        for offset, space in enumerate(self.spaces.values()):
            space.seed(None if seed is None else seed + offset)
        return [seed]

    def sample(self, mask=None):
        return {key: space.sample() for key, space in self.spaces.items()}

    def contains(self, x):
        return (isinstance(x, dict) and x.keys() == self.spaces.keys()
                and all(space.contains(x[key]) for key, space in self.spaces.items()))

    def __getitem__(self, key):
        return self.spaces[key]

    def keys(self):
        return self.spaces.keys()

    def __repr__(self):
        return "Dict(" + ", ".join(f"{key!r}: {space}" for key, space in self.spaces.items()) + ")"

    def __eq__(self, other):
        return isinstance(other, Dict) and self.spaces == other.spaces
