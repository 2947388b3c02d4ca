"""50 concurrent participants of a hosted challenge while jobs run (issue 39, Done-when 4).

Starts a real ``kgqa web`` on a free loopback port over a fresh SQLite store holding 1
organiser and 50 participant accounts (made with the library, as ``kgqa web users add``
does), serving a CK25 challenge with hidden gold (``--hidden-gold ck25=ck25:1-en``). Each
participant logs in (its own httpx session) and submits its team's real CK25 run (INFAI's and
AIFB's answers re-executed on the CK25 KG, WSE's result set), ``--submissions`` times (3: with
one, a quiet machine's worker empties the queue within the minute and the pages are no longer
measured while jobs run; the bench says so), so the server's worker evaluates while pages are
fetched. Then the participants browse at once for ``--seconds``, each waiting
a random think time (exponential, mean ``--think`` s) between requests, a mix of: home, the
leaderboard, their experiment's page, its status poll (what the page's script polls), the
dataset page, the download of their own run file (a participant's only download on a hidden-
gold dataset; the result downloads answer 403 there), and now and then a re-run of their
finished experiment (which keeps the queue fed).

Measures per page kind the server time (``Server-Timing: app;dur=``, the server's clock from
request to response start) and the client's wall time (request to last byte, in this process:
it shares the machine's cores), p50/p95/p99, the load average during the run, the server
process's CPU time per request (what the load does not inflate), how many
experiments finished during it and that none failed. The store is deleted afterwards.

Target: every page kind's server-time p95 <= 200 ms, every answer 2xx/303, jobs running
throughout, no experiment failed. Exits 1 when missed.

Usage: ``python bench/bench_web_load.py [--participants 50] [--submissions 3] [--seconds 60] [--think 1.0] [--workers 1]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for p in (str(REPO), str(REPO / "tests")):
    if p not in sys.path:
        sys.path.insert(0, p)

import httpx  # noqa: E402

from kgqa.store import Store  # noqa: E402
from kgqa.store.accounts import Accounts  # noqa: E402

DATA = Path(os.environ.get("KGQA_DATA_DIR", "/work/shared/data"))
RUNS = DATA / "ck25-runs"
BOARD = "/leaderboard/ck25/text2sparql"
#: (kind, weight) of a participant's next request
MIX = [("status poll", 30), ("experiment", 20), ("home", 15), ("leaderboard", 15), ("dataset", 10),
       ("download own run", 8), ("re-run", 3)]
OK = {200, 303}


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def csrf_of(text: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', text).group(1)


class Participant:
    def __init__(self, base: str, name: str, password: str, team: str):
        self.c = httpx.AsyncClient(base_url=base, timeout=120)
        self.name, self.password, self.team = name, password, team
        self.eids: list[str] = []

    async def login(self) -> None:
        r = await self.c.get("/login")
        r = await self.c.post("/login", data={"csrf": csrf_of(r.text), "name": self.name, "password": self.password})
        assert r.status_code == 303, (self.name, r.status_code, r.text[:300])

    async def submit(self) -> httpx.Response:
        """The team's run as a new experiment (INFAI and AIFB: their queries run on the CK25 KG)."""
        form = await self.c.get("/new?dataset=ck25")
        data = {"csrf": csrf_of(form.text), "dataset": "ck25", "profile": "text2sparql", "run_name": self.team}
        if self.team == "WSE":
            run = RUNS / "WSE" / "ck25_system_result_set.json"
        else:
            run = RUNS / self.team / "ck25_answers.json"
            data |= {"kg": "ck25", "reexecute": "1"}
        r = await self.c.post("/new", data=data, files={"run_file": (run.name, run.read_bytes(), "application/json")})
        if r.status_code == 303:
            self.eids.append(r.headers["location"].rsplit("/", 1)[1])
        return r

    async def rerun(self) -> httpx.Response | None:
        eid = self.eids[-1]
        s = (await self.c.get(f"/e/{eid}/status.json")).json()
        if s["status"] != "finished":
            return None  # nothing to re-run yet: the request is not made
        page = await self.c.get(f"/e/{eid}")
        r = await self.c.post(f"/e/{eid}/rerun", data={"csrf": csrf_of(page.text)})
        if r.status_code == 303:
            self.eids.append(r.headers["location"].rsplit("/", 1)[1])
        return r

    async def one(self, kind: str) -> httpx.Response | None:
        eid = self.eids[-1]
        paths = {"status poll": f"/e/{eid}/status.json", "experiment": f"/e/{eid}", "home": "/",
                 "leaderboard": BOARD, "dataset": "/datasets/ck25", "download own run": f"/e/{eid}/file/run"}
        if kind == "re-run":
            return await self.rerun()
        return await self.c.get(paths[kind])


