"""SPARQL analysis shared by every stage: a total lexer, a tolerant analyzer, canonical forms.

Modules, in the order a query flows through them: :mod:`~kgqa.sparql.lexer` (one lossless
tokenizer, codepoint escapes), :mod:`~kgqa.sparql.parser` (tolerant recursive descent into
the typed tree of :mod:`~kgqa.sparql.tree`, with source spans), :mod:`~kgqa.sparql.checks`
(validity checks the parser applies), :mod:`~kgqa.sparql.analyzer` (facts:
:class:`QueryInfo`), :mod:`~kgqa.sparql.canonical`, :mod:`~kgqa.sparql.prefixes`.

- :func:`analyze` -> :class:`QueryInfo`: what a (possibly broken) query contains, and whether
  it is valid; never raises.
- :func:`canonical_form` / :func:`canonical_equal`: equality up to prefixes, variable names,
  pattern order, keyword case and whitespace.
- :data:`STANDARD_PREFIXES`: namespaces benchmarks use without declaring them.

This package imports only :mod:`kgqa.model`.
"""

from kgqa.sparql.analyzer import (
    Aggregate, Filter, OrderCondition, Path, Projection, QueryInfo, TriplePattern, ValuesBlock,
    Var, analyze,
)
from kgqa.sparql.canonical import canonical_equal, canonical_form, structure_template
from kgqa.sparql.lexer import Token, tokenize
from kgqa.sparql.prefixes import STANDARD_PREFIXES

__all__ = [
    "analyze", "QueryInfo", "Var", "Path", "TriplePattern", "Projection", "Aggregate",
    "OrderCondition", "Filter", "ValuesBlock", "canonical_form", "canonical_equal", "structure_template", "tokenize",
    "Token", "STANDARD_PREFIXES",
]
