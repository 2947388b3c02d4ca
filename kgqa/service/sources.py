"""What the adapter serves: a replayed run file, or a Python callable.

Both answer :meth:`answer(question, lang, dataset)` with a :class:`Reply` (a query and/or an
answer) or raise :class:`ServiceError` (an HTTP status and a message for the client).

**Replay** (:class:`ReplaySource`): every prediction of a run file (any run format kgqa reads)
is indexed by question: first by its id, through the dataset's question for that id when
``dataset`` is given (needed for runs without texts, e.g. Text2SPARQL result sets), then by the
text the run itself carries (Text2SPARQL answers' ``question``, QALD JSON ``question``
strings, JSONL ``metadata``, the ``metadata.system`` of a run ``kgqa system ask`` wrote).
Texts are matched with whitespace collapsed, then ignoring case and punctuation too. Where one
text occurs in several languages the request's ``lang`` picks the entry; where it occurs for
several datasets, the request's ``dataset``. The dataset IRI a request names never makes a
question unknown: a run whose file names its dataset with another IRI (a real Text2SPARQL
team file did) is served by question, and the reply says which dataset the entry named (the
adapter warns once). A question not in the run is a 404; a run entry that records a failure is
replayed as a 500 with its message; an entry with a blank query is a reply without a query.

**Callable** (:class:`CallableSource`): ``f(question: str, lang: str | None)`` (``lang`` is
None under Text2SPARQL, whose requests carry no language; ``async def`` works too) returns

- a string: the SPARQL query;
- or a dict with ``query`` (or ``sparql``, a string) and/or ``answers`` (or ``answer``): a
  SPARQL 1.1 results JSON object, a boolean, or a list of values (IRIs / literal strings, typed
  as kgqa guesses them); any other key goes to the GERBIL response entry as it is (e.g.
  ``confidence``).

An exception in the callable, or a value of another shape, is a 500 naming the problem.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgqa.execute.live.protocols import loose_text, norm_text
from kgqa.model import Answer, BooleanAnswer, Dataset, InputError, Run, Status, TableAnswer
from kgqa.model.answer import from_results_json
from kgqa.model.terms import guess_term


class ServiceError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Reply:
    id: str | None
    sparql: str | None = None
    answer: Answer | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: the dataset the answer belongs to (replay of Text2SPARQL answers), if known
    dataset: str | None = None


# --------------------------------------------------------------------------- replay


def _lang_of(pred_id: str) -> str | None:
    """``ck25:1-en`` -> ``en`` (the Text2SPARQL qname convention), else None."""
    head, sep, tail = pred_id.rpartition("-")
    return tail if sep and head and 2 <= len(tail) <= 3 and tail.isalpha() else None


class ReplaySource:
    def __init__(self, run: Run, dataset: Dataset | None = None):
        self.run = run
        self.index: dict[str, list[tuple[str | None, Any]]] = {}
        self.loose: dict[str, list[tuple[str | None, Any]]] = {}
        self.unindexed: list[str] = []
        self.datasets: set[str] = set()
        texts: dict[str, dict[str, str]] = {}
        if dataset is not None:
            for it in dataset.by_language():
                lang = it.metadata.get("language")
                for lg, text in it.questions.items():
                    texts.setdefault(it.id, {})[lang or lg] = text
        for p in run.predictions:
            found: dict[str | None, str] = dict(texts.get(p.id, {}))  # by id first
            md = p.metadata
            own: list[tuple[str | None, str]] = []
            if isinstance(md.get("question"), str):
                own.append((_lang_of(p.id), md["question"]))
            sysmd = md.get("system")
            if isinstance(sysmd, dict) and isinstance(sysmd.get("question"), str):  # a run kgqa system ask wrote
                own.append((sysmd.get("lang") if isinstance(sysmd.get("lang"), str) else None, sysmd["question"]))
            if isinstance(md.get("questions"), dict):
                own += [(k, v) for k, v in md["questions"].items() if isinstance(v, str)]
            if isinstance(md.get("dataset"), str):
                self.datasets.add(md["dataset"])
            pairs = [*found.items(), *own]
            if not pairs:
                self.unindexed.append(p.id)
                continue
            seen: set[tuple[str | None, str]] = set()
            for lang, text in pairs:
                if (lang, norm_text(text)) in seen:
                    continue
                seen.add((lang, norm_text(text)))
                self.index.setdefault(norm_text(text), []).append((lang, p))
                self.loose.setdefault(loose_text(text), []).append((lang, p))

    def describe(self) -> str:
        named = f" (dataset {', '.join(sorted(self.datasets))})" if self.datasets else ""
        return f"replay of {', '.join(str(s) for s in self.run.source) or self.run.name}{named}"

    @property
    def size(self) -> int:
        return len({id(p) for v in self.index.values() for _, p in v})

    async def answer(self, question: str, lang: str | None, dataset: str | None) -> Reply:
        cands = self.index.get(norm_text(question)) or self.loose.get(loose_text(question))
        if not cands:
            raise ServiceError(404, "question not in the replayed run")
        if dataset is not None:  # several datasets with this text: the one the request names
            cands = [c for c in cands if c[1].metadata.get("dataset") == dataset] or cands
        pick = next((p for lg, p in cands if lang is not None and lg == lang), None) or cands[0][1]
        if pick.status is not Status.OK:
            raise ServiceError(500, f"the run records a failure for this question: {pick.status.value}"
                                    + (f": {pick.message}" if pick.message else ""))
        answer = pick.answer
        if answer is None and pick.ranked is not None:
            answer = TableAnswer.single_column(pick.ranked)
        return Reply(pick.id, pick.sparql, answer, dataset=pick.metadata.get("dataset"))


# --------------------------------------------------------------------------- callable


def load_callable(spec: str) -> Callable[..., Any]:
    """``module:function`` (importable, the current directory first on the path) or
    ``path/to/file.py:function``; dotted attributes after the colon work too."""
    if ":" not in spec:
        raise InputError("--python", f"expected MODULE:FUNCTION or FILE.py:FUNCTION, got {spec!r}")
    mod_name, _, attr = spec.rpartition(":")
    try:
        if mod_name.endswith(".py"):
            path = Path(mod_name)
            if not path.is_file():
                raise InputError("--python", f"no such file: {path}")
            module_spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[path.stem] = module
            module_spec.loader.exec_module(module)
        else:
            if "" not in sys.path and str(Path.cwd()) not in sys.path:
                sys.path.insert(0, str(Path.cwd()))
            module = importlib.import_module(mod_name)
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001 - any import failure is the user's module
        raise InputError("--python", f"cannot import {mod_name!r}: {type(e).__name__}: {e}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError("--python", f"{mod_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise InputError("--python", f"{spec!r} is not callable")
    return obj


def _answer_value(v: Any) -> Answer:
    if isinstance(v, bool):
        return BooleanAnswer(v)
    if isinstance(v, dict):
        return from_results_json(v)
    if isinstance(v, (list, tuple)):
        if not all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
            raise ValueError("an answers list must hold strings or numbers")
        return TableAnswer.single_column([guess_term(str(x)) for x in v])
    raise ValueError(f"answers must be SPARQL results JSON, a boolean or a list of values, got {type(v).__name__}")


def reply_from_value(value: Any) -> Reply:
    """The reply a callable's return value stands for (see the module docstring)."""
    if isinstance(value, str):
        return Reply(None, value if value.strip() else None)
    if not isinstance(value, dict):
        raise ValueError(f"the system returned {type(value).__name__}; expected a SPARQL string or a dict "
                         "with 'query' and/or 'answers'")
    rest = dict(value)
    sparql = rest.pop("query", None)
    if sparql is None:
        sparql = rest.pop("sparql", None)
    if sparql is not None and not isinstance(sparql, str):
        raise ValueError(f"'query' must be a string, got {type(sparql).__name__}")
    answer = None
    for key in ("answers", "answer"):
        if key in rest:
            answer = _answer_value(rest.pop(key))
            break
    if (sparql is None or not sparql.strip()) and answer is None:
        raise ValueError("the system returned neither a query nor answers")
    return Reply(None, sparql if sparql and sparql.strip() else None, answer, rest)


class CallableSource:
    def __init__(self, func: Callable[..., Any], spec: str = ""):
        self.func = func
        self.spec = spec or getattr(func, "__name__", "callable")
        self.is_async = inspect.iscoroutinefunction(func)

    def describe(self) -> str:
        return f"python {self.spec}"

    size = None

    async def answer(self, question: str, lang: str | None, dataset: str | None) -> Reply:
        try:
            if self.is_async:
                value = await self.func(question, lang)
            else:
                value = await asyncio.get_running_loop().run_in_executor(None, self.func, question, lang)
        except Exception as e:  # noqa: BLE001 - the system's own failure is reported, not raised
            raise ServiceError(500, f"the system raised {type(e).__name__}: {e}") from None
        try:
            return reply_from_value(value)
        except ValueError as e:
            raise ServiceError(500, str(e)) from None
