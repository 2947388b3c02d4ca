"""How kgqa executes queries: one :class:`ExecutionPolicy` instead of ``timeout``/``max_rows``/
``normalise`` threaded loose through every signature.

The policy says what happens before an engine sees a query (the normaliser, the sandbox for
untrusted queries) and the limits the engine enforces (timeout, row cap). It is frozen and
hashable, contributes its non-default settings to the score signature
(:meth:`ExecutionPolicy.signature_parts`), and is the place further caps go (memory, result
bytes): add a field with a default, pass it on in :class:`kgqa.execute.executor.Executor`, and
name it in ``signature_parts`` when it differs from the default.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kgqa.execute.engine import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT
from kgqa.execute.sandbox import UNSET, Prepared, prepare, query_bytes_refusal, readings
from kgqa.sparql.lexer import Token, tokenize
from kgqa.model.outcome import Outcome, Status
from kgqa.execute.normalise import normalise
from kgqa.sparql.analyzer import analyze


#: what a query, an update or a prologue starts with (glued to the next word or not, as
#: pyoxigraph reads ``INSERTDATA``), and Virtuoso's ``DEFINE`` pragma
_STARTS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE", "PREFIX", "BASE", "INSERT", "DELETE", "LOAD", "CLEAR",
           "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH", "DEFINE")
_AT_OFFSET = re.compile(r"at offset (\d+)")


def _starts_like_sparql(text: str) -> bool:
    for t in tokenize(text):
        return t.kind in ("KEYWORD", "PNAME", "ERROR") and t.value.upper().startswith(_STARTS)
    return False


def _stops_after_first_word(text: str, error_offset: int | None) -> bool:
    """The text's first word is a keyword and its parse fails at the very next token ("With
    the data ...", "Drop it"): prose that begins with a SPARQL word, not an update."""
    if error_offset is None:
        return False

    words = []
    for t in tokenize(text):
        words.append(t)
        if len(words) == 2:
            break
    return len(words) == 2 and words[1].start == error_offset and words[1].kind in ("ERROR", "PNAME", "KEYWORD", "A")


def _parses(texts: list[str]) -> bool:
    """Does any reading parse, as written or as the normaliser would repair it?"""

    return any(analyze(candidate).error is None
               for text in texts for candidate in dict.fromkeys((text, normalise(text).text)))


def refused_outcome(query: str, reason: str, elapsed: float = 0.0) -> Outcome:
    """The outcome of a query the sandbox refuses, labelled by what happened (docs/fidelity.md):

    - ``parse_error`` for text that is not SPARQL: none of the readings an engine may decode
      from it starts like a query, an update or a prologue ("I could not ... several services"
      is prose, not SERVICE), or it does start like one but stops being SPARQL before the word
      the sandbox refused (a query followed by an explanation that says "services") and no
      reading of it parses, as written, decoded or as the normaliser would repair it;
    - ``refused`` otherwise: a query the engine would parse (or might: a keyword glued to the
      next word, a dialect's pragma), which the sandbox did not let run. A query over the size
      cap is refused unparsed.
    """

    if query_bytes_refusal(query) is not None:
        return Outcome(Status.REFUSED, None, reason, elapsed)
    texts = [text for _label, text in readings(query)]
    info = analyze(query)
    if any(_starts_like_sparql(t) for t in texts):
        at = _AT_OFFSET.search(reason)
        prose = (at is not None and int(at.group(1)) == 0 and "after decoding" not in reason
                 and len(texts) == 1 and _stops_after_first_word(query, info.error_offset))
        if not prose and (at is None or "after decoding" in reason or info.error_offset is None
                          or int(at.group(1)) <= info.error_offset):
            return Outcome(Status.REFUSED, None, reason, elapsed)
        if _parses(texts):  # the refused word lies after the parse error: does any reading parse?
            return Outcome(Status.REFUSED, None, reason, elapsed)
    error = info.error or "not a SPARQL query or update"
    return Outcome(Status.PARSE_ERROR, None, f"parse error: {error} (not SPARQL: nothing was run)", elapsed)


