"""The Python side of bench/mujoco_ppo.sh and bench/mujoco_speed.sh (issue 50 asks 5 and 6).

  physics MODEL FRAME_SKIP ENV_STEPS   raw physics: seconds of one core for ENV_STEPS env steps
      of MODEL (frame_skip mj_steps each, `mujoco.mj_step(m, d, nstep=frame_skip)`, a new
      uniform random ctrl within ctrlrange every env step, mj_resetData every 1000 env steps, as
      an episode's limit); prints JSON {mj_steps_per_s, env_steps_per_s, seconds, cpu_seconds}.
  sb3 ENV STEPS SEED THREADS           Stable-Baselines3's PPO with CleanRL's settings (as
      configs/mujoco.ini: 8 envs x 256 steps, 10 epochs, minibatch 64, lr 3e-4 annealed, 64x64
      tanh, log-std 0, VecNormalize of observations and rewards clipped at 10), then 10 sampled
      evaluation episodes; prints JSON {steps, seconds, sps, train_return, eval_mean, eval_std}.
  step ENV NUM_ENVS THREADS SECONDS    EnvPool (THREADS worker threads) or, with THREADS 0,
      Gymnasium's SyncVectorEnv over NUM_ENVS envs, random actions; prints JSON {sps, cpu_sps}.
      ENV is a Gymnasium id; EnvPool takes its -v4 id (it has no -v5).

Run it with a Python that has mujoco (physics), stable-baselines3 (sb3), envpool (step).
"""

import json
import sys
import time

import numpy as np


def physics(model, frame_skip, env_steps):
    import mujoco
    m = mujoco.MjModel.from_xml_path(model)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    low, high = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    ctrls = rng.uniform(low, high, size=(1000, m.nu))  # drawn before the clock starts
    wall, cpu = time.perf_counter(), time.process_time()
    for k in range(env_steps):
        if k % 1000 == 0:
            mujoco.mj_resetData(m, d)
        d.ctrl[:] = ctrls[k % 1000]
        mujoco.mj_step(m, d, nstep=frame_skip)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"mj_steps_per_s": env_steps * frame_skip / wall, "env_steps_per_s": env_steps / wall,
            "seconds": wall, "cpu_seconds": cpu, "mujoco": mujoco.__version__}


def sb3(env_id, steps, seed, threads):
    import gymnasium as gym
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize
    torch.set_num_threads(threads)
    venv = VecNormalize(make_vec_env(env_id, n_envs=8, seed=seed), norm_obs=True, norm_reward=True,
                        clip_obs=10.0, clip_reward=10.0, gamma=0.99)
    model = PPO("MlpPolicy", venv, n_steps=256, batch_size=64, n_epochs=10,
                learning_rate=lambda frac: 3e-4 * frac, gamma=0.99, gae_lambda=0.95,
                clip_range=0.2, ent_coef=0.0, vf_coef=0.5, max_grad_norm=0.5, seed=seed,
                policy_kwargs={"net_arch": {"pi": [64, 64], "vf": [64, 64]},
                               "activation_fn": torch.nn.Tanh, "log_std_init": 0.0},
                device="cpu")
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    seconds = time.perf_counter() - start
    buf = [e["r"] for e in model.ep_info_buffer]
    venv.training, venv.norm_reward = False, False
    env = gym.make(env_id)
    returns = []
    for k in range(10):
        obs, _ = env.reset(seed=1000 + k)
        done, total = False, 0.0
        while not done:
            action, _ = model.predict(venv.normalize_obs(obs[None]), deterministic=False)
            obs, r, term, trunc, _ = env.step(action[0])
            total += r
            done = term or trunc
        returns.append(total)
    return {"steps": model.num_timesteps, "seconds": seconds, "sps": model.num_timesteps / seconds,
            "train_return": float(np.mean(buf)) if buf else None,
            "eval_mean": float(np.mean(returns)), "eval_std": float(np.std(returns))}


def step(env_id, num_envs, threads, seconds):
    import gymnasium as gym
    if threads > 0:
        import envpool
        envs = envpool.make_gymnasium(env_id.replace("-v5", "-v4"), num_envs=num_envs,
                                      num_threads=threads, seed=1)
    else:
        envs = gym.vector.SyncVectorEnv([lambda: gym.make(env_id) for _ in range(num_envs)])
    envs.reset(seed=1)
    rng = np.random.default_rng(1)
    space = getattr(envs, "single_action_space", envs.action_space)  # EnvPool's is one env's
    actions = [rng.uniform(space.low, space.high, size=(num_envs,) + space.shape).astype(space.dtype)
               for _ in range(16)]
    for k in range(20):
        envs.step(actions[k % 16])
    n, wall, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        for k in range(16):
            envs.step(actions[k])
        n += 16 * num_envs
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    envs.close()
    return {"sps": n / wall, "cpu_sps": n / cpu}


if __name__ == "__main__":
    what, args = sys.argv[1], sys.argv[2:]
    if what == "physics":
        out = physics(args[0], int(args[1]), int(args[2]))
    elif what == "sb3":
        out = sb3(args[0], int(args[1]), int(args[2]), int(args[3]))
    elif what == "step":
        out = step(args[0], int(args[1]), int(args[2]), float(args[3]))
    else:
        sys.exit(f"mujoco_peers.py: unknown command {what!r} (expected physics, sb3 or step)")
    print(json.dumps(out))
