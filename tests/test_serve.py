#!/usr/bin/python3
"""skinner serve (issue 35). Two modes:

security BUILD: the server's refusals, through raw HTTP (http.client sends paths as written):
  "..", encoded dots, absolute paths, a symlinked folder and file pointing out of the root
  (refused) and one pointing inside it (served: the control), methods other than GET/HEAD,
  a foreign Host header; hostile run files (a truncated CSV row, NaN, bad UTF-8 in the
  config, a line longer than the server's 4 MiB chunk, a run deleted while streamed) give
  answers the page can show, and the server stays up. Loopback is the default bind.

browser BUILD SOURCE: headless Chromium (Debian's chromium and chromium-driver, python3-selenium)
  against a server on a free loopback port: the list shows the test's runs; a training the
  test starts gains rows on its chart while the page is open; three seeds overlay as three
  series whose point counts are those of their metrics.csv; two runs' config difference names
  the key that differs; a sweep's front has the trials that the test's own Pareto check finds.
  A Prover run with a proofs file (skinner eval Prover-v0 --proofs) shows its proofs as trees;
  a MinAtar run with a GIF recorded by skinner eval --video shows it loaded.
  Screenshots go to BUILD/serve-screenshots/, or with SKINNER_WRITE_SCREENSHOTS=1 to
  SOURCE/docs/dashboard-*.png (docs/dashboard.md shows them), so a test run leaves the tree clean.

exit BUILD: SIGTERM stops the server within 1.5 s, idle and while it lists 15,000 runs.

proofs BUILD: skinner eval Prover-v0 --proofs on a knowledge base written here whose proofs are
  known by hand: the file holds each query's goals, successors, the fact or rule each came from,
  and the outcome, as derived below.

Exit 0 when all hold, 1 naming the first miss, 77 (skipped, loudly) when Chromium, chromedriver
or selenium is missing, unless CI=true, which turns the skip into a failure.
"""
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skinner_proc  # noqa: E402
from skinner_proc import check  # noqa: E402


def skip(why):
    if os.environ.get("CI") == "true":
        print(f"FAIL (CI=true): {why}")
        sys.exit(1)
    print(f"SKIPPED: {why}")
    sys.exit(77)


def train(skinner, run_dir, seed, steps, extra=()):
    return skinner_proc.start([skinner, "train", "CartPole-v1", "--seed", str(seed),
                               "--total-steps", str(steps), "--run-dir", run_dir, "--force",
                               "--quiet", *extra], stdout=subprocess.DEVNULL)


def monitor_state(skinner, run_dir):
    """The state in skinner monitor's snapshot title: 'skinner monitor: ENV (STATE)'."""
    out = skinner_proc.run([skinner, "monitor", run_dir, "--once"], timeout=30).stdout
    first = out.splitlines()[0] if out else ""
    return first[first.rfind("(") + 1:-1] if first.endswith(")") else first


def sse_events(raw):
    """The events a browser's EventSource dispatches from the bytes of a text/event-stream
    (the HTML standard's "event stream interpretation"): lines end in CRLF, LF or CR; a blank
    line dispatches the event gathered so far (its type from `event:`, "message" without one;
    its data the `data:` lines joined by LF; none when it has no data); a line starting with
    ':' is a comment; one space after the colon is dropped. A last event not yet ended by a
    blank line is not dispatched. Returns [(type, data), ...]."""
    events, kind, data = [], "", []
    for line in raw.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n").split("\n")[:-1]:
        if line == "":
            if data:
                events.append((kind or "message", "\n".join(data)))
            kind, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            kind = value
        elif field == "data":
            data.append(value)
    return events


