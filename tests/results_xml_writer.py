"""A SPARQL Query Results XML writer for the tests of :mod:`kgqa.execute.results_xml` (kgqa only
reads that format; the tests write documents to read back)."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from kgqa.execute.results_xml import NS
from kgqa.model.answer import Answer, BooleanAnswer
from kgqa.model.terms import BNode, IRI, Term, XSD_STRING


def _cell_xml(term: Term) -> str:
    if isinstance(term, IRI):
        return f"<uri>{escape(term.value)}</uri>"
    if isinstance(term, BNode):
        return f"<bnode>{escape(term.id)}</bnode>"
    attrs = ""
    if term.language:
        attrs = f" xml:lang={quoteattr(term.language)}"
    elif term.datatype and term.datatype != XSD_STRING:
        attrs = f" datatype={quoteattr(term.datatype)}"
    return f"<literal{attrs}>{escape(term.value)}</literal>"


def to_results_xml(answer: Answer) -> str:
    """A SPARQL Query Results XML document for ``answer`` (unbound cells are left out)."""
    out = ['<?xml version="1.0"?>', f'<sparql xmlns="{NS}">']
    if isinstance(answer, BooleanAnswer):
        out += ["<head/>", f"<boolean>{'true' if answer.value else 'false'}</boolean>"]
    else:
        out.append("<head>" + "".join(f"<variable name={quoteattr(v)}/>" for v in answer.variables) + "</head>")
        out.append("<results>")
        for row in answer.rows:
            cells = "".join(
                f"<binding name={quoteattr(v)}>{_cell_xml(c)}</binding>"
                for v, c in zip(answer.variables, row) if c is not None
            )
            out.append(f"<result>{cells}</result>")
        out.append("</results>")
    out.append("</sparql>")
    return "\n".join(out)
