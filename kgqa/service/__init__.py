"""The adapter: serve any QA system under the GERBIL QA and Text2SPARQL web-service contracts.

``kgqa system serve (--run FILE | --python module:function) [--kg KG] [--protocol
gerbil|text2sparql] [--host 127.0.0.1] [--port P]`` calls :func:`serve`. The system is a
replayed run file (published runs become live services) or a Python callable
``f(question, lang) -> str | dict`` (see :mod:`kgqa.service.sources`); the web application
is :mod:`kgqa.service.app` (Starlette + uvicorn), bound to localhost by default.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

from kgqa import lazy
from kgqa.model import InputError
from kgqa.execute.executor import Executor
from kgqa.execute.live.protocols import check_protocol
from kgqa.execute.policy import ExecutionPolicy
from kgqa.load import load_dataset, load_run
from kgqa.service.app import MAX_BODY, create_app
from kgqa.service.model_source import ModelSource
from kgqa.service.sources import CallableSource, ReplaySource, load_callable


def load_source(*, run: str | Path | None = None, python: str | None = None, dataset: str | None = None,
                run_format: str | None = None, dataset_format: str | None = None, model: str | Path | None = None,
                kg: str | None = None, input: str | None = None) -> Any:
    """The source for ``--run FILE`` (with ``--dataset`` for question texts), ``--python SPEC``
    or ``--model DIR`` (a trained reference system, reading ``kg`` where it needs to)."""

    if sum(x is not None for x in (run, python, model)) != 1:
        raise InputError("--run/--python/--model", "give exactly one of --run FILE, --python MODULE:FUNCTION "
                                                   "and --model DIR")
    if model is not None:
        return ModelSource(model, kg, input=input)
    if python is not None:
        return CallableSource(load_callable(python), python)

    ds = load_dataset(dataset, format=dataset_format) if dataset else None
    r = load_run(str(run), format=run_format, dataset=ds)
    src = ReplaySource(r, ds)
    if src.size == 0:
        raise InputError(run, "no run entry carries its question text, so none can be looked up; pass --dataset "
                              "DATASET to take the texts from the dataset")
    return src


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket (``port`` 0: a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP, as getaddrinfo gives it: asyncio turns Nagle off (TCP_NODELAY) only on
    # sockets that say so, and with Nagle on, a keep-alive response waits ~40 ms for delayed ACKs
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise InputError("--port", f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(*, run: str | Path | None = None, python: str | None = None, kg: str | None = None,
          graph: str | None = None, protocol: str = "gerbil", host: str = "127.0.0.1", port: int = 8000,
          dataset: str | None = None, run_format: str | None = None, dataset_format: str | None = None,
          timeout: float = 30.0, max_body: int | None = None, announce: Any = None,
          model: str | Path | None = None, input: str | None = None) -> None:
    """Serve until interrupted (SIGINT / SIGTERM). ``announce(message)`` (default: stderr)
    receives one line naming the URL once the socket listens (``port=0`` picks a free port)."""
    uvicorn = lazy.uvicorn()

    try:
        protocol = check_protocol(protocol)
    except ValueError as e:
        raise InputError("--protocol", str(e)) from None
    source = load_source(run=run, python=python, dataset=dataset, run_format=run_format,
                         dataset_format=dataset_format, model=model, kg=kg, input=input)
    runner = engine = None
    if kg:
        runner = engine = Executor.open(kg, graph, policy=ExecutionPolicy(timeout=timeout), cache=False)
    say = announce or (lambda m: print(m, file=sys.stderr, flush=True))
    app = create_app(source, protocol=protocol, runner=runner, kg=kg, max_body=max_body or MAX_BODY, warn=say)
    sock = bind(host, port)
    real_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    if host not in ("127.0.0.1", "localhost", "::1"):
        say(f"warning: listening on {host}: reachable from other machines")
    n = getattr(source, "size", None)
    say(f"kgqa: serving {source.describe()}" + (f" ({n} questions)" if n is not None else "")
        + f" under {protocol} on http://{shown}:{real_port}/" + (f", executing on {kg}" if kg else "")
        + "; /health for status")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        if engine is not None:
            engine.close()
        if hasattr(source, "close"):
            source.close()


__all__ = ["serve", "load_source", "bind"]