class Server:
    def __init__(self, skinner, roots, extra=()):
        self.port_file = tempfile.mktemp(prefix="skinner-serve-port-")
        self.proc = skinner_proc.start([skinner, "serve", *roots, "--port", "0", "--port-file",
                                        self.port_file, *extra], stdout=subprocess.PIPE, text=True)
        deadline = time.time() + 10
        while not os.path.exists(self.port_file):
            if self.proc.poll() is not None or time.time() > deadline:
                raise SystemExit(f"FAIL: skinner serve did not start (exit {self.proc.poll()})")
            time.sleep(0.02)
        self.port = int(open(self.port_file).read())
        self.banner = self.proc.stdout.readline()

    def get(self, path, method="GET", headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.putrequest(method, path, skip_host="Host" in (headers or {}), skip_accept_encoding=True)
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        conn.endheaders()
        r = conn.getresponse()
        # a stream never ends: its first bytes tell whether it was served
        body = r.read1(4096) if r.getheader("Content-Type") == "text/event-stream" else r.read()
        conn.close()
        return r.status, body, dict(r.getheaders())

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            skinner_proc.kill_group(self.proc)
            return None
        finally:
            os.unlink(self.port_file)


def security(build):
    skinner = os.path.join(build, "skinner")
    tmp = tempfile.mkdtemp(prefix="skinner-serve-sec-")
    root, outside = os.path.join(tmp, "root"), os.path.join(tmp, "outside")
    os.makedirs(outside)
    with open(os.path.join(outside, "secret.csv"), "w") as f:
        f.write("secret,value\n1,2\n")
    with open(os.path.join(outside, "metrics.csv"), "w") as f:
        f.write("secret,value\n1,2\n")
    run = os.path.join(root, "run-a")
    skinner_proc.wait(train(skinner, run, 1, 8192), 30)
    os.symlink(outside, os.path.join(root, "link-out"))               # a folder out of the root
    os.makedirs(os.path.join(root, "run-b"))
    os.symlink(os.path.join(outside, "secret.csv"), os.path.join(root, "run-b", "metrics.csv"))
    os.symlink(run, os.path.join(root, "link-in"))                    # inside: allowed
    hostile = os.path.join(root, "hostile")
    os.makedirs(hostile)
    with open(os.path.join(hostile, "metrics.csv"), "wb") as f:
        f.write(b"update,steps,mean_return\n1,10,nan\n2,20,5\n3,3")  # NaN and a cut last row
    with open(os.path.join(hostile, "config.ini"), "wb") as f:
        f.write(b"[env]\nid = Bad\xff\xfeUTF8\xf8\x80\x80\xed\xa0\x80\n")  # F8: no lead byte; ED A0: a surrogate
    giant = os.path.join(root, "giant")
    os.makedirs(giant)
    with open(os.path.join(giant, "metrics.csv"), "wb") as f:
        f.write(b"update,steps\n" + b"9" * (5 << 20) + b"\n1,2\n")

    server = Server(skinner, [root])
    check(server.banner.startswith("skinner serve: http://127.0.0.1:"),
          f"binds loopback by default ({server.banner.strip()})")
    status, body, _ = server.get("/api/runs")
    listing = json.loads(body)
    ids = sorted(r["id"] for r in listing["runs"])
    check(status == 200 and "0/run-a" in ids, f"the run is listed ({ids})")
    check(not any("link-out" in i or "link-in" in i for i in ids), "symlinked folders not listed")
    status, body, _ = server.get("/api/file?run=0/run-a&name=metrics.csv")
    real = open(os.path.join(run, "metrics.csv"), "rb").read()
    check(status == 200 and body == real, "a run's metrics.csv is served as written")
    status, body, _ = server.get("/api/file?run=0/link-in&name=metrics.csv")
    check(status == 200 and body == real, "a symlink to a folder inside the root is followed")
    refused = [
        "/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2f..%2fetc/passwd",
        "//etc/passwd", "/vendor/../../../../etc/passwd",
        "/api/file?run=0/..&name=passwd", "/api/file?run=0/%2e%2e/outside&name=secret.csv",
        "/api/file?run=0/../outside&name=secret.csv", "/api/file?run=0/link-out&name=secret.csv",
        "/api/file?run=0/link-out&name=metrics.csv", "/api/file?run=0/run-b&name=metrics.csv",
        "/api/file?run=0/run-a&name=../../outside/secret.csv",
        "/api/file?run=0/run-a&name=%2fetc%2fpasswd", "/api/file?run=/etc&name=passwd",
        "/api/file?run=0//etc&name=passwd", "/api/file?run=1&name=passwd",
        "/api/file?run=-1&name=passwd", "/api/file?run=0/run-a&name=.hidden",
        "/api/files?run=0/link-out", "/api/status?run=0/link-out", "/api/stream?run=0/link-out",
    ]
    for path in refused:
        status, body, _ = server.get(path)
        leaked = b"secret" in body or b"root:" in body
        check(status in (400, 403, 404) and not leaked, f"refused {path} ({status})")
    # /api/media: a run's videos, whole, with their type; the same refusals
    gif = b"GIF89a\x02\x00\x02\x00\x00\x00\x00;"
    os.makedirs(os.path.join(run, "videos"))
    with open(os.path.join(run, "videos", "episodes.gif"), "wb") as f:
        f.write(gif)
    with open(os.path.join(outside, "secret.gif"), "wb") as f:
        f.write(b"GIF89a secret")
    os.symlink(os.path.join(outside, "secret.gif"), os.path.join(run, "videos", "out.gif"))
    os.symlink(outside, os.path.join(root, "run-b", "videos"))  # a videos folder out of the root
    with open(os.path.join(run, "videos", "huge.mp4"), "wb") as f:
        f.truncate(300 << 20)  # sparse: past the 256 MiB limit
    status, body, headers = server.get("/api/media?run=0/run-a&name=videos/episodes.gif")
    check(status == 200 and body == gif and headers.get("Content-Type") == "image/gif",
          f"a run's GIF is served whole as image/gif ({status}, {headers.get('Content-Type')})")
    mp4 = b"\x00\x00\x00\x18ftypmp42" + bytes(12)
    with open(os.path.join(run, "episode.mp4"), "wb") as f:
        f.write(mp4)
    status, body, headers = server.get("/api/media?run=0/run-a&name=episode.mp4")
    check(status == 200 and body == mp4 and headers.get("Content-Type") == "video/mp4",
          f"a run's MP4 beside its files is served as video/mp4 ({status}, {headers.get('Content-Type')})")
    status, body, _ = server.get("/api/files?run=0/run-a")
    files = json.loads(body)
    check("videos/episodes.gif" in files and "videos/huge.mp4" in files,
          f"the run's files list its videos ({[f for f in files if 'videos' in f]})")
    status, body, _ = server.get("/api/files?run=0/run-b")
    check(status == 200 and not any("videos/" in f for f in json.loads(body)),
          "a symlinked videos folder is not listed")
    status, _, _ = server.get("/api/media?run=0/run-a&name=videos/huge.mp4", method="HEAD")
    check(status == 413, f"a video past 256 MiB is refused ({status})")
    for path in ["/api/media?run=0/run-a&name=videos/out.gif",
                 "/api/media?run=0/run-b&name=videos/secret.gif",
                 "/api/media?run=0/run-a&name=../../outside/secret.gif",
                 "/api/media?run=0/run-a&name=videos/../../../outside/secret.gif",
                 "/api/media?run=0/run-a&name=%2e%2e%2f%2e%2e%2foutside%2fsecret.gif",
                 "/api/media?run=0/run-a&name=videos/%2e%2e/%2e%2e/outside/secret.gif",
                 "/api/media?run=0/run-a&name=/tmp/secret.gif",
                 "/api/media?run=0/run-a&name=%2ftmp%2fsecret.gif",
                 "/api/media?run=0/%2e%2e/outside&name=secret.gif",
                 "/api/media?run=0/../outside&name=secret.gif",
                 "/api/media?run=0/link-out&name=secret.gif", "/api/media?run=/tmp&name=secret.gif",
                 "/api/media?run=0/run-a&name=metrics.csv", "/api/media?run=0/run-a&name=.x.gif",
                 "/api/media?run=0/run-a&name=videos/videos/episodes.gif",
                 "/api/media?run=0/run-a&name=other/episodes.gif"]:
        status, body, _ = server.get(path)
        check(status in (400, 403, 404) and b"secret" not in body and b"GIF" not in body,
              f"refused {path} ({status})")
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        status, _, _ = server.get("/api/runs", method=method)
        check(status == 405, f"{method} refused ({status})")
    status, _, _ = server.get("/api/runs", headers={"Host": "evil.example:80"})
    check(status == 403, f"a foreign Host header refused ({status})")
    status, head_body, _ = server.get("/api/runs", method="HEAD")
    check(status == 200 and head_body == b"", "HEAD answered without a body")

    # hostile files: answers the page can show
    status, body, _ = server.get("/api/status?run=0/hostile")
    state = json.loads(body.decode("utf-8"))  # valid UTF-8 JSON whatever config.ini holds
    check(status == 200 and state["env"] == "Bad\ufffd\ufffdUTF8" + "\ufffd" * 6, f"bad UTF-8 escaped ({state})")
    status, body, headers = server.get("/api/file?run=0/hostile&name=metrics.csv")
    check(body == b"update,steps,mean_return\n1,10,nan\n2,20,5\n",
          "a cut last row is held back until its newline comes")
    status, body, headers = server.get("/api/file?run=0/giant&name=metrics.csv&from=13")
    skipped = int(headers.get("X-Skipped-Bytes", 0))
    check(status == 200 and skipped == (5 << 20) + 1 and body == b"",
          f"a 5 MiB line is skipped and said so ({skipped} bytes)")
    nxt = int(headers["X-Next-Offset"])
    status, body, _ = server.get(f"/api/file?run=0/giant&name=metrics.csv&from={nxt}")
    check(body == b"1,2\n", "the row after the giant line is served")
    # a run deleted while streamed: a failure event, then the server goes on. The stream is read
    # as the page's EventSource reads it (sse_events): a byte search passed while the failure
    # event lacked its ending blank line and merged into the next status event (issue 53).
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", "/api/stream?run=0/hostile&from=0")
    r = conn.getresponse()
    got = r.read1(65536)
    deadline = time.time() + 30  # the rows first (a loaded server may send a comment before them)
    while not any(e[0] == "message" for e in sse_events(got)) and time.time() < deadline:
        got += r.read1(65536)
    shutil.rmtree(hostile)
    # the failure, then a status event after it (what the blank line keeps apart)
    deadline = time.time() + 30
    while time.time() < deadline:
        kinds = [e[0] for e in sse_events(got)]
        if "failure" in kinds and "status" in kinds[kinds.index("failure"):]:
            break
        got += r.read1(65536)
    conn.close()
    events = sse_events(got)
    rows = [data for kind, data in events if kind == "message"]
    check(rows[:1] == ["update,steps,mean_return\n1,10,nan\n2,20,5"],
          f"the stream's first rows event holds the file's complete rows ({rows[:1]})")
    failures = [data for kind, data in events if kind == "failure"]
    check(failures == ["the run's metrics.csv is gone"],
          f"a deleted run's stream says so in one failure event ({failures})")
    unparsed = []
    for kind, data in events:
        if kind == "status":
            try:
                json.loads(data)
            except ValueError:
                unparsed.append(data)
    check(not unparsed and any(kind == "status" for kind, _ in events),
          f"every status event's data is JSON, as the page parses it ({unparsed[:1]})")
    # status: running while the trainer holds run.lock; a trainer killed outright leaves
    # live.bin saying running, and the free lock makes it interrupted
    killed = os.path.join(root, "killed")
    proc = train(skinner, killed, 3, 50000000, ["--env.num_envs", "1", "--threads", "1"])
    deadline = time.time() + 10
    state = {}
    while time.time() < deadline and state.get("steps", 0) == 0:
        time.sleep(0.05)
        state = json.loads(server.get("/api/status?run=0/killed")[1] or b"{}")
    check(state.get("status") == "running", f"a training run shows running ({state.get('status')})")
    check(monitor_state(skinner, killed) == "running",
          f"skinner monitor says running too ({monitor_state(skinner, killed)})")
    skinner_proc.kill_group(proc)
    state = json.loads(server.get("/api/status?run=0/killed")[1])
    check(state["status"] == "interrupted", f"a killed run shows interrupted ({state['status']})")
    # one rule for both (issue 52 ask 7): the monitor stayed at "running" forever
    check(monitor_state(skinner, killed) == "interrupted",
          f"skinner monitor says interrupted too ({monitor_state(skinner, killed)})")
    status, _, _ = server.get("/api/runs")
    check(status == 200 and server.proc.poll() is None, "the server is still up")
    check(server.stop() == 0, "SIGINT stops the server with status 0")
    shutil.rmtree(tmp)


def exit_time(build):
    """SIGTERM stops the server promptly (issue 52 ask 7: it took 2-4 s): idle, and while it
    lists a folder of 15,000 runs, an answer that takes seconds and that stopping used to wait
    for. The runs share one config.ini and run.lock through hard links, so the tree is quick to
    make."""
    skinner = os.path.join(build, "skinner")
    tmp = tempfile.mkdtemp(prefix="skinner-serve-exit-")
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "many"))
    config, lock = os.path.join(tmp, "config.ini"), os.path.join(tmp, "run.lock")
    with open(config, "w") as f:
        f.write("[env]\nid = CartPole-v1\n")
    open(lock, "w").close()
    for k in range(15000):
        run = os.path.join(root, "many", f"run-{k:05d}")
        os.mkdir(run)
        os.link(config, os.path.join(run, "config.ini"))
        os.link(lock, os.path.join(run, "run.lock"))

    server = Server(skinner, [root])
    start = time.time()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)  # a loaded machine
    conn.request("GET", "/api/runs")
    answer = conn.getresponse()
    status, body = answer.status, answer.read()
    conn.close()
    listing = time.time() - start
    check(status == 200 and len(json.loads(body)["runs"]) == 15000,
          f"the 15,000 runs are listed ({listing:.2f} s)")
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    conn.request("GET", "/api/runs")  # a listing in progress, not read
    time.sleep(0.1)
    start = time.time()
    server.proc.send_signal(signal.SIGTERM)
    code = skinner_proc.wait(server.proc, 30)
    stopped = time.time() - start
    # the listing in progress was cut off, not waited for: no whole answer reached the client.
    # (A bound of a third of the first listing's time, 0.93 s on a loaded CI machine, failed
    # at 0.67 s there; whether the answer arrived does not depend on the machine's load.)
    try:
        answer = conn.getresponse()
        whole = answer.status == 200 and len(json.loads(answer.read())["runs"]) == 15000
    except (http.client.HTTPException, ConnectionError, ValueError):
        whole = False
    conn.close()
    os.unlink(server.port_file)
    # 1.5 s: generous for a loaded machine, and short of the 2-4 s reported
    check(code == 0 and stopped < 1.5 and not whole,
          f"SIGTERM during a listing stops the server in {stopped:.3f} s (status {code}; the "
          f"listing takes {listing:.2f} s; {'its whole answer was sent' if whole else 'cut off'})")

    server = Server(skinner, [os.path.join(root, "many", "run-00000")])
    start = time.time()
    server.proc.send_signal(signal.SIGTERM)
    code = skinner_proc.wait(server.proc, 30)
    stopped = time.time() - start
    os.unlink(server.port_file)
    check(code == 0 and stopped < 1.5, f"SIGTERM stops an idle server in {stopped:.3f} s")
    shutil.rmtree(tmp)


