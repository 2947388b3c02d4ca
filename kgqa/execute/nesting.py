"""How deeply a query nests, checked before the embedded engine parses it.

pyoxigraph's SPARQL parser and algebra are recursive: a query nested a few thousand levels deep
(``{{{{...}}}}``, ``((((...))))``, ``!!!!...``, or a chain of thousands of ``+`` / ``||`` /
``UNION`` that becomes a left-deep tree) overflows the stack of the worker process, which dies
with SIGSEGV; that used to be reported as a memory limit (transient, never cached), so every
rerun crashed a worker again. :func:`nesting_problem` measures the query's tokens instead:

- *nesting*: brackets open at a point (``(``, ``{``, ``[``) plus the run of prefix operators
  (``!``, ``^``, ``-``, ``+``) just before it; at most :data:`MAX_NESTING`;
- *chain*: binary operators (``||``, ``&&``, comparisons, ``+ - * /``, path ``/`` and ``|``)
  and ``UNION`` / ``OPTIONAL`` / ``MINUS`` at one bracket level; at most :data:`MAX_CHAIN`.

Beyond either, the engine answers ``exec_error: query too deeply nested ...`` at once: an
answer about the query itself, so it is definitive and cached. (pyoxigraph 0.5 crashes at about
2,000 nested braces, 5,000 parentheses and 10,000 chained ``+``; real benchmark queries nest
less than 20.) A text with few such characters is accepted without tokenising it.
"""

from __future__ import annotations

from kgqa.sparql.lexer import significant, tokenize

MAX_NESTING = 256
MAX_CHAIN = 1000

_OPEN = frozenset("({[")
_CLOSE = frozenset(")}]")
_PREFIX = frozenset(("!", "^", "-", "+"))
_BINARY = frozenset(("||", "&&", "=", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/", "|"))
_CHAIN_KEYWORDS = frozenset(("UNION", "OPTIONAL", "MINUS"))

__all__ = ["MAX_NESTING", "MAX_CHAIN", "nesting_problem"]


def _cheap_bounds(query: str) -> tuple[int, int]:
    """Upper bounds of (nesting, chain) from character counts alone."""
    nest = sum(query.count(c) for c in "({[!^-+")
    if nest <= MAX_NESTING and len(query) <= MAX_CHAIN:
        return nest, len(query)
    chain = sum(query.count(c) for c in "|&=<>+-*/!")
    up = query.upper()
    chain += sum(up.count(k) for k in _CHAIN_KEYWORDS)
    return nest, chain


def nesting_problem(query: str, max_nesting: int = MAX_NESTING, max_chain: int = MAX_CHAIN) -> str | None:
    """The ``exec_error`` message for a query nested deeper than the engine's parser can take
    (see the module docstring), or None."""
    nest, chain = _cheap_bounds(query)
    if nest <= max_nesting and chain <= max_chain:
        return None
    depth = run = deepest = 0
    chains = [0]
    longest = 0
    for t in significant(tokenize(query)):
        v = t.value
        if t.kind == "PUNCT":
            if v in _OPEN:
                depth += 1
                chains.append(0)
                deepest = max(deepest, depth + run)
                run = 0
                continue
            if v in _CLOSE:
                depth = max(0, depth - 1)
                if len(chains) > 1:
                    chains.pop()
                run = 0
                continue
            if v in _PREFIX:
                run += 1
                deepest = max(deepest, depth + run)
            else:
                run = 0
            if v in _BINARY:
                chains[-1] += 1
                longest = max(longest, chains[-1])
            continue
        run = 0
        if t.kind == "KEYWORD" and v in _CHAIN_KEYWORDS:
            chains[-1] += 1
            longest = max(longest, chains[-1])
    if deepest > max_nesting:
        return (f"query too deeply nested: {deepest} levels of brackets and prefix operators (at most {max_nesting}; "
                "deeper queries crash the engine's parser)")
    if longest > max_chain:
        return (f"query too deeply nested: a chain of {longest} operators or UNION/OPTIONAL/MINUS at one level "
                f"(at most {max_chain}; longer chains crash the engine's parser)")
    return None