async def browse(p: Participant, until: float, think: float, rng: random.Random, out: list, resets: list) -> None:
    kinds, weights = zip(*MIX)
    await asyncio.sleep(rng.random() * think)  # participants do not start in step
    while time.monotonic() < until:
        kind = rng.choices(kinds, weights)[0]
        t0 = time.perf_counter()
        try:
            r = await p.one(kind)
        except httpx.TransportError:  # the server closed an idle keep-alive connection as it was reused
            resets[0] += 1            # (uvicorn: after 5 s): asked again on a new one, as a browser does
            t0 = time.perf_counter()
            r = await p.one(kind)
        wall = (time.perf_counter() - t0) * 1000
        if r is not None:
            server = float(r.headers.get("server-timing", "dur=nan").split("dur=")[1])
            out.append((kind, r.status_code, server, wall))
        await asyncio.sleep(rng.expovariate(1 / think) if think > 0 else 0)


class Sampler(threading.Thread):
    """Every second: the 1-minute load average and how many experiments are open."""

    def __init__(self, store: Path):
        super().__init__(daemon=True)
        self.store, self.stop, self.load, self.open = store, threading.Event(), [], []

    def run(self) -> None:
        with Store(self.store) as st:
            while not self.stop.wait(1.0):
                self.load.append(os.getloadavg()[0])
                self.open.append(st.count(status="running") + st.count(status="pending"))


def counts(store: Path) -> dict[str, int]:
    with Store(store) as st:
        return {s: st.count(status=s) for s in ("pending", "running", "finished", "failed")}


def make_accounts(store: Path, n: int) -> dict[str, str]:
    """1 organiser and ``n`` participants; their passwords."""
    pw = {"org": secrets.token_urlsafe(12), **{f"team-{i:02d}": secrets.token_urlsafe(12) for i in range(1, n + 1)}}
    with Store(store) as st:
        acc = Accounts(st)
        for name, password in pw.items():
            acc.add(name, "organiser" if name == "org" else "participant", password)
    return pw


