"""SPARQL 1.1 Query Results XML Format (https://www.w3.org/TR/rdf-sparql-XMLres/): parse and write.

:func:`parse_results_xml` turns a ``<sparql>`` document into a
:class:`~kgqa.model.TableAnswer` (``<results>``) or a :class:`~kgqa.model.BooleanAnswer`
(``<boolean>``):

- variables are the ``<head><variable name=...>`` in order, followed by any variable that a
  ``<binding>`` uses without declaring it (kept, never dropped, as the JSON parser does);
- a cell is ``<uri>`` -> :class:`~kgqa.model.IRI`, ``<bnode>`` -> :class:`~kgqa.model.BNode`,
  ``<literal>`` -> :class:`~kgqa.model.Literal` (``xml:lang`` kept as the language tag,
  ``datatype`` kept unless it is ``xsd:string``); a variable without a ``<binding>`` in a
  ``<result>`` is unbound (``None``);
- elements are matched with or without the results namespace; ``<link>`` is ignored.

Anything else (not XML, another root element, a ``<binding>`` without ``name``, an unknown
cell element such as RDF-star ``<triple>``, a boolean other than ``true``/``false``) raises
:class:`ValueError` with a message that says what was expected. DTDs and entity declarations
are rejected outright: results documents never need them. :class:`XmlResultsStream` reads a
document fed in pieces (expat events) with the row and column caps of
:mod:`kgqa.execute.results_stream` enforced while reading; :func:`parse_results_xml` is it,
uncapped, on a whole document.

Hand-written rather than ``pyoxigraph.parse_query_results(..., QueryResultsFormat.XML)``:
pyoxigraph refuses a document whose ``<binding>`` names a variable the ``<head>`` does not
declare (and reports a DTD as an early end of file), where kgqa keeps the variable as its JSON
parser does, so an endpoint's sloppy but readable answer is scored rather than turned into an
error; ``tests/execute/test_endpoint.py::test_pyoxigraph_xml_parser_differs`` shows the difference and
that both agree on well-formed documents.
"""

from __future__ import annotations

from xml.parsers import expat

from kgqa.execute.results_stream import DEFAULT_MAX_COLUMNS, ResultTable
from kgqa.model.answer import Answer, BooleanAnswer
from kgqa.model.terms import BNode, IRI, Literal, Term, XSD_STRING

NS = "http://www.w3.org/2005/sparql-results#"
_XML_NS = "http://www.w3.org/XML/1998/namespace"


def _local(name: str) -> str:
    """``ns name`` (expat with namespaces) -> ``name`` for the results namespace or none; other
    namespaces keep theirs so they never match a results element by accident."""
    ns, sep, local = name.rpartition(" ")
    if not sep:
        return name
    return local if ns == NS else "{" + ns + "}" + local


