#!/usr/bin/python3
"""skinner serve at scale (issue 35 ask 6): RUNS run folders of ROWS metric rows each (one
synthetic metrics.csv hard-linked into every folder, beside a real run's live.bin and
config.ini), then
  1. the list: GET /api/runs (median of 5) and the list page drawn in headless Chromium;
  2. a run page: from navigation until its return chart holds all ROWS rows, in Chromium;
  3. training cost of watchers: `skinner bench train`-style steps/s of a CartPole run with no
     page open and with PAGES live streams open on it (steps/s from summary.json, median of 3).
usage: bench/serve_scale.py BUILD [RUNS ROWS PAGES]   (defaults 200 100000 20)
Prints a Markdown table; needs chromium, chromium-driver and python3-selenium.
"""
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from test_serve import Server, train  # noqa: E402


def main():
    build = sys.argv[1]
    runs, rows, pages = (int(a) for a in (sys.argv[2:5] or [200, 100000, 20]))
    skinner = os.path.join(build, "skinner")
    tmp = tempfile.mkdtemp(prefix="skinner-serve-scale-")
    root = os.path.join(tmp, "runs")
    seed_run = os.path.join(tmp, "seed")
    train(skinner, seed_run, 1, 8192).wait()
    csv = os.path.join(tmp, "metrics.csv")
    with open(csv, "w") as f:
        f.write("update,steps,wall_seconds,sps,mean_return,mean_length,episodes,policy_loss,"
                "value_loss,entropy,approx_kl,clip_fraction,explained_variance,learning_rate\n")
        for u in range(1, rows + 1):
            f.write(f"{u},{u * 2048},{u * 0.01:.3f},150000,{min(500, u * 0.05):.4f},{min(500, u * 0.05):.4f},"
                    f"{u * 4},-0.0110590296,0.376186,0.687206233,0.0060076565,0.0808105469,-0.00796404,0.0025\n")
    for k in range(runs):
        d = os.path.join(root, f"run-{k:04d}")
        os.makedirs(d)
        os.link(csv, os.path.join(d, "metrics.csv"))
        for name in ("live.bin", "config.ini", "summary.json"):
            shutil.copy(os.path.join(seed_run, name), d)
    size_mb = os.path.getsize(csv) / 1e6
    server = Server(skinner, [root])
    times = []
    for _ in range(5):
        t = time.perf_counter()
        status, body, _ = server.get("/api/runs")
        times.append(time.perf_counter() - t)
    listed = len(json.loads(body)["runs"])

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    profile = tempfile.mkdtemp(prefix="skinner-serve-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--window-size=1280,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    base = f"http://127.0.0.1:{server.port}/"

    def until(js, timeout=30):
        t = time.perf_counter()
        while time.perf_counter() - t < timeout:
            if driver.execute_script(js):
                return time.perf_counter() - t
            time.sleep(0.01)
        return float("nan")

    list_page, run_page = [], []
    for k in range(3):
        driver.get("about:blank")
        driver.get(base)
        list_page.append(until(f"return document.querySelectorAll('#runs tr[data-run]').length === {runs}"))
        driver.get("about:blank")
        driver.get(base + f"#/run/0%2Frun-{k:04d}")
        run_page.append(until("const c = document.querySelector('[data-chart=sps]');"
                              f"return c && c.dataset.points === '{rows}'"))
    driver.quit()

    # watchers' cost on a training run
    def sps_run(watchers):
        d = os.path.join(root, f"live-{watchers}-{time.time_ns()}")
        proc = train(skinner, d, 1, 2000000, ["--threads", "1"])
        while not os.path.exists(os.path.join(d, "metrics.csv")):
            time.sleep(0.01)
        stop = threading.Event()

        def watch():
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            try:
                conn.request("GET", f"/api/stream?run=0/{os.path.basename(d)}&from=0")
                r = conn.getresponse()
                while not stop.is_set() and r.read1(65536):
                    pass
            except (OSError, http.client.HTTPException):
                pass  # the server stopping ends the stream
            conn.close()
        threads = [threading.Thread(target=watch, daemon=True) for _ in range(watchers)]
        for t in threads:
            t.start()
        proc.wait()
        stop.set()
        return json.load(open(os.path.join(d, "summary.json")))["sps"]
    base_sps, watched_sps = [], []
    for _ in range(3):
        base_sps.append(sps_run(0))
        watched_sps.append(sps_run(pages))
    server.stop()
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(profile, ignore_errors=True)
    b, w = statistics.median(base_sps), statistics.median(watched_sps)
    print(f"| measure ({runs} runs x {rows} rows, metrics.csv {size_mb:.1f} MB each) | figure |")
    print("|---|---|")
    print(f"| GET /api/runs ({listed} runs), median of 5 | {statistics.median(times) * 1000:.0f} ms |")
    print(f"| list page drawn in Chromium, median of 3 | {statistics.median(list_page) * 1000:.0f} ms |")
    print(f"| run page: all {rows} rows on its charts, median of 3 | {statistics.median(run_page) * 1000:.0f} ms |")
    print(f"| CartPole steps/s, 1 thread, no page open (median of 3: {', '.join(f'{x:.0f}' for x in base_sps)}) | {b:.0f} |")
    print(f"| same with {pages} live streams open ({', '.join(f'{x:.0f}' for x in watched_sps)}) | {w:.0f} ({(w / b - 1) * 100:+.1f}%) |")


if __name__ == "__main__":
    main()
