"""Parameter values without pydantic, where typer's own coercion would return them unchanged or
by a rule as plain as ``int("5")``.

typer 0.29 checks every parameter of the command it runs with a pydantic ``TypeAdapter`` that it
builds on first use: importing pydantic and building about 50 adapters is 0.15-0.25 s of CPU on
every ``kgqa evaluate``, most of it for values that need no conversion (an absent option, a
string for a ``str``, the default ``Enum`` member). :func:`defer_coercion` gives each parameter of
a built command a stand-in that returns those values itself, as typer would return them, and hands
every other value (a bad one included) to typer's own coercion, built then: what a value becomes,
and every error message, stay typer's (tests/cli/test_cli_startup.py compares the two on every
parameter of every command). With a typer that builds no adapters (before 0.29, or a later one
that changed how) nothing is replaced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

try:  # typer's pydantic-free helpers, which its adapters wrap (typer >= 0.29)
    from typer._param_types import coerce_cli_choice, coerce_cli_path
except ImportError:  # pragma: no cover - another typer: its own coercion everywhere
    coerce_cli_choice = coerce_cli_path = None

_INT = re.compile(r"-?(0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?[0-9]+(\.[0-9]+)?")


class Defer(Exception):
    """This value goes to typer's own coercion."""


def _in_range(value: float, info: Any) -> bool:
    return (info.min is None or value >= info.min) and (info.max is None or value <= info.max)


def _number(kind: type, value: Any, info: Any) -> Any:
    if type(value) is not kind:
        if type(value) is not str or not (_INT if kind is int else _FLOAT).fullmatch(value):
            raise Defer
        value = kind(value)
    if not _in_range(value, info):  # out of range: typer says so (or clamps)
        raise Defer
    return value


def leaf(annotation: Any, value: Any, info: Any, param: Any, ctx: Any) -> Any:
    """What typer makes of ``value`` for a parameter of type ``annotation`` (not a list), or
    :class:`Defer`."""
    if annotation is str and type(value) is str:
        return value
    if annotation is bool and type(value) is bool:
        return value
    if annotation in (int, float):
        return _number(annotation, value, info)
    if isinstance(annotation, type) and issubclass(annotation, Enum) and coerce_cli_choice is not None:
        if type(value) is not annotation and type(value) is not str:
            raise Defer
        return coerce_cli_choice(value, choices=list(annotation), case_sensitive=info.case_sensitive, ctx=ctx)
    if annotation is Path and coerce_cli_path is not None and info.path_type in (None, Path):
        if type(value) is str and value:
            value = Path(value)
        if not isinstance(value, Path):
            raise Defer
        return coerce_cli_path(value, info, path_type=Path, param=param, ctx=ctx)
    raise Defer


def coerce(param: Any, value: Any, ctx: Any) -> Any:
    """The value typer's coercion of ``param`` returns for ``value``, or :class:`Defer`."""
    desc = param.type_descriptor
    info = desc.parameter_info
    if info.parser is not None or desc.file_annotation is not None:
        raise Defer
    many = param.multiple or param.nargs == -1
    if value is None:
        return () if many else None
    annotation = desc.annotation
    if get_origin(annotation) is list:
        if not many or not isinstance(value, (list, tuple)):
            raise Defer
        (item,) = get_args(annotation)
        return [leaf(item, v, info, param, ctx) for v in value]
    if many:
        raise Defer
    return leaf(annotation, value, info, param, ctx)


class Deferred:
    """Stands in for typer's coercion of one parameter until a value needs it."""

    __slots__ = ("param",)

    def __init__(self, param: Any):
        self.param = param

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            return coerce(param, value, ctx)
        except Exception:  # Defer, or a check that failed: typer's own coercion says what is wrong
            param._runtime_param = None
            return param.get_runtime_param().coerce(value, param=param, ctx=ctx)


def defer_coercion(cmd: Any) -> None:
    """Give every parameter of ``cmd`` and its subcommands whose typer coercion is not built yet
    (typer >= 0.29) a :class:`Deferred` stand-in."""
    if coerce_cli_choice is None:  # pragma: no cover
        return
    todo: list[Any] = [cmd]
    while todo:
        c = todo.pop()
        params: Iterable[Any] = getattr(c, "params", ())
        for p in params:
            _defer(p)
        if hasattr(c, "get_help_option"):  # --help: made (and kept) when a call is parsed
            c.get_help_option = _help_option(c.get_help_option)
        todo.extend((getattr(c, "commands", None) or {}).values())


def _defer(p: Any) -> Any:
    if getattr(p, "_runtime_param", False) is None and hasattr(p, "get_runtime_param") and \
            hasattr(p, "type_descriptor"):
        p._runtime_param = Deferred(p)
    return p


def _help_option(make: Any) -> Any:
    def get_help_option(ctx: Any) -> Any:
        return _defer(make(ctx))

    return get_help_option
