"""Reading input files with clear errors: UTF-8 text, JSON, YAML and XML.

Every reader raises :class:`~kgqa.model.InputError` naming the file and the exact place:

- non-UTF-8 bytes: the byte offset (and line/column) of the first undecodable byte;
- malformed JSON / YAML / XML: line and column (1-based) reported by the parser;
- a document nested deeper than :data:`MAX_DEPTH` levels (no loader needs more; deeper input
  could exhaust the stack of a parser or of the code that walks the document).

Files are opened read-only and never modified. A UTF-8 byte-order mark is skipped.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Iterable
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import yaml

from kgqa.model import InputError

import orjson  # a C parser: same documents, same values (see fast_loads), several times faster

BOM = b"\xef\xbb\xbf"
#: Deepest nesting of lists/objects accepted in a JSON or YAML document.
MAX_DEPTH = 100


def nesting_depth(doc: Any, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of a parsed document (a scalar is 0), computed without recursion; stops
    counting at ``limit + 1``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        d += 1
        if d > deepest:
            deepest = d
            if deepest > limit:
                return deepest
        stack.extend((c, d) for c in children if isinstance(c, (dict, list, tuple)))
    return deepest


def check_depth(doc: Any, path: Path | str, what: str = "document") -> Any:
    """``doc``, or :class:`InputError` when it is nested deeper than :data:`MAX_DEPTH`."""
    if nesting_depth(doc) > MAX_DEPTH:
        raise InputError(path, f"{what} nested deeper than {MAX_DEPTH} levels; not a benchmark file")
    return doc


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in bytes) of ``offset`` in ``data``."""
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


