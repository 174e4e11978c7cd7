"""Multi-agent envs in PettingZoo's Parallel API (docs/multiagent.md, "Python").

A multi-agent env's batch has one row per (env, agent): row = env * num_agents +
agent. skinner.make gives that batch as a VecEnv whose arrays are (num_rows, ...)
views of skinner's buffers (the fast path: one step() for every agent of every env).
skinner.parallel_env gives ONE env of it with PettingZoo's conventions: dicts keyed by
agent name, `agents` and `possible_agents`, `observation_space(agent)` and
`action_space(agent)`, reset() -> (observations, infos) and step(actions) ->
(observations, rewards, terminations, truncations, infos). Its `batch` is the
underlying VecEnv, so the same env can be stepped either way.

An agent that terminates or truncates leaves `agents` (PettingZoo: an agent is never
revived); when none is left, call reset(). An env that brings agents back by itself
(Arena's snakes are reborn at once) keeps stepping their rows in the batch, but the
dict view does not show them until reset().

An env with action masks (Connect Four) gives each agent's observation in PettingZoo's
form for masked games (its classic connect_four_v3's): a dict {"observation": the env's
observation, "action_mask": int8 (mask_size,), 1 = allowed}, observation_space(agent) a
Dict of the two. The mask is the batch's bool row viewed as int8, no copy; infos hold
no mask. An env without masks gives plain arrays.
"""

import numpy as np


class ParallelEnv:
    """One env of a multi-agent id in PettingZoo's Parallel API; make it with
    skinner.parallel_env. The observations it returns view skinner's buffers, as
    VecEnv's do (valid until the next step; copy=True gives fresh arrays)."""

    def __init__(self, env_id, seed=None, copy=False, render_mode=None, **config):
        from . import VecEnv  # the package's, here to avoid an import cycle

        self.batch = VecEnv(env_id, num_envs=1, seed=seed, copy=copy, config=config,
                            render_mode=render_mode)
        described = self.batch.spec_info
        self.possible_agents = list(described["agent_names"])
        self._row = {agent: row for row, agent in enumerate(self.possible_agents)}
        self.agents = []
        self.render_mode = render_mode
        self.metadata = {"name": described["id"], "is_parallelizable": True,
                         "render_modes": ["rgb_array"]}
        self._copy = copy
        self._log_names = list(described["log_names"])
        self._masks = None
        self._mask_size = described["mask_size"]
        self._observation_space = self.batch.single_observation_space
        if self._mask_size:
            from . import _spaces  # Gymnasium's, or skinner's own without it

            self._observation_space = _spaces.Dict({
                "observation": self.batch.single_observation_space,
                "action_mask": _spaces.Box(0, 1, (self._mask_size,), np.int8)})

    # ---- the spaces: one object per env, the same for every agent (one shared role table)
    def observation_space(self, agent):
        self._check_agent(agent)
        return self._observation_space

    def action_space(self, agent):
        self._check_agent(agent)
        return self.batch.single_action_space

    @property
    def observation_spaces(self):
        return {agent: self._observation_space for agent in self.possible_agents}

    @property
    def action_spaces(self):
        return {agent: self.batch.single_action_space for agent in self.possible_agents}

    @property
    def num_agents(self):
        return len(self.agents)

    @property
    def max_num_agents(self):
        return len(self.possible_agents)

    @property
    def unwrapped(self):
        return self

    def _check_agent(self, agent):
        if agent not in self._row:
            raise KeyError(f"{agent!r} is not an agent of {self.metadata['name']} (its agents: "
                           f"{', '.join(self.possible_agents[:4])}"
                           f"{', ...' if len(self.possible_agents) > 4 else ''})")

    def _infos(self, infos, rows):
        active = infos.get("active")
        return {agent: {} if active is None else {"active": bool(active[row])}
                for agent, row in rows}

    def _observe(self, observation, row, ended=False):
        """An agent's observation: the row itself, or with masks PettingZoo's dict. An
        ended agent takes no more actions, so its mask allows none (the batch's row
        already holds the next episode's)."""
        if not self._mask_size:
            return observation
        mask = (np.zeros(self._mask_size, np.int8) if ended
                else self._masks[row].view(np.int8))
        return {"observation": observation, "action_mask": mask}

    def reset(self, seed=None, options=None):
        """PettingZoo's reset: options are accepted and unused (skinner's envs take their
        settings from their config, at make)."""
        obs, infos = self.batch.reset(seed=seed)
        self.agents = list(self.possible_agents)
        self._masks = infos.get("action_mask")
        rows = [(agent, self._row[agent]) for agent in self.agents]
        return ({agent: self._observe(obs[row], row) for agent, row in rows},
                self._infos(infos, rows))

    def _fill_actions(self, actions):
        """The batch's action rows: each live agent's given action; an agent that is done,
        or not given one (its turn is not now), takes the first choice its mask allows."""
        buffer = self.batch.actions
        for agent in actions:
            self._check_agent(agent)
            if agent not in self.agents:
                raise ValueError(f"{agent!r} is done: it takes no more actions until reset()")
        if self._masks is None:
            buffer[...] = 0
        else:
            heads = self.batch.spec_info["heads"]
            first = [np.argmax(self._masks[:, sum(heads[:h]):sum(heads[:h + 1])], axis=1)
                     for h in range(len(heads))]
            buffer[...] = np.stack(first, axis=1).reshape(buffer.shape)
        for agent, action in actions.items():
            buffer[self._row[agent]] = action
        return buffer

    def step(self, actions):
        if not self.agents:
            raise RuntimeError("every agent is done: call reset()")
        try:
            obs, rewards, terminations, truncations, infos = self.batch.step(
                self._fill_actions(actions))
        except ValueError as error:  # the batch names a row: name its agent too
            if not self._mask_size:
                raise
            names = ", ".join(f"{row} {agent!r}" for row, agent in
                              enumerate(self.possible_agents[:4]))
            raise ValueError(f"{error} (the batch's row R is possible_agents[R]: {names}"
                             f"{', ...' if self.max_num_agents > 4 else ''}; an agent's mask "
                             "is its observation's \"action_mask\")") from error
        self._masks = infos.get("action_mask")
        final_obs, episode = infos.get("final_obs"), infos.get("episode")
        rows = [(agent, self._row[agent]) for agent in self.agents]
        observations, reward_of, terminated_of, truncated_of = {}, {}, {}, {}
        info_of = self._infos(infos, rows)
        for agent, row in rows:
            ended = bool(terminations[row] or truncations[row])
            observations[agent] = self._observe(final_obs[row] if ended else obs[row], row,
                                                ended)
            reward_of[agent] = float(rewards[row])
            terminated_of[agent] = bool(terminations[row])
            truncated_of[agent] = bool(truncations[row])
            if ended:
                info_of[agent]["episode"] = {name: float(episode[name][row])
                                             for name in self._log_names}
        self.agents = [agent for agent in self.agents
                       if not (terminated_of[agent] or truncated_of[agent])]
        return observations, reward_of, terminated_of, truncated_of, info_of

    def render(self):
        frames = self.batch.render()
        return None if frames is None else frames[0]

    def close(self):
        self.batch.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return (f"skinner.ParallelEnv({self.metadata['name']!r}, "
                f"{len(self.agents)} of {len(self.possible_agents)} agents live)")
