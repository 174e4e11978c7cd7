#!/usr/bin/python3
"""The dashboard's chart library, measured (issue 47 ask 1): Debian's dygraphs and Chart.js,
each drawing in headless Chromium what skinner serve's pages draw, from navigation's end to
the frame after the charts are painted:
  1. one series of ROWS points, not thinned (the library alone at full scale);
  2. a run page: the 7 charts of metrics.csv, each one run thinned to 2,000 points as app.js
     does (MAX_POINTS);
  3. RUNS runs overlaid on one chart, each thinned to 2,000 points (every run of the list
     ticked at once).
The page and the library files are read from disk (file://), nothing from a network.
usage: bench/serve_charts.py [RUNS ROWS REPEATS]   (defaults 200 100000 3)
Prints a Markdown table (median of REPEATS, each in a fresh page); needs chromium,
chromium-driver, python3-selenium, libjs-dygraphs and libjs-chart.js.
"""
import json
import os
import shutil
import statistics
import sys
import tempfile

LIBRARIES = {
    "dygraphs 2.2.1": ["/usr/share/javascript/dygraphs/dygraph.min.js"],
    "Chart.js 3.9.1": ["/usr/share/javascript/chart.js/chart.min.js"],
}
MAX_POINTS = 2000  # app.js's points per run and chart
CHARTS_PER_RUN = 7

# The same synthetic rows for both: a rising return with noise, x the steps (2,048 a row).
PAGE = """<!doctype html><meta charset="utf-8"><body>%(scripts)s<script>
'use strict';
function rows(n, seed) {
  let s = seed >>> 0; const xs = new Array(n), ys = new Array(n);
  for (let k = 0; k < n; k++) { s = (s * 1664525 + 1013904223) >>> 0;
    xs[k] = (k + 1) * 2048; ys[k] = Math.min(500, (k + 1) * 0.05) + (s / 4294967296 - 0.5) * 40; }
  return [xs, ys];
}
function thin([xs, ys], max) {
  const stride = Math.max(1, Math.ceil(xs.length / max)), px = [], py = [];
  for (let k = stride - 1; k < xs.length; k += stride) { px.push(xs[k]); py.push(ys[k]); }
  return [px, py];
}
function box() { const d = document.createElement('div'); d.style.width = '500px';
  d.style.height = '220px'; d.style.position = 'relative'; document.body.append(d); return d; }
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd'];
function dygraph(series) { /* series: [[xs, ys], ...] sharing one x axis */
  const data = series[0][0].map((x, k) => [x, ...series.map(s => s[1][k])]);
  new Dygraph(box(), data, {labels: ['x', ...series.map((_, k) => 'r' + k)], width: 500,
    height: 220, colors: series.map((_, k) => COLORS[k %% COLORS.length]), legend: 'never',
    connectSeparatedPoints: true, strokeWidth: 1.5});
}
function chartjs(series) {
  const canvas = document.createElement('canvas'); canvas.width = 500; canvas.height = 220;
  box().append(canvas);
  new Chart(canvas, {type: 'line', data: {datasets: series.map(([xs, ys], k) => ({
      data: Array.from(xs, (x, i) => ({x, y: ys[i]})), borderColor: COLORS[k %% COLORS.length],
      borderWidth: 1.5, pointRadius: 0, spanGaps: true}))},
    options: {animation: false, responsive: false, maintainAspectRatio: false, parsing: false,
      normalized: true, plugins: {legend: {display: false}, tooltip: {enabled: false}},
      scales: {x: {type: 'linear'}}}});
}
const draw = %(draw)s, runs = %(runs)d, n = %(rows)d, max = %(max)d, per = %(charts)d;
const made = {single: () => [[rows(n, 1)]],
              page: () => Array.from({length: per}, (_, k) => [thin(rows(n, k + 1), max)]),
              overlay: () => [Array.from({length: runs}, (_, k) => thin(rows(n, k + 1), max))]};
window.measure = (kind, done) => {
  const charts = made[kind]();  /* the data made before the clock starts: the library only */
  const t = performance.now();
  for (const series of charts) draw(series);
  requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - t)));
};
</script>"""


def main():
    runs, rows, repeats = (int(a) for a in (sys.argv[1:4] or [200, 100000, 3]))
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    tmp = tempfile.mkdtemp(prefix="skinner-serve-charts-")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--allow-file-access-from-files", f"--user-data-dir={tmp}/profile",
                 "--window-size=1280,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(120)
    results = {}
    try:
        for name, files in LIBRARIES.items():
            page = os.path.join(tmp, name.split()[0] + ".html")
            with open(page, "w") as f:
                f.write(PAGE % {"scripts": "".join(f'<script src="file://{p}"></script>' for p in files),
                                "draw": "dygraph" if "dygraphs" in name else "chartjs",
                                "runs": runs, "rows": rows, "max": MAX_POINTS,
                                "charts": CHARTS_PER_RUN})
            for kind in ("single", "page", "overlay"):
                times = []
                for _ in range(repeats):
                    driver.get("about:blank")
                    driver.get("file://" + page)
                    times.append(driver.execute_async_script(
                        "window.measure(arguments[0], arguments[1]);", kind))
                results[(name, kind)] = times
                if os.environ.get("SKINNER_CHARTS_SHOTS"):  # to look at what was drawn
                    driver.save_screenshot(f"{os.environ['SKINNER_CHARTS_SHOTS']}/{name.split()[0]}-{kind}.png")
    finally:
        driver.quit()
        shutil.rmtree(tmp, ignore_errors=True)
    labels = {"single": f"one series of {rows} points, not thinned",
              "page": f"a run page: {CHARTS_PER_RUN} charts of {MAX_POINTS} points",
              "overlay": f"{runs} runs overlaid, {MAX_POINTS} points each"}
    names = list(LIBRARIES)
    print("| drawn (ms, median of %d) | %s |" % (repeats, " | ".join(names)))
    print("|---|" + "---|" * len(names))
    for kind, label in labels.items():
        cells = [f"{statistics.median(results[(n, kind)]):.0f} "
                 f"({', '.join(f'{t:.0f}' for t in results[(n, kind)])})" for n in names]
        print(f"| {label} | {' | '.join(cells)} |")
    json.dump({f"{n}/{k}": v for (n, k), v in results.items()}, sys.stderr)
    print(file=sys.stderr)


if __name__ == "__main__":
    main()
