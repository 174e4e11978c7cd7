"""PPO in PyTorch (CPU) on skinner's CartPole-v1: skinner as a drop-in source
of vectorised envs for a training loop written in Python. The loop follows
CleanRL's ppo.py (8 envs x 128 steps, 4 epochs of 4 minibatches, GAE, a
clipped objective and value loss, 64-64 tanh networks, Adam with an annealed
learning rate) and adds what skinner's same-step autoreset asks for: a
truncated episode is bootstrapped from the value of its final observation.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/torch_ppo.py --seed 1

Exits 0 when the mean return of the last 100 episodes reaches 475 (the
threshold of CartPole-v1) or when --total-steps are done.
"""

import argparse
import collections
import sys
import time

import numpy as np

import skinner

try:
    import torch
    from torch import nn
except ImportError:
    print("torch_ppo: PyTorch is not installed; nothing to do")
    sys.exit(0)


def parse_args():
    parser = argparse.ArgumentParser(description="PPO in PyTorch on skinner's CartPole-v1")
    parser.add_argument("--total-steps", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--num-steps", type=int, default=128, help="steps per env per update")
    parser.add_argument("--learning-rate", type=float, default=2.5e-4)
    parser.add_argument("--update-epochs", type=int, default=4)
    parser.add_argument("--num-minibatches", type=int, default=4)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--gae-lambda", type=float, default=0.95)
    parser.add_argument("--clip-coef", type=float, default=0.2)
    parser.add_argument("--ent-coef", type=float, default=0.01)
    parser.add_argument("--vf-coef", type=float, default=0.5)
    parser.add_argument("--max-grad-norm", type=float, default=0.5)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    return parser.parse_args()


def layer(in_size, out_size, std=np.sqrt(2)):
    """A linear layer with CleanRL's orthogonal initialisation."""
    linear = nn.Linear(in_size, out_size)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.constant_(linear.bias, 0.0)
    return linear


class Agent(nn.Module):
    def __init__(self, obs_size, num_actions):
        super().__init__()
        self.critic = nn.Sequential(layer(obs_size, 64), nn.Tanh(), layer(64, 64), nn.Tanh(),
                                    layer(64, 1, std=1.0))
        # a small last layer: the first policy is near uniform
        self.actor = nn.Sequential(layer(obs_size, 64), nn.Tanh(), layer(64, 64), nn.Tanh(),
                                   layer(64, num_actions, std=0.01))

    def value(self, obs):
        return self.critic(obs).squeeze(-1)

    def act(self, obs, action=None):
        dist = torch.distributions.Categorical(logits=self.actor(obs))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(obs)


def main():
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    num_updates = max(1, args.total_steps // batch_size)

    env = skinner.make("CartPole-v1", num_envs=args.num_envs, seed=args.seed)
    obs_size = env.single_observation_space.shape[0]
    agent = Agent(obs_size, int(env.single_action_space.n))
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    # the rollout; dones[t] says that obs[t] starts a new episode
    obs = torch.zeros((args.num_steps, args.num_envs, obs_size))
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    # skinner's arrays are views that the next step overwrites: torch.tensor copies
    next_obs = torch.tensor(env.reset(seed=args.seed)[0])
    next_done = torch.zeros(args.num_envs)
    recent_returns = collections.deque(maxlen=100)
    steps = 0
    start = time.perf_counter()
    solved = False
    for update in range(1, num_updates + 1):
        optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - (update - 1) / num_updates)

        for t in range(args.num_steps):
            obs[t], dones[t] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.act(next_obs)
            actions[t], logprobs[t], values[t] = action, logprob, value
            observation, reward, terminated, truncated, infos = env.step(action.numpy())
            steps += args.num_envs
            reward = torch.tensor(reward)
            if truncated.any():
                # Same-step autoreset: observation holds the next episode's
                # first obs; the truncated episode's last one is in final_obs.
                # A time limit is not a terminal state, so its value is added.
                rows = np.flatnonzero(truncated & infos["_final_obs"])
                with torch.no_grad():
                    final_values = agent.value(torch.tensor(infos["final_obs"][rows]))
                reward[rows] += args.gamma * final_values
            rewards[t] = reward
            next_obs = torch.tensor(observation)
            next_done = torch.tensor(terminated | truncated, dtype=torch.float32)
            if "episode" in infos:
                recent_returns.extend(infos["episode"]["r"][infos["_episode"]].tolist())

        # generalised advantage estimation (GAE), backwards over the rollout
        with torch.no_grad():
            next_value = agent.value(next_obs)
            advantages = torch.zeros_like(rewards)
            last_advantage = torch.zeros(args.num_envs)
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    not_done, following_value = 1.0 - next_done, next_value
                else:
                    not_done, following_value = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + args.gamma * following_value * not_done - values[t]
                last_advantage = delta + args.gamma * args.gae_lambda * not_done * last_advantage
                advantages[t] = last_advantage
            returns = advantages + values

        # the rollout flattened to one batch of num_steps * num_envs samples
        b_obs = obs.reshape(-1, obs_size)
        b_actions, b_logprobs, b_values = actions.flatten(), logprobs.flatten(), values.flatten()
        b_advantages, b_returns = advantages.flatten(), returns.flatten()
        for _ in range(args.update_epochs):
            order = torch.randperm(batch_size)
            for lo in range(0, batch_size, minibatch_size):
                mb = order[lo:lo + minibatch_size]
                _, logprob, entropy, value = agent.act(b_obs[mb], b_actions[mb])
                ratio = (logprob - b_logprobs[mb]).exp()
                adv = b_advantages[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                clip = args.clip_coef
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)).mean()
                # the value loss clipped around the rollout's values, as CleanRL does
                value_clipped = b_values[mb] + (value - b_values[mb]).clamp(-clip, clip)
                value_loss = 0.5 * torch.max((value - b_returns[mb]) ** 2,
                                             (value_clipped - b_returns[mb]) ** 2).mean()
                loss = policy_loss - args.ent_coef * entropy.mean() + args.vf_coef * value_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        seconds = time.perf_counter() - start
        mean_return = np.mean(recent_returns) if recent_returns else float("nan")
        if update % 10 == 0 or update == num_updates:
            print(f"steps {steps:7d}  {steps / seconds:7.0f} steps/s  "
                  f"mean return (last {len(recent_returns)} episodes) {mean_return:6.1f}")
        if len(recent_returns) == 100 and mean_return >= 475:
            solved = True
            break

    seconds = time.perf_counter() - start
    env.close()
    print(f"{'solved' if solved else 'not solved'}: {steps} steps in {seconds:.1f} s, "
          f"{steps / seconds:.0f} steps/s, mean return of the last {len(recent_returns)} "
          f"episodes {np.mean(recent_returns):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
