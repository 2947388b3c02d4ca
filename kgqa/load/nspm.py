"""NSpM / DBNQA parallel files: ``data.en`` (one question per line) and ``data.sparql`` (the
query on the same line, in NSpM's encoded token form).

Encoded queries look like ``select var_x where brack_open dbr_Tour_de_la_Bourse dbo_architect
var_x brack_close`` (Soru, Marx et al., "SPARQL as a Foreign Language", 2017; the DBNQA
dataset of Hartmann et al. 2018 uses the same encoding).

**Decoding** (:func:`decode`) re-implements ``decode`` of LiberAI/NSpM ``generator_utils.py``
(version 0.0.4) exactly: first ``reverse_replacements`` -- for each row of
:data:`REPLACEMENTS` in order, every occurrence of the row's encoding (its last element) is
replaced by the row's original (its first element), then every occurrence of the encoding
stripped of blanks likewise -- then ``reverse_shorten_query``: ``_oba_ X`` becomes
``order by asc (X)`` and ``_obd_ X`` becomes ``order by desc (X)`` (case-insensitive).
The result uses prefixed names (``dbr:``, ``dbo:``, ...) that NSpM leaves undeclared.

**Executable form** (:func:`expand_prefixes`): every prefixed name with one of NSpM's
prefixes (``dbo dbp dbc dbr dct geo georss rdf rdfs foaf owl yago skos``) is replaced by
the full IRI ``<namespace + local part>``, so that no PREFIX declaration is needed; IRI
references (``<...>``) and string literals are left untouched. The local part runs to the
next blank or ``{ } < > "`` (an apostrophe belongs to it: ``dbr:Raymond's_Tomb``); closing parentheses at its end that have no
opening partner inside it are left outside (``filter(?x = dbr:A)``), while balanced ones stay
part of the name (``dbr:Mad_River_(California)``). This generalises NSpM's own
``fix_URI`` (which does this for ``dbr:`` only).

**Items**: ``id`` = the 1-based line number as a string; ``questions["en"]`` = the line of
the question file; ``sparql`` = ``expand_prefixes(decode(line))`` (option
``expand=False``: the plain NSpM decoding); ``metadata["sparql_encoded"]`` = the line as
written and ``metadata["sparql_decoded"]`` = ``decode(line)``. No stored answers.

**Files**: ``load([en, sparql])``; given one path ``X.en`` the file ``X.sparql`` beside it is
used (and given ``X.sparql``, ``X.en``). Both files must have the same number of lines
(a final newline does not count as a line): a mismatch is an InputError naming both files
and both counts. A line pair with an empty question or query is skipped and reported.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kgqa.load import formats
from kgqa.load.generic import text_lines
from kgqa.model import Dataset, InputError, Item, Problem

#: NSpM generator_utils.py REPLACEMENTS: [original, (other originals...), encoding].
REPLACEMENTS: list[list[str]] = [
    ["dbo:", "http://dbpedia.org/ontology/", "dbo_"],
    ["dbp:", "http://dbpedia.org/property/", "dbp_"],
    ["dbc:", "http://dbpedia.org/resource/Category:", "dbc_"],
    ["dbr:", "res:", "http://dbpedia.org/resource/", "dbr_"],
    ["dct:", "dct_"],
    ["geo:", "geo_"],
    ["georss:", "georss_"],
    ["rdf:", "rdf_"],
    ["rdfs:", "rdfs_"],
    ["foaf:", "foaf_"],
    ["owl:", "owl_"],
    ["yago:", "yago_"],
    ["skos:", "skos_"],
    [" ( ", "  par_open  "],
    [" ) ", "  par_close  "],
    ["(", " attr_open "],
    [") ", ")", " attr_close "],
    ["{", " brack_open "],
    ["}", " brack_close "],
    [" . ", " sep_dot "],
    [". ", " sep_dot "],
    ["?", "var_"],
    ["*", "wildcard"],
    [" <= ", " math_leq "],
    [" >= ", " math_geq "],
    [" < ", " math_lt "],
    [" > ", " math_gt "],
]

NAMESPACES: dict[str, str] = {
    "dbo": "http://dbpedia.org/ontology/",
    "dbp": "http://dbpedia.org/property/",
    "dbc": "http://dbpedia.org/resource/Category:",
    "dbr": "http://dbpedia.org/resource/",
    "dct": "http://purl.org/dc/terms/",
    "geo": "http://www.w3.org/2003/01/geo/wgs84_pos#",
    "georss": "http://www.georss.org/georss/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "owl": "http://www.w3.org/2002/07/owl#",
    "yago": "http://dbpedia.org/class/yago/",
    "skos": "http://www.w3.org/2004/02/skos/core#",
}


def reverse_replacements(sparql: str) -> str:
    for r in REPLACEMENTS:
        original, encoding = r[0], r[-1]
        sparql = sparql.replace(encoding, original)
        sparql = sparql.replace(encoding.strip(), original)
    return sparql


def reverse_shorten_query(sparql: str) -> str:
    sparql = re.sub(r"_oba_ ([\S]+)", "order by asc (\\1)", sparql, flags=re.IGNORECASE)
    sparql = re.sub(r"_obd_ ([\S]+)", "order by desc (\\1)", sparql, flags=re.IGNORECASE)
    return sparql


def decode(encoded: str) -> str:
    """NSpM's decoding of an encoded query (see the module docstring)."""
    return reverse_shorten_query(reverse_replacements(encoded))