def make_sweep(root):
    """A sweep folder as skinner sweep writes it; returns the trial numbers on its front."""
    sweep = os.path.join(root, "sweep-a")
    os.makedirs(sweep)
    with open(os.path.join(sweep, "sweep.ini"), "w") as f:
        f.write("[sweep]\nmetric = final_mean_return\ngoal = max\n")
    trials = [(0, 100, 1000), (1, 150, 2000), (2, 120, 2500), (3, 300, 4000), (4, 90, 500),
              (5, 250, 5000), (6, 310, 8000)]
    with open(os.path.join(sweep, "sweep.jsonl"), "w") as f:
        for n, metric, cost in trials:
            f.write(json.dumps({"trial": n, "status": "ok", "params": {"ppo.learning_rate": 1e-3 * (n + 1)},
                                "metric": metric, "cost": cost}) + "\n")
        f.write('{"trial": 7, "status": "failed", "message": "diverged"}\n{"trial": 8, "sta')
    front = [n for n, m, c in trials
             if not any((c2 <= c and m2 >= m) and (c2, m2) != (c, m) for _, m2, c2 in trials)]
    return front


def make_morpho(root):
    """A Morpho-v0 run folder with an eval trace (the format of src/train/eval.c's trace_step):
    the seed-1 controller of docs/morpho.md over 45 epochs. Returns each slot's expected stages,
    written out by segment from lifecycle.h's rules (not replayed)."""
    run = os.path.join(root, "morpho")
    os.makedirs(run)
    with open(os.path.join(run, "config.ini"), "w") as f:
        f.write("[env]\nid = Morpho-v0\n")
    ops = {0: ("GERMINATE", 0), 11: ("ADVANCE", 0), 12: ("GERMINATE", 2), 14: ("ADVANCE", 0),
           15: ("FOSSILIZE", 0), 23: ("ADVANCE", 2), 24: ("GERMINATE", 1), 26: ("ADVANCE", 2),
           27: ("FOSSILIZE", 2), 30: ("PRUNE", 1)}
    epochs = 45
    with open(os.path.join(run, "trace.jsonl"), "w") as f:
        for e in range(epochs):
            op, slot = ops.get(e, ("WAIT", 0))
            f.write(json.dumps({"env": 0, "episode": 0, "step": e, "action": [0, slot, 0, 0, 0, 0, 0, 0],
                                "op": op, "reward": 0.0}) + "\n")
        f.write(json.dumps({"env": 0, "episode": 0, "end": True, "return": 1.5, "length": epochs,
                            "test_acc": 0.8612, "extra_params": 4224, "fossils": 2}) + "\n")

    def segments(*parts):
        out = []
        for stage, n in parts:
            out += [stage] * n
        assert len(out) == epochs
        return ",".join(out)
    return [segments(("GERMINATED", 1), ("TRAINING", 10), ("BLENDING", 3), ("HOLDING", 1),
                     ("FOSSILIZED", 30)),
            segments(("DORMANT", 24), ("GERMINATED", 1), ("TRAINING", 5), ("PRUNED", 1),
                     ("EMBARGOED", 5), ("RESETTING", 1), ("DORMANT", 8)),
            segments(("DORMANT", 12), ("GERMINATED", 1), ("TRAINING", 10), ("BLENDING", 3),
                     ("HOLDING", 1), ("FOSSILIZED", 18))]