@dataclass(frozen=True)
class ExecutionPolicy:
    """- ``timeout``: seconds per query (the engine stops the work and reports TIMEOUT);
    - ``max_rows``: a result over this many rows is an EXEC_ERROR, never a truncated table;
    - ``normalise``: pass every query through :func:`kgqa.execute.normalise.normalise` (prefix
      injection, dialect fixes) first;
    - ``sandbox``: refuse untrusted (predicted) queries that would update the KG or reach the
      network (:func:`kgqa.execute.sandbox.refusal`), with ``allow_service`` / ``allow_update``
      as its two exceptions;
    - ``trust_gold``: the one rule for gold queries (a dataset's or a KG owner's own queries: the
      evaluator's gold side, audits, ``generate``, ``migrate``, the store). True (the default)
      runs them unsandboxed (engines stay read-only whatever runs); False sandboxes them like
      predicted queries, for a dataset from an unknown source. Every caller passes a policy and
      asks :meth:`untrusted` instead of deciding itself.
    """

    timeout: float = DEFAULT_TIMEOUT
    max_rows: int = DEFAULT_MAX_ROWS
    normalise: bool = True
    sandbox: bool = True
    allow_service: bool = False
    allow_update: bool = False
    trust_gold: bool = True

    def untrusted(self, side: str) -> bool:
        """Whether a query of ``side`` (``"gold"`` or ``"predicted"``) goes through the sandbox."""
        if side == "gold":
            return not self.trust_gold
        if side == "predicted":
            return True
        raise ValueError(f"side must be 'gold' or 'predicted', got {side!r}")

    def __post_init__(self) -> None:
        if not self.timeout > 0:
            raise ValueError(f"timeout must be positive, got {self.timeout!r}")
        if int(self.max_rows) < 1:
            raise ValueError(f"max_rows must be a positive integer, got {self.max_rows!r}")

    def with_(self, **changes: Any) -> "ExecutionPolicy":
        return replace(self, **changes)

    def prepare(self, query: str, *, untrusted: bool = True) -> tuple[str, list[str], Outcome | None]:
        """What happens before an engine sees ``query``: the normaliser (when on) and, for an
        untrusted query, the sandbox. Returns the text to execute, the normaliser's rewrites,
        and a REFUSED outcome when the sandbox refuses the query (else None)."""
        return self.outcome_of(self.prepared(query, untrusted=untrusted))

    def prepared(self, query: str, *, untrusted: bool = True,
                 scan: Callable[[list[Token]], Any] | None = None, scan_simple: Any = UNSET) -> Prepared:
        """:meth:`prepare` as the sandbox's :class:`~kgqa.execute.sandbox.Prepared` (``scan``,
        ``scan_simple``: see :func:`kgqa.execute.sandbox.prepare`)."""
        return prepare(query, normalise=self.normalise, untrusted=untrusted and self.sandbox,
                       allow_service=self.allow_service, allow_update=self.allow_update, scan=scan,
                       scan_simple=scan_simple)

    @staticmethod
    def outcome_of(p: Prepared) -> tuple[str, list[str], Outcome | None]:
        """:meth:`prepare`'s triple for a :class:`~kgqa.execute.sandbox.Prepared`."""
        if p.refusal is not None:
            return p.text, p.rewrites, refused_outcome(p.text, p.refusal)
        return p.text, p.rewrites, None

    def signature_parts(self) -> dict[str, str]:
        """``normalise:yes|no`` always; every other setting only when it is not the default."""
        parts = {"normalise": "yes" if self.normalise else "no"}
        default = ExecutionPolicy()
        if self.timeout != default.timeout:
            parts["timeout"] = f"{self.timeout:g}"
        if self.max_rows != default.max_rows:
            parts["max_rows"] = str(self.max_rows)
        if not self.sandbox:
            parts["sandbox"] = "off"
        if self.allow_service:
            parts["service"] = "allowed"
        if self.allow_update:
            parts["update"] = "allowed"
        if not self.trust_gold:
            parts["gold_queries"] = "sandboxed"
        return parts
