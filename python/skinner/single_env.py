"""One skinner env as a single Gymnasium env (docs/python.md, "One env"): skinner.gym_env.

It is a VecEnv of one env seen through Gymnasium's single-env API: reset(seed) seeds env 0's
stream as VecEnv.reset does, and step returns one env's values, the ending observation (the
vector env's final_obs) on the step an episode ends. The vector env has already reset that
env within the step (same-step autoreset), so a reset() right after it, without a seed, hands
back that episode's first observation; any other reset() is VecEnv.reset(seed) (None: the
next seed). It is a real
gymnasium.Env subclass when Gymnasium can be imported, and a plain class of the same shape
otherwise."""

import numpy as np

try:
    import gymnasium as _gymnasium

    _Base = _gymnasium.Env
except ImportError:  # pragma: no cover - depends on the machine
    _Base = object


class GymEnv(_Base):
    """env_id as one Gymnasium env: observation_space and action_space are the vector env's
    single spaces; step(action) -> (obs, reward, terminated, truncated, info), obs a fresh
    array. Multi-agent envs are refused (skinner.parallel_env is their single-env API)."""

    def __init__(self, env_id, seed=None, render_mode=None, **config):
        from . import VecEnv  # the package's, here to avoid an import cycle

        self.batch = VecEnv(env_id, num_envs=1, seed=seed, copy=True, config=config,
                            render_mode=render_mode)
        if self.batch.num_agents != 1:
            self.batch.close()
            raise ValueError(f"{env_id} has {self.batch.num_agents} agents: use "
                             "skinner.parallel_env for one multi-agent env")
        self.observation_space = self.batch.single_observation_space
        self.action_space = self.batch.single_action_space
        self.render_mode = render_mode
        self.metadata = {"render_modes": ["rgb_array"], "render_fps": 30}
        self.reward_range = (-float("inf"), float("inf"))
        self._next_obs, self._next_info = None, {}

    def reset(self, *, seed=None, options=None):
        """Right after a step that ended an episode, without a seed: the episode the vector env
        has already started. Otherwise VecEnv.reset(seed) (None: the next seed)."""
        if _Base is not object:  # Gymnasium's np_random, seeded as its envs seed it (unused here)
            super().reset(seed=seed)
        if seed is None and self._next_obs is not None:
            obs, info = self._next_obs, self._next_info
        else:
            obs, infos = self.batch.reset(seed=seed)
            obs, info = obs[0], self._info(infos)
        self._next_obs, self._next_info = None, {}
        return obs, info

    def step(self, action):
        obs, rewards, terminations, truncations, infos = self.batch.step(
            np.asarray(action)[None, ...])
        terminated, truncated = bool(terminations[0]), bool(truncations[0])
        info = self._info(infos)
        if not (terminated or truncated):
            return obs[0], float(rewards[0]), terminated, truncated, info
        self._next_obs, self._next_info = obs[0], info  # the next episode, already reset
        info = dict(info, episode={name: float(values[0])
                                   for name, values in infos["episode"].items()})
        return infos["final_obs"][0], float(rewards[0]), terminated, truncated, info

    @staticmethod
    def _info(infos):
        return {"action_mask": infos["action_mask"][0]} if "action_mask" in infos else {}

    def render(self):
        frames = self.batch.render()
        return None if frames is None else frames[0]

    def close(self):
        self.batch.close()

    def __repr__(self):
        return f"skinner.GymEnv({self.batch.env_id!r})"