def make_kge(root):
    """A skinner kge run folder: its metrics.csv (modules/prover/kge_run.c's columns), valid
    rankings every 10th epoch (the others empty). Returns the valid MRR column as written."""
    run = os.path.join(root, "kge")
    os.makedirs(run)
    mrr = []
    with open(os.path.join(run, "metrics.csv"), "w") as f:
        f.write("epoch,steps,wall_seconds,loss,valid_mrr,valid_hits1,valid_hits10\n")
        for e in range(1, 61):
            m = round(0.9 - 0.8 * 0.93 ** e, 4) if e % 10 == 0 else None
            mrr.append(m)
            cells = "" if m is None else f"{m},{m - 0.05:.4f},{min(1, m + 0.05):.4f}"
            f.write(f"{e},{e * 1000},{e * 0.1:.3f},{1.0 / e:.6g},{cells or ',,'}\n")
    return mrr


# A knowledge base whose proofs are known by hand (modules/prover: facts before rules, in
# file order; a ground atom that is a train fact drops out; _V1 is the first variable).
PROVER_KB = {
    "rules.txt": "r1:1:parent(X,Y), parent(Y,Z) -> grandparent(X,Z)\n"
                 "r2:1:parent(X,Y), ancestor(Y,Z) -> ancestor(X,Z)\n"
                 "r3:1:parent(X,Z) -> ancestor(X,Z)\n",
    "train.txt": "parent(a,b).\nparent(b,c).\nparent(c,d).\nparent(d,e).\n",
    "valid.txt": "parent(e,f).\n",
    "test.txt": "grandparent(a,c).\ngrandparent(b,e).\nancestor(a,d).\n",
}
R1 = "rule r1: grandparent(A,C) :- parent(A,B), parent(B,C)"
PROVER_PROOFS = [
    # grandparent(a,c): r1, then parent(a,b) leaves parent(b,c), a fact: proved
    {"query": "grandparent(a,c)", "outcome": "proved", "steps": [
        (["grandparent(a,c)"], [(["parent(a,_V1)", "parent(_V1,c)"], R1)]),
        (["parent(a,_V1)", "parent(_V1,c)"], [(["True"], "fact")])]},
    # grandparent(b,e): r1, parent(b,c) leaves parent(c,e), which nothing proves: failed
    {"query": "grandparent(b,e)", "outcome": "failed", "steps": [
        (["grandparent(b,e)"], [(["parent(b,_V1)", "parent(_V1,e)"], R1)]),
        (["parent(b,_V1)", "parent(_V1,e)"], [(["parent(c,e)"], "fact")]),
        (["parent(c,e)"], [(["False"], "none")])]},
]
# ancestor(a,d)'s first step: two rules apply (the policy picks one)
ANCESTOR_FIRST = [(["parent(a,_V1)", "ancestor(_V1,d)"], "rule r2: ancestor(A,C) :- parent(A,B), ancestor(B,C)"),
                  (["parent(a,d)"], "rule r3: ancestor(A,B) :- parent(A,B)")]


