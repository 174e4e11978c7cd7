"""Steps CartPole-v1 from Python with random actions and prints the speed and the
episode statistics skinner reports in infos["episode"].

    PYTHONPATH=build/python /usr/bin/python3 examples/python/random_actions.py
"""

import argparse
import time

import numpy as np

import skinner


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=10000, help="batch steps")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    returns, lengths = [], []
    with skinner.make("CartPole-v1", num_envs=args.num_envs, seed=args.seed) as env:
        env.reset()
        start = time.perf_counter()
        for _ in range(args.steps):
            actions = rng.integers(0, 2, env.num_envs, dtype=np.int32)
            obs, rewards, terminations, truncations, infos = env.step(actions)
            # Same-step autoreset: infos holds "episode" only on steps where some
            # env ended, and its rows are valid only where "_episode" is set.
            # The arrays are views that the next step overwrites: keep copies
            # (tolist() makes them). Both fields are float32, lengths included.
            if "episode" in infos:
                ended = infos["_episode"]
                returns.extend(infos["episode"]["r"][ended].tolist())
                lengths.extend(infos["episode"]["l"][ended].tolist())
        seconds = time.perf_counter() - start

    steps = args.steps * args.num_envs
    print(f"{steps} env steps in {seconds:.2f} s: {steps / seconds / 1e6:.1f} M steps/s "
          f"(random actions drawn by NumPy in the loop)")
    print(f"{len(returns)} episodes: mean return {np.mean(returns):.1f}, "
          f"mean length {np.mean(lengths):.1f}, longest {int(max(lengths))}")


if __name__ == "__main__":
    main()
