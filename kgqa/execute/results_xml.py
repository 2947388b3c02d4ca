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
are rejected outright: results documents never need them.

Hand-written rather than ``pyoxigraph.parse_query_results(..., QueryResultsFormat.XML)``:
pyoxigraph refuses a document whose ``<binding>`` names a variable the ``<head>`` does not
declare (and reports a DTD as an early end of file), where kgqa keeps the variable as its JSON
parser does, so an endpoint's sloppy but readable answer is scored rather than turned into an
error; ``tests/test_endpoint.py::test_pyoxigraph_xml_parser_differs`` shows the difference and
that both agree on well-formed documents.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from kgqa.model.answer import Answer, BooleanAnswer, TableAnswer
from kgqa.model.terms import BNode, IRI, Literal, Term, XSD_STRING

NS = "http://www.w3.org/2005/sparql-results#"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def _local(tag: str) -> str:
    """``{ns}name`` -> ``name``; elements in another namespace than the results one keep
    their ``{ns}`` so they never match a results element by accident."""
    if tag.startswith("{"):
        ns, _, name = tag[1:].partition("}")
        return name if ns == NS else tag
    return tag


def _cell(el: ET.Element, where: str) -> Term:
    kind = _local(el.tag)
    text = el.text or ""
    if kind == "uri":
        return IRI(text.strip())
    if kind == "bnode":
        return BNode(text.strip())
    if kind == "literal":
        lang = el.get(_XML_LANG) or el.get("lang")
        dt = el.get("datatype")
        if lang:
            return Literal(text, None, lang)
        return Literal(text, None if dt in (None, XSD_STRING) else dt)
    raise ValueError(f"{where}: unknown binding value <{kind}> (expected <uri>, <literal> or <bnode>)")


def parse_results_xml(data: bytes | str) -> Answer:
    """An answer from a SPARQL Query Results XML document (see the module docstring)."""
    head = data[:2048]
    head_s = head.decode("utf-8", "replace") if isinstance(head, bytes) else head
    if "<!DOCTYPE" in head_s.upper() or "<!ENTITY" in head_s.upper():
        raise ValueError("SPARQL results XML must not contain a DTD or entity declarations")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise ValueError(f"malformed SPARQL results XML: {e}") from None
    if _local(root.tag) != "sparql":
        raise ValueError(f"expected a <sparql> results document, got <{_local(root.tag)}>")
    variables: list[str] = []
    results_el = boolean_el = None
    for child in root:
        name = _local(child.tag)
        if name == "head":
            for v in child:
                if _local(v.tag) == "variable":
                    vname = v.get("name")
                    if not vname:
                        raise ValueError("<variable> without a name attribute in <head>")
                    if vname not in variables:
                        variables.append(vname)
        elif name == "results":
            results_el = child
        elif name == "boolean":
            boolean_el = child
    if boolean_el is not None:
        text = (boolean_el.text or "").strip().lower()
        if text not in ("true", "false"):
            raise ValueError(f"<boolean> must be true or false, got {boolean_el.text!r}")
        return BooleanAnswer(text == "true")
    if results_el is None:
        raise ValueError("neither <results> nor <boolean> in the SPARQL results XML document")
    raw_rows: list[dict[str, Term]] = []
    for i, res in enumerate(results_el):
        if _local(res.tag) != "result":
            continue
        row: dict[str, Term] = {}
        for b in res:
            if _local(b.tag) != "binding":
                continue
            vname = b.get("name")
            if not vname:
                raise ValueError(f"result {i}: <binding> without a name attribute")
            values = list(b)
            if len(values) != 1:
                raise ValueError(f"result {i}, binding {vname!r}: expected one value element, got {len(values)}")
            row[vname] = _cell(values[0], f"result {i}, binding {vname!r}")
            if vname not in variables:
                variables.append(vname)
        raw_rows.append(row)
    rows = tuple(tuple(r.get(v) for v in variables) for r in raw_rows)
    return TableAnswer(tuple(variables), rows)