def make_prover(skinner, root, tmp):
    """A Prover-v0 run folder with a proofs file, written by the command docs/dashboard.md
    gives; checks the file against PROVER_PROOFS. Returns the proofs."""
    kb = os.path.join(tmp, "kb")
    os.makedirs(kb)
    for name, text in PROVER_KB.items():
        with open(os.path.join(kb, name), "w") as f:
            f.write(text)
    run = os.path.join(root, "prover")
    skinner_proc.run([skinner, "train", "Prover-v0", "--env.dataset", kb, "--total-steps", "2048",
                      "--run-dir", run, "--quiet"], timeout=45, check=True)
    # docs/dashboard.md: skinner eval Prover-v0 --checkpoint RUN --proofs RUN/proofs.jsonl
    out = skinner_proc.run([skinner, "eval", "Prover-v0", "--checkpoint", run, "--proofs",
                            os.path.join(run, "proofs.jsonl")], timeout=45)
    check(out.returncode == 0 and "proofs of 3 queries written" in out.stdout,
          f"skinner eval --proofs writes the proofs ({out.returncode}: {out.stderr.strip()[:200]})")
    proofs = [json.loads(line) for line in open(os.path.join(run, "proofs.jsonl"))]
    check([p["query"] for p in proofs] == ["grandparent(a,c)", "grandparent(b,e)", "ancestor(a,d)"],
          "one proof per test query, in file order")
    for want, got in zip(PROVER_PROOFS, proofs):
        steps = [(st["goals"], [(x["goals"], x["by"]) for x in st["successors"]]) for st in got["steps"]]
        check(got["outcome"] == want["outcome"] and steps == [(g, [tuple(x) for x in xs]) for g, xs in want["steps"]],
              f"the proof of {want['query']} is as derived by hand ({got['outcome']}, {steps})")
    ancestor = proofs[2]
    first = [(x["goals"], x["by"]) for x in ancestor["steps"][0]["successors"]]
    check(first == [tuple(x) for x in ANCESTOR_FIRST], f"ancestor(a,d)'s first step offers r2 and r3 ({first})")
    for k, step in enumerate(ancestor["steps"][:-1]):  # each step goes on from the successor taken
        taken = [x["goals"] for x in step["successors"] if x["index"] == step["chosen"]]
        check(taken == [ancestor["steps"][k + 1]["goals"]], f"ancestor(a,d)'s step {k + 1} follows its choice")
    return proofs


def make_minatar(skinner, root):
    """A MinAtar run folder with a GIF of one episode, recorded as docs/dashboard.md says.
    Returns the GIF's width from its header."""
    run = os.path.join(root, "minatar")
    skinner_proc.run([skinner, "train", "MinAtar/Breakout-v1", "--total-steps", "4096", "--run-dir", run,
                      "--quiet"], timeout=45, check=True)
    gif = os.path.join(run, "videos", "breakout.gif")  # eval makes the folder
    skinner_proc.run([skinner, "eval", "MinAtar/Breakout-v1", "--checkpoint", run, "--episodes", "1",
                      "--video", gif], timeout=45, check=True)
    with open(gif, "rb") as f:
        head = f.read(10)
    check(head[:6] == b"GIF89a", "skinner eval --video wrote a GIF")
    return int.from_bytes(head[6:8], "little")


