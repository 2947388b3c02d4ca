"""Incremental readers of SPARQL results (JSON and XML) with caps enforced while reading.

An endpoint's answer is hostile input: a body may be huge, inflate from a small gzip, hold
millions of rows, or use variables its ``head`` does not declare (each one a new column of
every row). :class:`JsonResultsStream` and :class:`XmlResultsStream` are fed the (decoded) body
piece by piece (:class:`~kgqa.execute.results_xml.XmlResultsStream` likewise) and stop with
:class:`CapExceeded` as soon as

- more than ``max_rows`` results arrived (:func:`~kgqa.execute.engine.too_many_rows_message`);
- more than ``max_columns`` distinct variables were seen, declared or not
  (:func:`too_many_columns_message`; default :data:`DEFAULT_MAX_COLUMNS`);

so time and memory stay proportional to what was read, never to rows x undeclared variables.
A body that is not valid results raises :class:`ValueError` with what was expected.
Variables used without being declared are kept (after the declared ones, in order of first use),
as :func:`kgqa.model.answer.from_results_json` does for files.

The JSON reader decodes one binding at a time (``json.JSONDecoder.raw_decode`` on a text
buffer); an incomplete binding is retried only once the buffer has doubled, so a large binding
costs linear time.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

from kgqa.execute.engine import too_many_rows_message
from kgqa.model.answer import Answer, TableAnswer, from_results_json
from kgqa.model.terms import Term, from_sparql_json

#: Most distinct variables (columns) a result may have, declared in its head or not.
DEFAULT_MAX_COLUMNS = 256

__all__ = ["CapExceeded", "JsonResultsStream", "ResultTable", "DEFAULT_MAX_COLUMNS",
           "too_many_columns_message"]


def too_many_columns_message(max_columns: int) -> str:
    return (f"result has more than {max_columns:,} variables (column cap; variables a result uses without "
            "declaring them in its head count too)")


class CapExceeded(Exception):
    """A result over a cap (rows or columns): ``message`` says which."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class ResultTable:
    """Rows as dicts, variables in a dict (O(1) membership); the table is built once at the end."""

    def __init__(self, max_rows: int | None, max_columns: int | None):
        self.max_rows = max_rows
        self.max_columns = max_columns
        self.declared: dict[str, None] = {}
        self.seen: dict[str, None] = {}
        self.rows: list[dict[str, Term]] = []

    def _see(self, name: str) -> None:
        if name not in self.seen:
            if self.max_columns is not None and len(self.seen) >= self.max_columns:
                raise CapExceeded(too_many_columns_message(self.max_columns))
            self.seen[name] = None

    def declare(self, name: str) -> None:
        self._see(name)
        self.declared[name] = None

    def add(self, row: dict[str, Term]) -> None:
        if self.max_rows is not None and len(self.rows) >= self.max_rows:
            raise CapExceeded(too_many_rows_message(self.max_rows))
        for v in row:
            self._see(v)
        self.rows.append(row)

    def answer(self) -> TableAnswer:
        names = tuple(self.declared) + tuple(v for v in self.seen if v not in self.declared)
        return TableAnswer(names, tuple(tuple(r.get(v) for v in names) for r in self.rows))


class _Need(Exception):
    """More input is needed before the current step can complete."""


_WS = " \t\n\r"
_UNSET: Any = object()


