#!/usr/bin/python3
"""scikit-learn's side of test_sweep_gp (issue 34): reads the fixed data, skinner's fitted
hyperparameters (logs: constant, length scale, linear constant, DotProduct's sigma_0, white
noise), its log marginal likelihood and its predictions from the JSON file test_sweep_gp.c
writes, and checks them against GaussianProcessRegressor with the same kernel:

1. at skinner's hyperparameters (optimizer=None): the log marginal likelihood to 1e-8
   relative, the predictive mean and std (std of a noisy observation: scikit-learn's predict
   counts the WhiteKernel) to 1e-7;
2. scikit-learn's own fit (L-BFGS-B, the same bounds, restarts): skinner's Nelder-Mead
   reaches a log marginal likelihood at least scikit-learn's less 1e-3 relative, and where
   the two optima agree (within 1e-2) their predictions agree to 1e-2.

Exit 0 when all hold, 1 naming the first miss, 77 when scikit-learn is not installed.
usage: test_sweep_gp.py DATA.json
"""
import json
import sys

try:
    import numpy as np
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, DotProduct, Matern, WhiteKernel
except ImportError as missing:
    print(f"SKIPPED: scikit-learn is missing ({missing})")
    sys.exit(77)


def kernel(theta, bounds):
    c, length, linear, bias, noise = np.exp(theta)
    return (ConstantKernel(c, bounds) * Matern(length, bounds, nu=1.5)
            + ConstantKernel(linear, bounds) * DotProduct(bias, bounds)
            + WhiteKernel(noise, bounds))


def main():
    data = json.load(open(sys.argv[1]))
    x, y, xq = np.array(data["x"]), np.array(data["y"]), np.array(data["xq"])
    bound = float(np.exp(data["log_bound"]))
    bounds = (1.0 / bound, bound)
    failures = []

    fixed = GaussianProcessRegressor(kernel(data["theta"], bounds), alpha=1e-10, optimizer=None,
                                     normalize_y=False).fit(x, y)
    lml = fixed.log_marginal_likelihood_value_
    mean, std = fixed.predict(xq, return_std=True)
    print(f"at skinner's hyperparameters: lml skinner {data['lml']:.10f} sklearn {lml:.10f}")
    print(f"  mean max |diff| {np.max(np.abs(mean - data['mean'])):.3g}, "
          f"std max |diff| {np.max(np.abs(std - data['std'])):.3g}")
    if abs(lml - data["lml"]) > 1e-8 * max(1.0, abs(lml)):
        failures.append(f"log marginal likelihood {data['lml']} vs scikit-learn's {lml}")
    if np.max(np.abs(mean - data["mean"])) > 1e-7:
        failures.append(f"predictive mean {data['mean']} vs scikit-learn's {mean.tolist()}")
    if np.max(np.abs(std - data["std"])) > 1e-7:
        failures.append(f"predictive std {data['std']} vs scikit-learn's {std.tolist()}")

    fitted = GaussianProcessRegressor(kernel([0.0] * 5, bounds), alpha=1e-10, normalize_y=False,
                                      n_restarts_optimizer=data["restarts"],
                                      random_state=0).fit(x, y)
    best = fitted.log_marginal_likelihood_value_
    print(f"fitted: lml skinner {data['lml']:.6f} sklearn {best:.6f} ({fitted.kernel_})")
    if data["lml"] < best - 1e-3 * max(1.0, abs(best)):
        failures.append(f"skinner's fit reaches lml {data['lml']}, scikit-learn's {best}")
    if abs(data["lml"] - best) < 1e-2:
        fit_mean, fit_std = fitted.predict(xq, return_std=True)
        print(f"  same optimum: mean max |diff| {np.max(np.abs(fit_mean - data['mean'])):.3g}, "
              f"std max |diff| {np.max(np.abs(fit_std - data['std'])):.3g}")
        if np.max(np.abs(fit_mean - data["mean"])) > 1e-2 or np.max(np.abs(fit_std - data["std"])) > 1e-2:
            failures.append("at the same optimum the predictions differ by more than 1e-2")
    for failure in failures:
        print("FAILED:", failure)
    sys.exit(1 if failures else 0)


main()