def make_selfplay(skinner, root):
    """A Connect Four self-play run (4 updates, a pool of 3, three games in ten against the
    searcher at depth 1 or 2). Returns its elo.csv, roles.csv and opponents.csv as
    {column: [cells]}."""
    run = os.path.join(root, "selfplay")
    skinner_proc.run([skinner, "train", "ConnectFour-v0", "--selfplay.enabled", "true",
                      "--selfplay.pool_size", "3", "--selfplay.snapshot_every", "2",
                      "--selfplay.pool_share", "0.5", "--selfplay.opponents", "alphabeta:1, alphabeta:2",
                      "--selfplay.opponent_share", "0.3",
                      "--total-steps", "65536", "--run-dir", run, "--quiet"], timeout=45, check=True)
    tables = []
    for name in ("elo.csv", "roles.csv", "opponents.csv"):
        with open(os.path.join(run, name)) as f:
            rows = [line.rstrip("\n").split(",") for line in f]
        tables.append({c: [r[k] for r in rows[1:]] for k, c in enumerate(rows[0])})
    check(len(tables[0]["learner"]) == 4, f"elo.csv has a row per update ({len(tables[0]['learner'])})")
    return tables


def make_offpolicy(skinner, root):
    """A short SAC run on Pendulum-v1 (gradient steps from step 200). Returns its learner.csv
    as {column: [cells]}."""
    run = os.path.join(root, "sac")
    skinner_proc.run([skinner, "train", "Pendulum-v1", "--train.algo", "sac", "--sac.hidden", "32",
                      "--sac.batch_size", "32", "--sac.learning_starts", "200", "--total-steps", "1000",
                      "--run-dir", run, "--quiet"], timeout=45, check=True)
    with open(os.path.join(run, "learner.csv")) as f:
        rows = [line.rstrip("\n").split(",") for line in f]
    table = {c: [r[k] for r in rows[1:]] for k, c in enumerate(rows[0])}
    check(len(table["alpha"]) >= 10, f"learner.csv has a row every 100 steps ({len(table['alpha'])})")
    check(any(v != "nan" for v in table["qf1_value"]), "learner.csv has Q values once SAC learns")
    return table