def read_bytes(path: Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise InputError(path, f"cannot read file: {e.strerror or e}") from None


def decode_utf8(data: bytes, path: Path) -> str:
    """``data`` decoded as UTF-8 (BOM skipped). On a bad byte: InputError naming its offset,
    e.g. ``not valid UTF-8: byte 0xe9 at offset 1234 (line 40, column 17)``."""
    skip = 3 if data.startswith(BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as e:
        off = e.start + skip
        line, col = _line_col(data, off)
        raise not_utf8(path, data[off], off, line, col) from None


def not_utf8(path: Path, byte: int, offset: int, line: int, column: int) -> InputError:
    """The error for a byte that is not UTF-8, naming where it is (file offset, 1-based line and
    column in bytes) and what to do."""
    return InputError(path, f"not valid UTF-8: byte 0x{byte:02x} at offset {offset} (line {line}, column {column}); "
                            "re-save the file as UTF-8 (it looks like Latin-1 or another legacy encoding)")


def read_text(path: Path) -> str:
    return decode_utf8(read_bytes(path), path)


#: 19 ASCII digits in a row (a JSON number has no other digits): an integer orjson could read as
#: a float (json keeps it exact). A digit followed by 18 more, which the regex engine searches
#: 2-3x faster than ``\d{19}``.
_LONG_DIGITS = re.compile(r"[0-9](?=[0-9]{18})")


_INT_DIGITS = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 4300
_HUGE_INT = re.compile(r"\d{%d,}" % (_INT_DIGITS + 1))


def fast_loads(text: str) -> Any:
    """What ``json.loads(text)`` returns, parsed by orjson where that gives the same value.

    orjson reads integers beyond 64 bits as floats and refuses NaN/Infinity, lone surrogates and
    nesting deeper than 1024; for those documents (and for malformed ones, so that the error
    names line and column as ``json`` does) the standard parser reads the text instead."""
    if not _LONG_DIGITS.search(text):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer beyond Python's int_max_str_digits: malformed input, with its place
        m = _HUGE_INT.search(text)
        raise json.JSONDecodeError(f"number with more than {_INT_DIGITS:,} digits", text, m.start() if m else 0) from None


def json_object(text: str | bytes) -> dict[str, Any] | None:
    """The JSON object orjson reads from ``text``; None when it is malformed or not an object
    (the caller then reads it with :func:`loads`, whose errors name line and column). What a
    line reader's fast path starts from: it must accept only values orjson and ``json`` read
    alike (strings, nulls, booleans, lists of those; not integers beyond 64 bits)."""
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return doc if doc.__class__ is dict else None


def plain_object(text: str | bytes) -> dict[str, Any] | None:
    """The JSON object ``text`` holds when it is a flat record: an object whose values are
    strings, integers, booleans, nulls and lists of those, read by orjson; None for anything
    else (malformed, not an object, a float or a nested object anywhere), which the caller
    reads with :func:`loads`. For such a record orjson and ``json`` give the same value (orjson
    reads integers beyond 64 bits as floats, refused here; lone surrogates and NaN it refuses
    itself) and it is nested two levels deep at most, so :func:`loads` would return an equal
    object and raise nothing: the line readers' fast path (several times faster than
    :func:`loads`, whose search for long integers dominates)."""
    doc = json_object(text)
    if doc is None:
        return None
    for v in doc.values():
        c = v.__class__
        if c is str or c is int or c is bool or v is None:
            continue
        if c is list and _PLAIN.issuperset(map(type, v)):
            continue
        return None
    return doc


_PLAIN = frozenset({str, int, bool, type(None)})


def dumps(doc: Any, indent: bool = True) -> str:
    """``json.dumps(doc, indent=2, ensure_ascii=False)`` (compact without ``indent``), written by
    orjson where it can: the same document, several times faster. Where orjson differs it is the
    stricter: a float NaN or infinity is written ``null`` (valid JSON) rather than ``NaN``, and
    non-string keys become strings as json does. Integers beyond 64 bits (which orjson refuses)
    are written by orjson as raw number fragments, digit for digit what json writes. Values
    orjson cannot write (unknown types) go through ``json``, and so does a string holding a lone
    surrogate (a JSON input may escape one, ``"\\ud800"``): the document is then written with
    every non-ASCII character escaped, since a lone surrogate has no UTF-8 form."""
    option = (orjson.OPT_INDENT_2 if indent else 0) | orjson.OPT_NON_STR_KEYS
    try:
        return orjson.dumps(doc, option=option).decode()
    except TypeError:
        pass
    try:  # the usual reason: an integer beyond 64 bits (json's pure-Python indenter is slow)
        return orjson.dumps(_big_ints_as_fragments(doc), option=option).decode()
    except TypeError:
        pass
    text = json.dumps(doc, indent=2 if indent else None, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(doc, indent=2 if indent else None, ensure_ascii=True)
    return text


_INT64_MIN, _UINT64_END = -(2**63), 2**64


def _big_ints_as_fragments(doc: Any) -> Any:
    """``doc`` with each integer outside orjson's 64-bit range as an ``orjson.Fragment`` of its
    decimal digits (a key as its string, as json writes it); other values unchanged."""
    c = doc.__class__
    if c is int:
        return doc if _INT64_MIN <= doc < _UINT64_END else orjson.Fragment(str(doc))
    if c is dict:
        return {(str(k) if k.__class__ is int and not _INT64_MIN <= k < _UINT64_END else k):
                _big_ints_as_fragments(v) for k, v in doc.items()}
    if c is list or c is tuple:
        return [_big_ints_as_fragments(v) for v in doc]
    return doc


def _too_deep(text: str, doc: Any) -> bool:
    # a document cannot be nested deeper than the number of brackets it has: count them first
    return text.count("[") + text.count("{") > MAX_DEPTH and nesting_depth(doc) > MAX_DEPTH


def loads(text: str) -> Any:
    """``json.loads`` for one embedded value (a JSONL line, a CSV or TSV cell): a document
    nested deeper than :data:`MAX_DEPTH` raises ``json.JSONDecodeError`` like malformed JSON."""
    try:
        doc = fast_loads(text)
    except RecursionError:
        raise json.JSONDecodeError(f"nested deeper than {MAX_DEPTH} levels", text, 0) from None
    if _too_deep(text, doc):
        raise json.JSONDecodeError(f"nested deeper than {MAX_DEPTH} levels", text, 0)
    return doc


def parse_json(text: str, path: Path, what: str = "JSON document") -> Any:
    """The parsed JSON of ``text``; InputError when malformed or nested deeper than
    :data:`MAX_DEPTH`."""
    try:
        doc = fast_loads(text)
    except json.JSONDecodeError as e:
        raise InputError(path, f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise InputError(path, f"{what} nested deeper than {MAX_DEPTH} levels; not a benchmark file") from None
    if _too_deep(text, doc):
        raise InputError(path, f"{what} nested deeper than {MAX_DEPTH} levels; not a benchmark file")
    return doc


def read_json(path: Path) -> Any:
    """The parsed JSON document of ``path``."""
    return parse_json(read_text(path), path)


#: Most nodes YAML aliases (``*anchor``) may add to a document when expanded: a 700-byte
#: "billion laughs" document of nested aliases expands to billions; benchmark files use none.
MAX_YAML_ALIAS_NODES = 100_000

#: Most characters of scalar text YAML aliases may add to a document when expanded: one 8 MB
#: scalar named by 4,000 aliases (under the node cap) is 33 GB once a reader copies each
#: (a JSON dump, a cache, a tokenizer); benchmark files use no aliases.
MAX_YAML_ALIAS_BYTES = 16 << 20

#: as yaml.safe_load (same values); LibYAML's parser where PyYAML has it (4x quicker on the dataset
#: registry every command reads at start-up), the pure-Python one otherwise
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml_expansion(node: yaml.Node) -> tuple[int, int, int, int, int]:
    """``(distinct nodes, nodes when every alias is expanded, depth, characters of the distinct
    scalars, characters of the scalars when every alias is expanded)`` of a composed YAML node graph, in time linear
    in its distinct nodes (sizes are memoised per node, never expanded). Raises ValueError for
    a recursive alias (a node that contains itself)."""
    size: dict[int, int] = {}
    nbytes: dict[int, int] = {}
    depth: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]

    def children(n: yaml.Node) -> list[yaml.Node]:
        if isinstance(n, yaml.MappingNode):
            return [x for pair in n.value for x in pair]
        if isinstance(n, yaml.SequenceNode):
            return list(n.value)
        return []

    while stack:
        n, done = stack.pop()
        key = id(n)
        if done:
            kids = children(n)
            size[key] = 1 + sum(size[id(c)] for c in kids)
            nbytes[key] = sum(nbytes[id(c)] for c in kids) if kids else len(n.value) if isinstance(
                n, yaml.ScalarNode) else 0
            depth[key] = (1 + max((depth[id(c)] for c in kids), default=0)) if isinstance(
                n, (yaml.MappingNode, yaml.SequenceNode)) else 0
            on_path.discard(key)
            continue
        if key in size:
            continue
        if key in on_path:
            raise ValueError("recursive alias (a node that contains itself)")
        on_path.add(key)
        stack.append((n, True))
        for c in children(n):
            if id(c) in on_path:
                raise ValueError("recursive alias (a node that contains itself)")
            if id(c) not in size:
                stack.append((c, False))
    distinct_bytes = sum(nbytes[k] for k in nbytes if size[k] == 1)  # scalars (and empty collections)
    return len(size), size[id(node)], depth[id(node)], distinct_bytes, nbytes[id(node)]


def load_yaml_text(text: str, path: Path | str, what: str = "YAML document") -> Any:
    """The parsed YAML document in ``text`` (safe: no object construction), with bounded
    expansion: the node graph is composed first and measured without expanding aliases; more
    than :data:`MAX_YAML_ALIAS_NODES` nodes or :data:`MAX_YAML_ALIAS_BYTES` characters of text added
    by aliases, a recursive alias, or nesting
    deeper than :data:`MAX_DEPTH` is an :class:`InputError` before anything is constructed.
    Malformed YAML: an InputError with its line and column."""
    loader = None
    try:
        loader = _YAML_LOADER(text)
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            distinct, expanded, deepest, text_bytes, expanded_bytes = _yaml_expansion(node)
        except ValueError as e:
            raise InputError(path, f"{what} refused: {e}") from None
        if expanded - distinct > MAX_YAML_ALIAS_NODES:
            raise InputError(path, f"{what} refused: its aliases expand {distinct:,} nodes to {expanded:,} (more than "
                                   f"{MAX_YAML_ALIAS_NODES:,} added by aliases; a YAML alias bomb?)")
        if expanded_bytes - text_bytes > MAX_YAML_ALIAS_BYTES:
            raise InputError(path, f"{what} refused: its aliases expand {text_bytes:,} characters of text to "
                                   f"{expanded_bytes:,} (more than {MAX_YAML_ALIAS_BYTES:,} added by aliases; "
                                   "a YAML alias bomb?)")
        if deepest > MAX_DEPTH:
            raise InputError(path, f"{what} nested deeper than {MAX_DEPTH} levels; not a benchmark file")
        return loader.construct_document(node)
    except RecursionError:
        raise InputError(path, f"{what} nested deeper than {MAX_DEPTH} levels; not a benchmark file") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or (str(e).splitlines() or ["parse error"])[0]
        raise InputError(path, f"malformed YAML{where}: {problem}") from None
    finally:
        if loader is not None:
            loader.dispose()


def read_yaml(path: Path) -> Any:
    """The parsed YAML document of ``path`` (:func:`load_yaml_text`: safe, bounded expansion)."""
    return check_depth(load_yaml_text(read_text(path), path), path, "YAML document")


def read_xml(path: Path) -> ET.Element:
    """The root element of the XML file ``path``. DTDs and entity declarations are refused
    (no entity expansion: protects against "billion laughs" inputs)."""
    data = read_bytes(path)
    text = decode_utf8(data, path)
    head = text[:4096]
    if "<!DOCTYPE" in head or "<!ENTITY" in text:
        raise InputError(path, "XML with a DOCTYPE or entity declarations is not accepted (unsafe)")
    parser = ET.XMLParser()
    try:
        # parse the decoded text so that an XML declaration naming another encoding is ignored
        parser.feed(text.encode("utf-8") if not text.lstrip().startswith("<?xml") else _strip_decl(text).encode("utf-8"))
        return parser.close()
    except ET.ParseError as e:
        line, col = e.position
        msg = str(e).split(":")[0]
        raise InputError(path, f"malformed XML at line {line}, column {col + 1}: {msg}") from None
    except ValueError as e:  # e.g. an XML declaration that never ends
        raise InputError(path, f"malformed XML: {e}") from None
    except RecursionError:
        raise InputError(path, "XML nested too deeply; not a benchmark file") from None


def _strip_decl(text: str) -> str:
    """Replace the XML declaration by blanks of the same length (keeps line/column numbers)."""
    start = text.index("<?xml")
    end = text.find("?>", start)
    if end < 0:
        raise ValueError("the XML declaration '<?xml' is never closed with '?>'")
    end += 2
    decl = text[start:end]
    return text[:start] + "".join("\n" if c == "\n" else " " for c in decl) + text[end:]


class OutputError(InputError):
    """An output file that cannot be written (disk full, read-only, no permission): one line
    naming it; the previous file, if any, is left as it was."""


def write_atomic(path: Path, chunks: Iterable[str]) -> None:
    """Write UTF-8 text to ``path`` via a temporary file in the same folder and a rename, so a
    reader never sees half a file. The file gets the usual permissions (0666 less the umask),
    not mkstemp's private 0600. A failure to write (disk full, read-only file system, ...) is
    an :class:`OutputError` naming the file; nothing is left behind."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        # a lone surrogate (JSON may escape one) has no UTF-8 form: written as its escape, \ud800
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="\n") as fh:
            for c in chunks:
                fh.write(c)
        os.replace(tmp, path)
    except BaseException as e:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if isinstance(e, OSError):
            raise OutputError(path, f"cannot write: {e.strerror or e}; nothing was written (a previous file there is "
                                    "unchanged): free space or run the command again with another output path (kgqa "
                                    "evaluate takes the queries it executed from the result cache)") from None
        raise