async def session(base: str, pw: dict[str, str], args: argparse.Namespace, store: Path) -> tuple[list, dict]:
    teams = ["INFAI", "AIFB", "WSE"]
    names = [n for n in pw if n != "org"]
    ps = [Participant(base, name, pw[name], teams[i % 3]) for i, name in enumerate(names)]
    gate = asyncio.Semaphore(4)  # argon2id: 64 MiB per login

    async def ready(p: Participant) -> None:
        async with gate:
            await p.login()
            for _ in range(args.submissions):
                r = await p.submit()
                assert r.status_code == 303, (p.name, r.status_code, r.text[:300])

    t0 = time.perf_counter()
    await asyncio.gather(*(ready(p) for p in ps))
    print(f"{len(ps)} participants logged in and submitted {args.submissions} run(s) each in {time.perf_counter() - t0:.1f} s")
    first = await first_board(ps[0])
    print(f"first leaderboard request once an experiment finished: {first:.0f} ms server time")
    before = counts(store)
    sampler = Sampler(store)
    sampler.start()
    out: list = []
    spy = profiler(args)
    until = time.monotonic() + args.seconds
    resets = [0]
    cpu0 = cpu_s(args.pid)
    await asyncio.gather(*(browse(p, until, args.think, random.Random(i), out, resets) for i, p in enumerate(ps)))
    cpu = cpu_s(args.pid) - cpu0
    sampler.stop.set()
    sampler.join()
    if spy is not None:
        spy.wait()
        print(f"py-spy profile of the server during the run: {args.profile}")
    after = counts(store)
    for p in ps:
        await p.c.aclose()
    return out, {"before": before, "after": after, "load": sampler.load, "open": sampler.open, "resets": resets[0],
                 "cpu": cpu}


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) process ``pid`` has used: the server's own work,
    which the machine's load does not inflate as it does wall-clock server time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def profiler(args: argparse.Namespace) -> subprocess.Popen | None:
    """``py-spy record`` of the server process for the browsing time (``--profile FILE``)."""
    if not args.profile:
        return None
    return subprocess.Popen(["py-spy", "record", "--pid", str(args.pid), "--duration", str(int(args.seconds)),
                             "--output", args.profile, "--format", args.profile_format, "--nonblocking"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def first_board(p: Participant) -> float:
    """Waits for the first finished experiment (a challenge's leaderboard exists from then on);
    the server ms of the leaderboard's first request."""
    while True:
        r = await p.c.get(BOARD)
        if r.status_code == 200:
            return float(r.headers["server-timing"].split("dur=")[1])
        assert r.status_code == 404, r.status_code
        await asyncio.sleep(0.2)


def report(out: list, st: dict, args: argparse.Namespace) -> bool:
    by = defaultdict(list)
    for kind, code, server, wall in out:
        by[kind].append((code, server, wall))
    print(f"\n{'page kind':18} {'n':>5} {'non-2xx':>7} | {'server p50':>10} {'p95':>7} {'p99':>7} | "
          f"{'wall p50':>8} {'p95':>7} {'p99':>7}  (ms)")
    ok = True
    for kind, _ in MIX:
        rows = by.get(kind, [])
        if not rows:
            continue
        bad = sum(code not in OK for code, _, _ in rows)
        srv = [s for _, s, _ in rows]
        wall = [w for _, _, w in rows]
        ok &= pct(srv, 0.95) <= args.target and bad == 0
        print(f"{kind:18} {len(rows):5} {bad:7} | {statistics.median(srv):10.1f} {pct(srv, .95):7.1f} "
              f"{pct(srv, .99):7.1f} | {statistics.median(wall):8.1f} {pct(wall, .95):7.1f} {pct(wall, .99):7.1f}")
    srv = [s for _, _, s, _ in out]
    wall = [w for _, _, _, w in out]
    print(f"{'all':18} {len(out):5} {sum(c not in OK for _, c, _, _ in out):7} | {statistics.median(srv):10.1f} "
          f"{pct(srv, .95):7.1f} {pct(srv, .99):7.1f} | {statistics.median(wall):8.1f} {pct(wall, .95):7.1f} "
          f"{pct(wall, .99):7.1f}")
    b, a = st["before"], st["after"]
    done = a["finished"] - b["finished"]
    running = bool(st["open"]) and min(st["open"]) > 0
    print(f"\n{len(out) / args.seconds:.1f} requests/s over {args.seconds:g} s ({st['resets']} asked again on a new "
          f"connection: an idle keep-alive one closed); load average (1 min) during the run "
          f"{min(st['load']):.1f}-{max(st['load']):.1f} on {os.cpu_count()} cores")
    print(f"server process CPU during the run: {st['cpu']:.1f} s, {st['cpu'] * 1000 / max(1, len(out)):.1f} ms per "
          "request (all its threads; the evaluation workers and the leaderboard's test process not counted)")
    print(f"experiments: {done} finished during the run; at its end {a['finished']} finished, {a['running']} running, "
          f"{a['pending']} pending, {a['failed']} failed; open experiments throughout: "
          f"{min(st['open'], default=0)}-{max(st['open'], default=0)} ({'jobs ran throughout' if running else 'QUEUE RAN DRY'})")
    return ok and a["failed"] == 0 and running and done > 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--participants", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60.0, help="how long the participants browse")
    ap.add_argument("--submissions", type=int, default=3,
                    help="runs each participant submits before browsing (3: the queue stays full while they browse; "
                         "with 1 a quiet machine's worker empties it within the minute)")
    ap.add_argument("--think", type=float, default=1.0, help="mean think time between a participant's requests (s)")
    ap.add_argument("--workers", type=int, default=1, help="kgqa web --workers")
    ap.add_argument("--target", type=float, default=200.0, help="server-time p95 target per page kind (ms)")
    ap.add_argument("--profile", help="write a py-spy profile of the server during the run to this file")
    ap.add_argument("--profile-format", default="speedscope", help="py-spy's --format (speedscope, flamegraph, raw)")
    args = ap.parse_args(argv)
    if not (RUNS / "WSE" / "ck25_system_result_set.json").is_file():
        print(f"error: CK25's runs are not under {RUNS}: set KGQA_DATA_DIR to the shared data", file=sys.stderr)
        return 2
    from webserver import WebServer

    with tempfile.TemporaryDirectory(prefix="kgqa-bench-load-") as d:
        tmp = Path(d)
        store = tmp / "challenge.sqlite"
        pw = make_accounts(store, args.participants)
        print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
        with WebServer(store, tmp, "--hidden-gold", "ck25=ck25:1-en", "--workers", str(args.workers)) as srv:
            args.pid = srv.proc.pid
            out, st = asyncio.run(session(srv.base, pw, args, store))
        ok = report(out, st, args)
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