_PREFIXED = re.compile(
    r"(<[^<>\s]*>)"                      # an IRI reference: left as it is
    r"|('(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")"  # a string literal: left as it is
    r"|(?<![\w:/#])(" + "|".join(sorted(NAMESPACES, key=len, reverse=True)) + r"):([^\s{}<>\"]*)"
)


def _local(local: str) -> tuple[str, str]:
    """Split trailing unmatched ``)`` off a local name: (name, rest)."""
    rest = ""
    while local.endswith(")") and local.count(")") > local.count("("):
        local, rest = local[:-1], ")" + rest
    return local, rest


def expand_prefixes(sparql: str) -> str:
    """Prefixed names of NSpM's prefixes replaced by full IRIs (see the module docstring);
    IRI references and string literals are left untouched."""

    def repl(m: re.Match) -> str:
        if m.group(3) is None:
            return m.group(0)
        name, rest = _local(m.group(4))
        iri = NAMESPACES[m.group(3)] + name
        iri = "".join(c if c not in '|^`\\' else f"%{ord(c):02X}" for c in iri)
        return f"<{iri}>{rest}"

    return _PREFIXED.sub(repl, sparql)


def _pair(paths: list[Path]) -> tuple[Path, Path]:
    if len(paths) >= 2:
        a, b = Path(paths[0]), Path(paths[1])
        if a.suffix == ".sparql" and b.suffix != ".sparql":
            a, b = b, a
        return a, b
    p = Path(paths[0])
    if p.suffix == ".sparql":
        candidates = [p.with_suffix(".en")]
        en, sp = candidates[0], p
    else:
        en, sp = p, p.with_suffix(".sparql")
    if not en.exists():
        raise InputError(p, f"NSpM data comes in pairs: expected the question file {en.name} beside it")
    if not sp.exists():
        raise InputError(p, f"NSpM data comes in pairs: expected the query file {sp.name} beside it")
    return en, sp


def load_nspm_dataset(paths: list[Path], **options: Any) -> Dataset:
    """Options: ``expand`` (default True): expand prefixed names to full IRIs; ``lang``
    (default ``en``): the language of the question file."""
    en, sp = _pair(paths)
    expand = options.get("expand", True)
    lang = options.get("lang") or "en"
    questions = text_lines(en)
    queries = text_lines(sp)
    if len(questions) != len(queries):
        raise InputError(
            en,
            f"the question file {en} has {len(questions)} lines but the query file {sp} has {len(queries)}; "
            "NSpM files must be parallel (one query per question, line by line)",
        )
    problems: list[Problem] = []
    items: list[Item] = []
    for n, (q, s) in enumerate(zip(questions, queries), start=1):
        record = f"line {n}"
        if not q.strip():
            problems.append(Problem(str(en), record, "empty question line; skipped (with its query)"))
            continue
        if not s.strip():
            problems.append(Problem(str(sp), record, "empty query line; skipped (with its question)"))
            continue
        encoded = s.strip()
        decoded = decode(encoded)
        sparql = expand_prefixes(decoded) if expand else decoded
        items.append(Item(str(n), {lang: q.strip()}, sparql, None, None, {}, {},
                          {"sparql_encoded": encoded, "sparql_decoded": decoded}))
    name = en.parent.name if en.stem == "data" else en.stem
    return Dataset(name, items, "nspm", [en, sp], problems, {"expand": bool(expand)})


_ENCODED = re.compile(r"\b(brack_open|brack_close|var_\w+|sep_dot)\b")


def sniff(sample: formats.Sample) -> float:
    suffix = sample.path.suffix
    if suffix == ".sparql":
        if _ENCODED.search(sample.head) and sample.path.with_suffix(".en").exists():
            return 0.9
        return 0.0
    if sample.path.with_suffix(".sparql").exists():
        try:
            head = sample.path.with_suffix(".sparql").open(encoding="utf-8", errors="replace").read(4096)
        except OSError:
            return 0.0
        if _ENCODED.search(head) and not sample.head.lstrip().startswith(("{", "[")):
            return 0.9
    return 0.0


FORMAT = formats.register(formats.Format(
    name="nspm",
    kind="dataset",
    description="NSpM / DBNQA parallel files data.en + data.sparql (encoded SPARQL, decoded on load)",
    sniff=sniff,
    load=load_nspm_dataset,
    extensions=(".en", ".sparql"),
    aliases=("dbnqa",),
))
