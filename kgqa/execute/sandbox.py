"""The sandbox for untrusted (predicted) queries: refuse what could change a KG or reach the
network before any engine sees the query.

:func:`refusal` returns a reason (a one-line message) or None. A query is refused when a
keyword token (outside strings, IRIs, comments, prefixed names and variable names; case
does not matter) is

- a SPARQL 1.1 Update operation or clause: ``INSERT``, ``DELETE``, ``LOAD``, ``CLEAR``,
  ``DROP``, ``CREATE``, ``ADD``, ``MOVE``, ``COPY``, ``WITH``, ``USING`` (unless
  ``allow_update``);
- ``SERVICE`` (federated query: it would make kgqa call a URL chosen by the system under
  test) unless ``allow_service``.

Queries are token-scanned by :mod:`kgqa.execute.lexer`, so ``"delete me"``, ``ex:drop``,
``?insert`` and ``# LOAD <x>`` are not refused. The embedded engine is also read-only by
construction (it only ever calls ``Store.query``, which cannot run updates, in worker processes
that hold a read-only store or a private copy, and without network where the OS allows).
"""

from __future__ import annotations

from kgqa.execute.lexer import significant, tokenize

UPDATE_KEYWORDS = frozenset("INSERT DELETE LOAD CLEAR DROP CREATE ADD MOVE COPY WITH USING".split())
SERVICE_KEYWORD = "SERVICE"


def refusal(query: str, allow_service: bool = False, allow_update: bool = False) -> str | None:
    """Why ``query`` must not run, or None when it may. See the module docstring."""
    if not isinstance(query, str):
        return f"query is not text ({type(query).__name__})"
    for tok in significant(tokenize(query)):
        if tok.kind != "word":
            continue
        word = tok.upper
        if word in UPDATE_KEYWORDS and not allow_update:
            return (f"refused: SPARQL Update ({word} at offset {tok.start}); "
                    "untrusted queries may only read the KG")
        if word == SERVICE_KEYWORD and not allow_service:
            return (f"refused: SERVICE (federated query at offset {tok.start}) would contact another "
                    "endpoint; allow it explicitly with --allow-service")
    return None