class XmlResultsStream:
    """SPARQL Query Results XML, fed in pieces (:meth:`feed`), answer at :meth:`close`.
    See the module docstring for what is read and refused."""

    def __init__(self, max_rows: int | None = None, max_columns: int | None = DEFAULT_MAX_COLUMNS):
        self._table = ResultTable(max_rows, max_columns)
        p = expat.ParserCreate(namespace_separator=" ")
        p.buffer_text = True
        p.StartElementHandler = self._start
        p.EndElementHandler = self._end
        p.CharacterDataHandler = self._text
        p.StartDoctypeDeclHandler = self._doctype
        p.EntityDeclHandler = self._doctype
        self._p = p
        self._path: list[str] = []
        self._boolean: str | None = None
        self._results = False
        self._row: dict[str, Term] = {}
        self._nrow = 0
        self._binding: str | None = None
        self._values = 0
        self._cell: tuple[str, dict[str, str]] | None = None
        self._chars: list[str] = []
        self.bytes = 0

    def feed(self, data: bytes | str) -> None:
        self.bytes += len(data)
        self._parse(data, False)

    def close(self) -> Answer:
        self._parse(b"", True)
        if self._boolean is not None:
            text = self._boolean.strip().lower()
            if text not in ("true", "false"):
                raise ValueError(f"<boolean> must be true or false, got {self._boolean!r}")
            return BooleanAnswer(text == "true")
        if not self._results:
            raise ValueError("neither <results> nor <boolean> in the SPARQL results XML document")
        return self._table.answer()

    def _parse(self, data: bytes | str, final: bool) -> None:
        try:
            self._p.Parse(data, final)
        except expat.ExpatError as e:
            raise ValueError(f"malformed SPARQL results XML: {expat.ErrorString(e.code)}: line {e.lineno}, "
                             f"column {e.offset}") from None

    # ------------------------------------------------------------------ events

    def _doctype(self, *args: object) -> None:
        raise ValueError("SPARQL results XML must not contain a DTD or entity declarations")

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        local = _local(name)
        depth = len(self._path)
        self._path.append(local)
        if depth == 0:
            if local != "sparql":
                raise ValueError(f"expected a <sparql> results document, got <{local}>")
            return
        parent = self._path[-2]
        if depth == 2 and parent == "head" and local == "variable":
            vname = attrs.get("name")
            if not vname:
                raise ValueError("<variable> without a name attribute in <head>")
            self._table.declare(vname)
        elif depth == 1 and local == "boolean":
            self._chars = []
        elif depth == 1 and local == "results":
            self._results = True
        elif depth == 2 and parent == "results" and local == "result":
            self._row = {}
        elif depth == 3 and parent == "result" and local == "binding" and self._path[1] == "results":
            vname = attrs.get("name")
            if not vname:
                raise ValueError(f"result {self._nrow}: <binding> without a name attribute")
            self._binding = vname
            self._values = 0
        elif depth == 4 and parent == "binding" and self._binding is not None:
            self._values += 1
            self._cell = (local, attrs)
            self._chars = []

    def _text(self, data: str) -> None:
        if self._cell is not None or (len(self._path) == 2 and self._path[1] == "boolean"):
            if len(self._path) in (2, 5):  # text directly in <boolean> or in the value element
                self._chars.append(data)

    def _end(self, name: str) -> None:
        local = self._path.pop()
        depth = len(self._path)
        if depth == 1 and local == "boolean":
            self._boolean = "".join(self._chars)
        elif depth == 4 and self._cell is not None:
            if self._values == 1:
                kind, attrs = self._cell
                where = f"result {self._nrow}, binding {self._binding!r}"
                self._row[self._binding] = _cell(kind, attrs, "".join(self._chars), where)  # type: ignore[index]
            self._cell = None
        elif depth == 3 and local == "binding" and self._binding is not None:
            if self._values != 1:
                raise ValueError(f"result {self._nrow}, binding {self._binding!r}: expected one value element, "
                                 f"got {self._values}")
            self._binding = None
        elif depth == 2 and local == "result" and self._path[1] == "results":
            self._table.add(self._row)
            self._row = {}
            self._nrow += 1


def _cell(kind: str, attrs: dict[str, str], text: str, where: str) -> Term:
    if kind == "uri":
        return IRI(text.strip())
    if kind == "bnode":
        return BNode(text.strip())
    if kind == "literal":
        lang = attrs.get(_XML_NS + " lang") or attrs.get("lang")
        dt = attrs.get("datatype")
        if lang:
            return Literal(text, None, lang)
        return Literal(text, None if dt in (None, XSD_STRING) else dt)
    raise ValueError(f"{where}: unknown binding value <{kind}> (expected <uri>, <literal> or <bnode>)")


def parse_results_xml(data: bytes | str) -> Answer:
    """An answer from a SPARQL Query Results XML document (see the module docstring)."""
    stream = XmlResultsStream(max_rows=None, max_columns=None)
    stream.feed(data)
    return stream.close()