def proofs_only(build):
    tmp = tempfile.mkdtemp(prefix="skinner-serve-proofs-")
    try:
        make_prover(os.path.join(build, "skinner"), os.path.join(tmp, "runs"), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def browser(build, source):
    for tool in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
        if not os.access(tool, os.X_OK):
            skip(f"{tool} is missing (scripts/setup.sh --test installs chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
    except ImportError as missing:
        skip(f"python3-selenium is missing ({missing})")
    skinner = os.path.join(build, "skinner")
    tmp = tempfile.mkdtemp(prefix="skinner-serve-ui-")
    root = os.path.join(tmp, "runs")
    seeds = [os.path.join(root, f"cartpole-s{s}") for s in (1, 2, 3)]
    for proc in [train(skinner, d, s, 40960) for s, d in zip((1, 2, 3), seeds)]:
        skinner_proc.wait(proc, 45)
    with open(os.path.join(seeds[2], "config.ini")) as f:
        text = f.read()
    front = make_sweep(root)
    # two of the sweep's trials have runs, as skinner sweep lays them out (DIR/trial-NNNN/seed-S)
    trial_runs = ["0/sweep-a/trial-0000/seed-1", "0/sweep-a/trial-0001/seed-1"]
    for run_id, seed_dir in zip(trial_runs, seeds):
        shutil.copytree(seed_dir, os.path.join(root, run_id[2:]))
    morpho_stages = make_morpho(root)
    kge_mrr = make_kge(root)
    proofs = make_prover(skinner, root, tmp)
    gif_width = make_minatar(skinner, root)
    elo, roles, opponents = make_selfplay(skinner, root)
    sac = make_offpolicy(skinner, root)
    live_dir = os.path.join(root, "live")
    # slowed so it runs through the test: 1 env, a horizon of 32, up to 3M steps; stopped by SIGINT
    live = train(skinner, live_dir, 7, 3000000, ["--env.num_envs", "1", "--ppo.horizon", "32",
                                               "--threads", "1"])
    server = Server(skinner, [root])
    base = f"http://127.0.0.1:{server.port}/"
    profile = tempfile.mkdtemp(prefix="skinner-serve-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1280,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    # screenshots: into the build folder, or with SKINNER_WRITE_SCREENSHOTS=1 into docs/
    if os.environ.get("SKINNER_WRITE_SCREENSHOTS") == "1":
        docs = os.path.join(source, "docs")
    else:
        docs = os.path.join(build, "serve-screenshots")
        os.makedirs(docs, exist_ok=True)
    print(f"screenshots go to {docs}")
    js = driver.execute_script
    try:
        def wait(cond, what, timeout=10):
            deadline = time.time() + timeout
            while time.time() < deadline:
                value = cond()
                if value:
                    return value
                time.sleep(0.1)
            check(False, f"{what} (waited {timeout} s)")
            return None

        driver.get(base)
        listed = wait(lambda: js("return [...document.querySelectorAll('#runs tr[data-run]')]"
                                 ".map(r => r.dataset.run)"), "the runs list appears")
        want = ["0/cartpole-s1", "0/cartpole-s2", "0/cartpole-s3", "0/live", "0/morpho", "0/kge",
                "0/prover", "0/minatar", "0/selfplay"]
        check(listed and all(w in listed for w in want), f"the list shows the test's runs ({listed})")
        wait(lambda: js("const r = document.querySelector('#runs tr[data-run=\"0/live\"]');"
                        "return r && r.dataset.status === 'running'"), "the live run shows running")
        # names as the reader knows them, without the server's "0/" (issue 52 ask 7)
        names = js("return [...document.querySelectorAll('#runs tr[data-run] td:nth-child(2) a')]"
                   ".map(a => a.textContent)")
        check(names and "cartpole-s1" in names and not any(n.startswith("0/") for n in names),
              f"run names carry no root prefix ({names})")
        # a sweep's trials are grouped under the sweep's row, not listed among the runs
        order = js("return [...document.querySelectorAll('#runs tr')].map(r => r.dataset.sweep ? "
                   "'sweep ' + r.dataset.sweep : r.dataset.run ? r.dataset.run + ' ' + r.className : '')")
        check(order.count("sweep 0/sweep-a") == 1, f"the sweep has one row in the list ({order})")
        after = order[order.index("sweep 0/sweep-a") + 1:] if "sweep 0/sweep-a" in order else []
        check(after[:2] == [t + " trial" for t in trial_runs],
              f"its two trial runs follow it, as its trials ({after[:2]})")
        check(not any(o.startswith("0/sweep-a/") for o in order[:order.index("sweep 0/sweep-a")]
                      if "sweep 0/sweep-a" in order),
              "no trial run is listed among the runs")
        labels = js("return [...document.querySelectorAll('#runs tr.trial td:nth-child(2) a')]"
                    ".map(a => a.textContent)")
        check(labels == ["trial-0000/seed-1", "trial-0001/seed-1"],
              f"a trial run is named within its sweep ({labels})")
        check(js("return document.querySelector('#runs tr[data-sweep] a').textContent") == "sweep-a",
              "the sweep's row names it without the prefix and links its page")
        driver.save_screenshot(os.path.join(docs, "dashboard-runs.png"))

        # the live run's chart gains rows while the page is open
        driver.get(base + "#/run/" + "0%2Flive")
        points = lambda: js("const c = document.querySelector('[data-chart=mean_return]');"
                            "return c && c.dataset.points ? Number(c.dataset.points) : 0")
        first = wait(points, "the live run's chart has points")
        grown = wait(lambda: points() > (first or 0) + 2 and points(), "the live chart grows", 15)
        check(bool(first) and bool(grown), f"the live run's chart grew from {first} to {grown} rows")
        drawn = js("const c = document.querySelector('[data-chart=mean_return] canvas');"
                   "return c ? c.width * c.height : 0")
        check(drawn > 0, "the chart is drawn on a canvas")
        time.sleep(0.3)
        driver.save_screenshot(os.path.join(docs, "dashboard-live.png"))
        live.send_signal(signal.SIGINT)
        skinner_proc.wait(live, 20)
        rows_in_file = sum(1 for _ in open(os.path.join(live_dir, "metrics.csv"))) - 1
        wait(lambda: points() == rows_in_file, f"after the run stops the chart holds all {rows_in_file} rows")
        check(points() == rows_in_file, f"live chart rows {points()} = metrics.csv rows {rows_in_file}")

        # three seeds overlaid: three series, each with its file's rows
        driver.get(base + "#/run/" + ",".join(s.replace(root, "0").replace("/", "%2F") for s in seeds))
        counts = [sum(1 for _ in open(os.path.join(d, "metrics.csv"))) - 1 for d in seeds]
        got = wait(lambda: js("const c = document.querySelector('[data-chart=mean_return]');"
                              "return c && c.dataset.points"), "the overlay's charts appear")
        series = js("return document.querySelector('[data-chart=mean_return]').dataset.series")
        check(series == "3" and got == ",".join(map(str, counts)),
              f"three seeds overlay as three series ({series}; rows {got} = {counts})")
        legend = js("return [...document.querySelectorAll('[data-chart=mean_return] .chart-legend .series')]"
                    ".map(e => e.textContent)")
        check(len(legend) == 4, f"the legend names x and three runs ({legend})")
        diff = wait(lambda: js("return [...document.querySelectorAll('#config-diff tr[data-key]')]"
                               ".map(r => r.dataset.key)"), "the config difference appears")
        check(diff == ["train.seed"], f"the config difference is the seed alone ({diff})")
        driver.find_element(By.ID, "smoothing").send_keys("\ue014" * 90)  # arrow right: 0.9
        driver.find_element(By.ID, "logx").click()
        time.sleep(0.3)
        driver.save_screenshot(os.path.join(docs, "dashboard-overlay.png"))

        driver.get(base + "#/sweep/0%2Fsweep-a")
        box = wait(lambda: js("const b = document.getElementById('sweep-chart');"
                              "return b && [Number(b.dataset.trials), Number(b.dataset.front)]"),
                   "the sweep view appears")
        check(box == [7, len(front)], f"the sweep's front has {len(front)} trials of 7 ({box})")
        check(js("return document.querySelectorAll('#trials tr').length") == 9,
              "the trials table has the 8 complete lines (the cut one dropped)")
        effects = js("return [...document.querySelectorAll('#effects [data-param]')]"
                     ".map(b => [b.dataset.param, Number(b.dataset.points)])")
        check(effects == [["ppo.learning_rate", 7]], f"the parameter's effect has the 7 trials ({effects})")
        driver.save_screenshot(os.path.join(docs, "dashboard-sweep.png"))

        driver.get(base + "#/run/0%2Fmorpho")
        stages = wait(lambda: js("return [...document.querySelectorAll('.timeline tr[data-slot]')]"
                                 ".map(r => r.dataset.stages)"), "the Morpho timeline appears")
        check(stages and len(stages) == 3, f"the Morpho timeline shows its 3 slots ({len(stages or [])})")
        for k, (got_k, want_k) in enumerate(zip(stages or [], morpho_stages)):
            check(got_k == want_k, f"slot {k}'s stages by epoch follow lifecycle.h")
        wait(lambda: js("return [...document.querySelectorAll('#runinfo .status')]"
                        ".every(b => b.textContent !== '…')"), "the run's status is shown")
        driver.save_screenshot(os.path.join(docs, "dashboard-morpho.png"))

        driver.get(base + "#/run/0%2Fkge")
        charts = wait(lambda: js("return [...document.querySelectorAll('[data-chart]')]"
                                 ".filter(c => c.dataset.points).map(c => c.dataset.chart)"),
                      "a KGE run's charts appear")
        check(charts == ["loss", "valid_mrr", "valid_hits1", "valid_hits10"],
              f"a KGE run charts its loss and valid MRR and Hits@k ({charts})")
        drawn = js("const u = document.querySelector('[data-chart=valid_mrr]');"
                   "return u && u.dataset.values")
        want = ",".join("" if m is None else str(m) for m in kge_mrr)
        check(drawn == want, "the valid MRR chart holds the file's values, gaps where no ranking ran")
        wait(lambda: js("return [...document.querySelectorAll('#runinfo .status')]"
                        ".every(b => b.textContent !== '…')"), "the run's status is shown")
        driver.save_screenshot(os.path.join(docs, "dashboard-kge.png"))
        driver.get(base + "#/run/0%2Fprover")
        trees = wait(lambda: js("return [...document.querySelectorAll('svg.proof')].map(t => "
                                "[t.dataset.query, t.querySelectorAll('g.node').length, "
                                "[...t.querySelectorAll('g.node')].map(g => g.dataset.goals)])"),
                     "the Prover run's proof trees appear")
        check(trees and [t[0] for t in trees] == [p["query"] for p in proofs],
              f"a tree for each proof ({[t[0] for t in trees or []]})")
        if trees:
            # grandparent(a,c): the query, the rule's two goals, True: 3 nodes
            check(trees[0][1] == 3 and trees[0][2] == ["grandparent(a,c)", "parent(a,_V1), parent(_V1,c)", "True"],
                  f"grandparent(a,c)'s tree has its goals as nodes ({trees[0][1]}: {trees[0][2]})")
            check(trees[1][1] == 4 and trees[1][2][-1] == "False", f"grandparent(b,e)'s tree ends in False ({trees[1][2]})")
            want = 1 + sum(len(st["successors"]) + (1 if st["more"] else 0) for st in proofs[2]["steps"])
            check(trees[2][1] == want, f"ancestor(a,d)'s tree has every successor as a node ({trees[2][1]} = {want})")
        wait(lambda: js("return [...document.querySelectorAll('#runinfo .status')]"
                        ".every(b => b.textContent !== '…')"), "the run's status is shown")
        failed = js("return [...document.querySelectorAll('svg.proof[data-query=\"grandparent(b,e)\"] path.edge')]"
                    ".map(e => e.getAttribute('class'))")
        check(failed == ["edge failed"] * 3, f"the failed proof's path is drawn as failed ({failed})")
        time.sleep(0.2)
        driver.save_screenshot(os.path.join(docs, "dashboard-prover.png"))

        driver.get(base + "#/run/0%2Fminatar")
        width = wait(lambda: js("const i = document.querySelector('figure[data-video=\"videos/breakout.gif\"] img');"
                                "return i && i.complete && i.naturalWidth"), "the MinAtar run's GIF loads")
        check(width == gif_width, f"the recorded GIF is shown ({width} px wide, the file says {gif_width})")
        wait(lambda: js("return [...document.querySelectorAll('#runinfo .status')]"
                        ".every(b => b.textContent !== '…')"), "the run's status is shown")
        driver.save_screenshot(os.path.join(docs, "dashboard-minatar.png"))

        # self-play: the ratings (learner and pool), each role's return and the scores against
        # the searcher, as the files hold them
        driver.get(base + "#/run/0%2Fselfplay")
        for key, table, series in (("elo", elo, ["learner", "pool_0", "pool_1", "pool_2"]),
                                   ("roles", roles, ["first", "second"]),
                                   ("opponents", opponents, ["alphabeta:1", "alphabeta:2"])):
            got = wait(lambda: js(f"const c = document.querySelector('#players [data-chart={key}]');"
                                  "return c && c.dataset.values && [c.dataset.series, c.dataset.values]"),
                       f"the self-play run's {key} chart appears")
            columns = (series if key == "elo" else ["return_" + s for s in series] if key == "roles"
                       else [s + " score" for s in series])
            # the file's cells as the page parses them: an empty cell (a pool slot not yet
            # filled, a role no game ended for, a player no game was against) is a gap
            want = ";".join(" ".join("" if v == "" else repr(float(v)).removesuffix(".0") for v in table[c])
                            for c in columns)
            check(got and got[0] == ",".join(series), f"the {key} chart's series are {series} ({got and got[0]})")
            check(got and got[1] == want, f"the {key} chart holds the file's values ({got and got[1]} = {want})")
        drawn = js("const c = document.querySelector('#players [data-chart=elo] canvas');"
                   "return c ? c.width * c.height : 0")
        check(drawn > 0, "the Elo chart is drawn on a canvas")
        time.sleep(0.2)
        driver.save_screenshot(os.path.join(docs, "dashboard-selfplay.png"))

        # an off-policy run: SAC's temperature and its critics' mean Q as learner.csv holds them
        # (a "nan" cell, before the first gradient step, is a gap)
        driver.get(base + "#/run/0%2Fsac")
        for key, series in (("exploration", ["alpha"]), ("q", ["qf1_value", "qf2_value"])):
            got = wait(lambda: js(f"const c = document.querySelector('#players [data-chart={key}]');"
                                  "return c && c.dataset.values && [c.dataset.series, c.dataset.values]"),
                       f"the SAC run's {key} chart appears")
            want = ";".join(" ".join("" if v == "nan" else repr(float(v)).removesuffix(".0") for v in sac[c])
                            for c in series)
            check(got and got[0] == ",".join(series), f"the {key} chart's series are {series} ({got and got[0]})")
            check(got and got[1] == want, f"the {key} chart holds learner.csv's values ({got and got[1]} = {want})")

        logs = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        check(not logs, f"no errors in the browser console ({logs[:3]})")
    finally:
        driver.quit()
        skinner_proc.kill_group(live)
        server.stop()
        shutil.rmtree(profile, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    mode = sys.argv[1]
    if mode == "security":
        security(sys.argv[2])
    elif mode == "exit":
        exit_time(sys.argv[2])
    elif mode == "proofs":
        proofs_only(sys.argv[2])
    else:
        browser(sys.argv[2], sys.argv[3])
    skinner_proc.finish()


if __name__ == "__main__":
    main()