class JsonResultsStream:
    """SPARQL 1.1 Query Results JSON, fed in pieces (:meth:`feed`), answer at :meth:`close`."""

    def __init__(self, max_rows: int | None = None, max_columns: int | None = DEFAULT_MAX_COLUMNS):
        self._table = ResultTable(max_rows, max_columns)
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._dec = json.JSONDecoder()
        self._buf = ""
        self._pos = 0
        self._eof = False
        self._pending: list[str] = []  # text fed since the last run, joined when the parser runs
        self._unread = 0  # characters in _buf after _pos plus those pending
        self._wait = 0  # run again once the unread text is at least this long
        self._state = "start"
        self._head: Any = _UNSET
        self._boolean: Any = _UNSET
        self._results = False
        self._bindings = False
        self.bytes = 0

    # ------------------------------------------------------------------ input

    def feed(self, data: bytes) -> None:
        if self._state == "done":  # only blanks may follow the document: checked, never kept
            self.bytes += len(data)
            rest = data.translate(None, b" \t\n\r")
            if rest:
                raise ValueError(f"malformed SPARQL results JSON ({self.bytes:,} bytes): extra data after the "
                                 f"document: {rest[:40]!r}")
            return
        try:
            text = self._utf8.decode(data)
        except UnicodeDecodeError as e:
            raise ValueError(f"malformed SPARQL results JSON: not UTF-8 at byte {self.bytes + e.start:,}") from None
        self.bytes += len(data)
        self._pending.append(text)
        self._unread += len(text)
        if self._unread >= self._wait:  # else the step that needs more would fail again: wait
            self._buf = self._buf[self._pos:] + "".join(self._pending)
            self._pos = 0
            self._pending = []
            self._run()
            self._unread = len(self._buf) - self._pos

    def close(self) -> Answer:
        try:
            self._buf = self._buf[self._pos:] + "".join(self._pending) + self._utf8.decode(b"", final=True)
            self._pending = []
        except UnicodeDecodeError:
            raise ValueError("malformed SPARQL results JSON: ends inside a UTF-8 character") from None
        self._pos = 0
        self._eof = True
        self._run()
        rest = self._buf[self._pos:].strip(_WS)
        if rest:
            raise ValueError(f"malformed SPARQL results JSON ({self.bytes:,} bytes): extra data after the "
                             f"document: {rest[:40]!r}")
        return self._answer()

    # ------------------------------------------------------------------ scanning

    def _ws(self, pos: int) -> int:
        buf = self._buf
        n = len(buf)
        while pos < n and buf[pos] in _WS:
            pos += 1
        if pos == n:
            if self._eof:
                raise ValueError(f"malformed SPARQL results JSON ({self.bytes:,} bytes): truncated")
            raise _Need
        return pos

    def _expect(self, pos: int, chars: str, what: str) -> tuple[str, int]:
        pos = self._ws(pos)
        c = self._buf[pos]
        if c not in chars:
            raise ValueError(f"malformed SPARQL results JSON: expected {what} at character {pos:,}, "
                             f"got {self._buf[pos:pos + 20]!r}")
        return c, pos + 1

    def _value(self, pos: int) -> tuple[Any, int]:
        pos = self._ws(pos)
        try:
            obj, end = self._dec.raw_decode(self._buf, pos)
        except RecursionError:
            raise ValueError("malformed SPARQL results JSON: nested too deeply") from None
        except ValueError as e:  # JSONDecodeError, or an integer over Python's digit limit
            if self._eof:
                raise ValueError(f"malformed SPARQL results JSON ({self.bytes:,} bytes): {e}") from None
            self._wait = 2 * (len(self._buf) - self._pos)  # retry once twice as much is unread
            raise _Need from None
        if end == len(self._buf) and not self._eof:
            raise _Need  # a number may go on in the next piece
        return obj, end

    def _key(self, pos: int) -> tuple[str, int]:
        key, pos = self._value(pos)
        if not isinstance(key, str):
            raise ValueError(f"malformed SPARQL results JSON: expected a member name, got {key!r}")
        _, pos = self._expect(pos, ":", "':'")
        return key, pos

    # ------------------------------------------------------------------ states

    def _run(self) -> None:
        self._wait = 0
        try:
            while self._state != "done":
                self._pos = getattr(self, "_s_" + self._state)(self._pos)
        except _Need:
            pass

    def _s_start(self, pos: int) -> int:
        c, pos = self._expect(pos, "{[", "a JSON object")
        if c == "[":
            raise ValueError("expected a SPARQL results object, got list")
        pos = self._ws(pos)
        if self._buf[pos] == "}":
            self._state = "done"
            return pos + 1
        self._state = "top_member"
        return pos

    def _s_top_member(self, pos: int) -> int:
        key, pos = self._key(pos)
        if key == "results":
            p = self._ws(pos)
            if self._buf[p] == "{":
                self._results = True
                self._state = "results_first"
                return p + 1
            value, pos = self._value(pos)
            if value is not None:
                raise ValueError("'results' has no 'bindings' list")
            self._state = "top_next"
            return pos
        value, pos = self._value(pos)
        if key == "head":
            self._head = value
            self._declare(value)
        elif key == "boolean":
            self._boolean = value
        self._state = "top_next"
        return pos

    def _s_top_next(self, pos: int) -> int:
        c, pos = self._expect(pos, ",}", "',' or '}'")
        self._state = "top_member" if c == "," else "done"
        return pos

    def _s_results_first(self, pos: int) -> int:
        p = self._ws(pos)
        if self._buf[p] == "}":
            return self._end_results(p + 1)
        self._state = "results_member"
        return p

    def _s_results_member(self, pos: int) -> int:
        key, pos = self._key(pos)
        if key == "bindings":
            p = self._ws(pos)
            if self._buf[p] != "[":
                raise ValueError("'results.bindings' is not a list")
            self._bindings = True
            self._state = "bindings_first"
            return p + 1
        _, pos = self._value(pos)
        self._state = "results_next"
        return pos

    def _s_results_next(self, pos: int) -> int:
        c, pos = self._expect(pos, ",}", "',' or '}'")
        if c == ",":
            self._state = "results_member"
            return pos
        return self._end_results(pos)

    def _end_results(self, pos: int) -> int:
        if not self._bindings:
            raise ValueError("'results' has no 'bindings' list")
        self._state = "top_next"
        return pos

    def _s_bindings_first(self, pos: int) -> int:
        p = self._ws(pos)
        if self._buf[p] == "]":
            self._state = "results_next"
            return p + 1
        pos = self._binding(p)
        self._state = "bindings_next"  # only once the binding is read: a step is all or nothing
        return pos

    def _s_bindings_next(self, pos: int) -> int:
        c, pos = self._expect(pos, ",]", "',' or ']'")
        if c == "]":
            self._state = "results_next"
            return pos
        return self._binding(pos)

    def _binding(self, pos: int) -> int:
        binding, pos = self._value(pos)
        if not isinstance(binding, dict):
            raise ValueError(f"binding is not an object: {str(binding)[:80]!r}")
        self._table.add({v: from_sparql_json(c) for v, c in binding.items()})
        return pos

    # ------------------------------------------------------------------ content

    def _declare(self, head: Any) -> None:
        if not isinstance(head, dict):
            return  # reported by from_results_json at the end
        raw = head.get("vars") or []
        if isinstance(raw, list) and all(isinstance(v, str) for v in raw):
            for v in raw:
                self._table.declare(v)

    def _answer(self) -> Answer:
        if self._state != "done":
            raise ValueError(f"malformed SPARQL results JSON ({self.bytes:,} bytes): truncated")
        doc: dict[str, Any] = {}
        if self._head is not _UNSET:
            doc["head"] = self._head
        if self._boolean is not _UNSET:
            doc["boolean"] = self._boolean
        if self._boolean is not _UNSET or not self._results:
            return from_results_json(doc)  # the boolean, or a head without results (its checks)
        from_results_json({**doc, "results": {"bindings": []}})  # the head's checks
        return self._table.answer()
