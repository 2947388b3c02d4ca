"""A misbehaving live QA system, run as its own process, for tests and bench/bench_system.py.

``python tests/systemfaults.py --answers ANSWERS.json [--faults FAULTS.json] [--latency S]
[--lifetime S] [--port P]`` listens on a free 127.0.0.1 port (or P), prints ``PORT <n>`` on stdout, and answers
both contracts from a Text2SPARQL answers file (question text -> query):

- ``POST /`` (GERBIL QA, form ``query=&lang=``) -> QALD JSON with the query (no answers);
- ``GET /?question=&dataset=`` (Text2SPARQL) -> ``{"dataset", "question", "query"}``;
- ``GET /count`` -> ``{"total": n, "by_question": {text: n}}`` (question requests received);
- ``GET /other`` -> the same as ``/`` (a redirect target on the same origin);
- ``GET /log`` -> ``[{"t": <time.time()>, "method", "path", "question", "headers": {...}}, ...]``:
  every question request received, in arrival order (``t`` taken as the request line was read).

``FAULTS.json`` maps a question text to a list of behaviours, one per successive request for
that question (the last one repeats): ``ok``, ``slow:S`` (sleep S seconds, then ok), ``500``,
``503``, ``404``, ``429:S`` (with ``Retry-After: S``), ``malformed`` (a body that is not JSON),
``notqald`` (JSON without ``questions``), ``wrong_id`` (ok answer under id 999),
``wrong_question`` (the answer echoes another question), ``redirect_port:P`` (302 to
127.0.0.1:P), ``redirect_same`` (307 to ``/other`` on the same origin), ``redirect302_same`` (302 to ``/other``), ``drop`` (close the
connection without answering), ``echo_lower`` / ``echo_nopunct`` (the answer echoes the
question lower-cased / without punctuation), ``blank`` (200 with an empty query),
``gzipbomb:M`` (a gzip body of zeros that inflates to M MiB, ``Content-Encoding: gzip``),
``until:PATH`` (hold the answer until the file PATH exists, then ok: a test decides when).
Every request first waits ``--latency`` seconds. The process exits after ``--lifetime``
seconds (default 300).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import string
import zlib
import socket
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", required=True)
    ap.add_argument("--faults")
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--lifetime", type=float, default=300.0)
    ap.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    args = ap.parse_args(argv)
    answers = {r["question"]: r for r in json.load(open(args.answers, encoding="utf-8"))}
    faults: dict[str, list[str]] = json.load(open(args.faults, encoding="utf-8")) if args.faults else {}
    counts: Counter[str] = Counter()
    log: list[dict] = []
    lock = threading.Lock()

    bomb_lock = threading.Lock()

    @functools.lru_cache(maxsize=4)
    def _bomb(mib: int) -> bytes:
        z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        block = b"\0" * (1 << 20)
        return b"".join([*(z.compress(block) for _ in range(mib)), z.flush()])

    def bomb(mib: int) -> bytes:
        with bomb_lock:  # built once, not once per concurrent request
            return _bomb(mib)

    for plan in faults.values():  # built before the port is announced
        for b in plan:
            if b.startswith("gzipbomb:"):
                bomb(int(b.partition(":")[2]))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are written apart: no 40 ms delayed-ACK stall

        def log_message(self, *a):  # quiet
            pass

        def parse_request(self):
            self.t = time.time()
            return super().parse_request()

        def _send(self, status: int, body: bytes | str, ctype: str = "application/json", headers=None):
            body = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            u = urlsplit(self.path)
            if u.path == "/count":
                with lock:
                    doc = {"total": sum(counts.values()), "by_question": dict(counts)}
                return self._send(200, json.dumps(doc))
            if u.path == "/log":
                with lock:
                    return self._send(200, json.dumps(log))
            p = parse_qs(u.query)
            self._answer("text2sparql", (p.get("question") or [""])[0], (p.get("dataset") or [""])[0], None)

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            p = parse_qs(self.rfile.read(n).decode("utf-8"))
            self._answer("gerbil", (p.get("query") or [""])[0], None, (p.get("lang") or ["en"])[0])

        def _answer(self, protocol: str, question: str, dataset: str | None, lang: str | None):
            with lock:
                k = counts[question]
                counts[question] += 1
                log.append({"t": self.t, "method": self.command, "path": self.path, "question": question,
                            "headers": dict(self.headers)})
            plan = faults.get(question) or ["ok"]
            b = plan[min(k, len(plan) - 1)]
            if args.latency:
                time.sleep(args.latency)
            kind, _, arg = b.partition(":")
            if kind == "slow":
                time.sleep(float(arg))
            elif kind == "until":
                deadline = time.monotonic() + args.lifetime
                while not os.path.exists(arg) and time.monotonic() < deadline:
                    time.sleep(0.02)
            elif kind in ("500", "503", "404", "405"):
                return self._send(int(kind), "service trouble", "text/plain")
            elif kind == "429":
                return self._send(429, "slow down", "text/plain", {"Retry-After": arg or "0"})
            elif kind == "malformed":
                return self._send(200, '{"questions": [ {"id": "1", ')
            elif kind == "notqald":
                return self._send(200, json.dumps({"answer": 42}))
            elif kind == "redirect_port":
                return self._send(302, "", "text/plain", {"Location": f"http://127.0.0.1:{arg}/"})
            elif kind == "redirect302_same" and urlsplit(self.path).path != "/other":
                query = urlsplit(self.path).query
                return self._send(302, "", "text/plain", {"Location": "/other" + ("?" + query if query else "")})
            elif kind == "redirect_same" and urlsplit(self.path).path != "/other":
                return self._send(307, "", "text/plain", {"Location": "/other" + (("?" + urlsplit(self.path).query) if urlsplit(self.path).query else "")})
            elif kind == "gzipbomb":
                return self._send(200, bomb(int(arg)), "application/json", {"Content-Encoding": "gzip"})
            elif kind == "blank":
                if protocol == "text2sparql":
                    return self._send(200, json.dumps({"dataset": dataset, "question": question, "query": ""}))
                return self._send(200, json.dumps({"questions": [{"id": "1", "query": {"sparql": ""}}]}))
            elif kind == "drop":
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            rec = answers.get(question)
            if rec is None:
                return self._send(404, json.dumps({"error": "unknown question"}))
            shown = {"wrong_question": "Who is somebody else?", "echo_lower": question.lower(),
                     "echo_nopunct": question.translate(str.maketrans("", "", string.punctuation))}.get(kind, question)
            if protocol == "text2sparql":
                return self._send(200, json.dumps({"dataset": dataset, "question": shown, "query": rec["query"]}))
            qid = "999" if kind == "wrong_id" else rec.get("qname", "1")
            doc = {"questions": [{"id": qid, "question": [{"language": lang, "string": shown}],
                                  "query": {"sparql": rec["query"]}}]}
            return self._send(200, json.dumps(doc))

    ThreadingHTTPServer.allow_reuse_address = True  # a service that comes back on its port
    # http.server listens with a backlog of 5: a client opening 8 connections at once overflows it
    # and the kernel makes the rest retry their SYN a second later (1 s stalls in every test)
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    threading.Timer(args.lifetime, server.shutdown).start()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
