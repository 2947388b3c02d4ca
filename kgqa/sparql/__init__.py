"""SPARQL analysis shared by every stage: a total lexer, a tolerant analyzer, canonical forms.

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
from kgqa.sparql.canonical import canonical_equal, canonical_form
from kgqa.sparql.lexer import Token, tokenize
from kgqa.sparql.prefixes import STANDARD_PREFIXES

__all__ = [
    "analyze", "QueryInfo", "Var", "Path", "TriplePattern", "Projection", "Aggregate",
    "OrderCondition", "Filter", "ValuesBlock", "canonical_form", "canonical_equal", "tokenize",
    "Token", "STANDARD_PREFIXES",
]
