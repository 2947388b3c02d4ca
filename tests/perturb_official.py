"""A seeded differential corpus for the official-script profiles: each function perturbs a real
benchmark file (QALD-9 test, Mintaka dev v1.0, from ``KGQA_DATA_DIR``) or builds one in the
published shape (WebQSP test, ComplexWebQuestions test: not redistributable here, so built from
the format description, seeded) and returns the files as the scripts read them, every edge case
of issue 35 mixed with the others:

- QALD: omitted questions, empty answers, an ``answers`` key absent, padded values, percent-escaped
  IRIs, integers written "N" / "N.0", a second variable in the rows, a boolean answered with a row
  holding "true", flipped booleans, repeated rows, subsets and supersets, a question id given
  twice (the last wins), upper-cased values, and gold with repeated rows;
- Mintaka: Q-code lists in and out of order, single Q-codes, duplicates, partial and extra lists,
  numbers as JSON numbers, strings and floats, booleans as ``true``/``[true]``/``"True"``, the 21
  text numerical answers, null entity answer lists, null predictions, empty lists, an id given twice
  in the JSON text (the last wins), missing predictions where the script survives them; text mode
  on the v1.1 label shape (labels by language) with label texts, lower case, extra words, mentions;
- WebQSP: several parses (best F1), questions not Good/Complete, empty gold parses, a QuestionId
  given twice in the gold file and in the predictions (the last wins), padded answers, JSON numbers
  against strings, floats against integers, repeated answers, missing predictions;
- CWQ: predictions lower-cased, as written, normalised (accents, articles, punctuation), aliases,
  years for "year" questions, an ID given twice (both rows add), missing predictions, numbers,
  a null among the aliases.
"""

from __future__ import annotations

import copy
import json
import random
from urllib.parse import quote


# --------------------------------------------------------------------------- QALD


def _qald_rows(q: dict) -> list[dict]:
    return [b for a in q.get("answers", []) for b in a.get("results", {}).get("bindings", [])]


def _qald_boolean(q: dict):
    for a in q.get("answers", []):
        if "boolean" in a:
            return a["boolean"]
    return None


def _results(var: str, rows: list[dict]) -> list[dict]:
    return [{"head": {"vars": [var]}, "results": {"bindings": rows}}]


def _map_values(rows: list[dict], fn) -> list[dict]:
    return [{k: {**v, "value": fn(v["value"])} for k, v in row.items()} for row in rows]


def _escape(value: str) -> str:
    if value.startswith("http"):
        head, _, tail = value.rpartition("/")
        return head + "/" + quote(tail, safe="")
    return quote(value, safe="")


def _numeric(value: str) -> str:
    if value.isdigit():
        return value + ".0"
    if value.endswith(".0") and value[:-2].isdigit():
        return value[:-2]
    return value


def qald_system(gold: dict, seed: int) -> tuple[dict, dict]:
    """(gold, system) QALD JSON documents: gold with some repeated rows, the system perturbed."""
    rnd = random.Random(seed)
    gold = copy.deepcopy(gold)
    out = []
    for q in gold["questions"]:
        rows, boolean = _qald_rows(q), _qald_boolean(q)
        var = next(iter(rows[0]), "uri") if rows else "uri"
        if rows and rnd.random() < 0.1:  # gold with a repeated row (read once: answers.uniq)
            q["answers"] = _results(var, rows + [rows[0]])
        s = {"id": q["id"], "question": q.get("question", [])}
        kind = rnd.randrange(17)
        if kind == 1:
            continue  # omitted: not processed, P=R=F=0
        if kind == 2:
            s["answers"] = _results(var, [])
        elif kind == 3:
            pass  # no answers key: processed, no rows
        elif boolean is not None:
            if kind in (4, 5, 6):
                s["answers"] = _results("x", [{"x": {"type": "literal", "value": "true"}}])  # not the boolean true
            elif kind in (7, 8):
                s["answers"] = [{"head": {}, "boolean": not boolean}]
            else:
                s["answers"] = [{"head": {}, "boolean": boolean}]
        elif kind == 4:
            s["answers"] = _results(var, _map_values(rows, lambda v: f"  {v}\n"))  # stripped by normalize
        elif kind == 5:
            s["answers"] = _results(var, _map_values(rows, _escape))  # URI.unescape'd
        elif kind == 6:
            s["answers"] = _results(var, _map_values(rows, _numeric))  # "5" is "5.0"; "5.0" is not "5"
        elif kind == 7:
            s["answers"] = _results(var, [{**r, "label": {"type": "literal", "value": "x"}} for r in rows])
        elif kind == 8:
            s["answers"] = _results(var, rows + rows[: max(1, len(rows) // 2)])  # repeated rows
        elif kind == 9:
            s["answers"] = _results(var, rows[: len(rows) // 2])
        elif kind == 10:
            extra = [{var: {"type": "uri", "value": f"http://dbpedia.org/resource/Wrong_{i}"}} for i in range(3)]
            s["answers"] = _results(var, rows + extra)
        elif kind == 11:
            s["answers"] = _results(var, _map_values(rows, str.upper))
        elif kind == 12:  # given twice: the last record is read
            out.append({**s, "answers": _results(var, [])})
            s["answers"] = _results(var, rows)
        elif kind == 13:  # given twice, the right answer first
            out.append({**s, "answers": _results(var, rows)})
            s["answers"] = _results(var, rows[:1] + [{var: {"type": "literal", "value": "nope"}}])
        else:
            s["answers"] = copy.deepcopy(q.get("answers", []))
        out.append(s)
    rnd.shuffle(out)
    return gold, {"dataset": gold.get("dataset", {"id": "qald-9-test-multilingual"}), "questions": out}


# --------------------------------------------------------------------------- Mintaka


def to_v11(test: list) -> list:
    """The v1.1 label shape (an object by language) from v1.0's English label strings."""
    out = copy.deepcopy(test)
    for rec in out:
        a = rec["answer"]
        if a["answerType"] == "entity" and a["answer"]:
            for e in a["answer"]:
                if isinstance(e["label"], str):
                    e["label"] = {"en": e["label"], "de": "", "fr": e["label"].upper()}
    return out


def _kg_pred(rnd: random.Random, a: dict):
    vals = a["answer"]
    kind = rnd.randrange(12)
    if a["answerType"] == "entity":
        if vals is None:
            return rnd.choice([None, [], ["Q42"], "Q42"])
        names = [e["name"] for e in vals]
        return [names, names[0], names[::-1], names + names[:1], names[:1], names + ["Q1"], ["Q1"], None, [],
                names, names, names][kind]
    if a["answerType"] == "boolean":
        b = vals[0]
        return [b, [b], str(b), not b, [not b], "true", b, [b], None, b, [b], b][kind]
    v = vals[0]
    if isinstance(v, int):
        return [v, [v], str(v), float(v), v + 1, [v, v], None, v, v, [str(v)], v, [v]][kind]
    return [v, [v], v.lower(), v + "x", None, v, [v], v, [], v, v, [v]][kind]  # text numbers, dates, strings


def _text_pred(rnd: random.Random, a: dict, lang: str = "en"):
    kind = rnd.randrange(8)
    if a["answerType"] == "entity":
        if a["answer"] is None:
            gold = a["mention"]
        else:
            gold = " ".join(e["label"][lang] or e["label"]["en"] for e in a["answer"])
    else:
        gold = str(a["answer"][0])
    return [gold, gold.lower(), f"I think {gold}.", gold.split(" ")[0], "nothing", None, gold, gold][kind]


def mintaka_preds(test: list, seed: int, mode: str) -> tuple[str, dict]:
    """(JSON text of the prediction file, the dict json.load makes of it): every question has a
    prediction, except (KG mode) some whose gold is null (where the script survives one missing)."""
    rnd = random.Random(seed)
    entries = []
    for rec in test:
        a = rec["answer"]
        if mode == "kg" and a["answerType"] == "entity" and a["answer"] is None and rnd.random() < 0.4:
            continue  # missing, on a null gold: the script scores 0 without stopping
        pred = _kg_pred(rnd, a) if mode == "kg" else _text_pred(rnd, a)
        if rnd.random() < 0.02:  # the id given twice: json.load keeps the last
            entries.append((rec["id"], "WRONG" if mode == "text" else ["Q1"]))
        entries.append((rec["id"], pred))
    text = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in entries) + "}"
    return text, json.loads(text)


# --------------------------------------------------------------------------- WebQSP


def _mid(rnd: random.Random) -> str:
    return "m." + "".join(rnd.choice("0123456789abcdefghijklmnopqrstuvwxyz_") for _ in range(rnd.randint(4, 7)))


def _parse(rnd: random.Random, qid: str, n: int, good: bool) -> dict:
    if rnd.random() < 0.15:
        answers = [{"AnswerType": "Value", "AnswerArgument": str(rnd.randint(1900, 2015)), "EntityName": None}]
    else:
        answers = [{"AnswerType": "Entity", "AnswerArgument": _mid(rnd), "EntityName": "X"}
                   for _ in range(rnd.choice([0, 1, 1, 2, 3, 5]))]
    return {"ParseId": f"{qid}.P{n}", "AnnotatorComment": {
        "ParseQuality": "Complete" if good or rnd.random() < 0.5 else "Partial",
        "QuestionQuality": "Good" if good or rnd.random() < 0.5 else "Bad", "Confidence": "Normal",
        "FreeFormComment": "-"}, "Sparql": "PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT DISTINCT ?x WHERE { }",
        "TopicEntityMid": _mid(rnd), "TopicEntityName": "T", "PotentialTopicEntityMention": "t",
        "InferentialChain": ["a.b.c"], "Constraints": [], "Time": None, "Order": None, "Answers": answers}


def webqsp_files(seed: int, n: int = 400) -> tuple[dict, list]:
    """(WebQSP.test.json document, predictions list) in the release's shapes."""
    rnd = random.Random(seed)
    questions = []
    for i in range(n):
        qid = f"WebQTest-{i}"
        parses = [_parse(rnd, qid, k, good=rnd.random() < 0.9) for k in range(rnd.choice([1, 1, 1, 2, 3]))]
        questions.append({"QuestionId": qid, "RawQuestion": f"question {i}?", "ProcessedQuestion": f"question {i}",
                          "Parses": parses})
    for q in rnd.sample(questions, 6):  # a QuestionId the gold file repeats: counted per record
        twin = copy.deepcopy(q)
        twin["Parses"] = [_parse(rnd, q["QuestionId"], 9, good=True)]
        questions.append(twin)
    preds = []
    for q in questions[:n]:
        gold = [a["AnswerArgument"] for a in q["Parses"][0]["Answers"]]
        kind = rnd.randrange(12)
        if kind == 0:
            continue  # missing: counted, 0
        answers = [gold, gold[::-1], gold[:1], gold + [_mid(rnd)], [], [f" {g}" for g in gold],
                   [int(g) if g.isdigit() else g for g in gold], gold + gold, gold, gold, [_mid(rnd)], gold][kind]
        if rnd.random() < 0.05:  # repeated QuestionId: eval.py keeps the last record
            preds.append({"QuestionId": q["QuestionId"], "Answers": [_mid(rnd)]})
        preds.append({"QuestionId": q["QuestionId"], "Answers": answers})
    rnd.shuffle(preds)
    return {"Version": "1.0", "FreebaseVersion": "2015-08-09", "Questions": questions}, preds


# --------------------------------------------------------------------------- CWQ

_NAMES = ["José Martí", "The Beatles", "F.C. Barcelona", "Ahmad Shah Massoud", "An Lushan", "A Tribe Called Quest",
          "São Paulo", "Zürich", "Côte d'Ivoire", "Mount Everest", "Nirvana", "The Hague"]


def cwq_files(seed: int, n: int = 400) -> tuple[list, list]:
    """(ComplexWebQuestions_test.json records, predictions list) in the release's shapes."""
    rnd = random.Random(seed)
    dataset, preds = [], []
    for i in range(n):
        year_q = rnd.random() < 0.2
        if year_q:
            name = f"{rnd.randint(1900, 2015)}-0{rnd.randint(1, 9)}-1{rnd.randint(0, 9)}"
        else:
            name = rnd.choice(_NAMES) + ("" if rnd.random() < 0.5 else f" {i}")
        aliases = rnd.sample(["Alias One", "the alias", "ALIAS-3"], rnd.randint(0, 2))
        if rnd.random() < 0.03:
            aliases.append(None)  # a null in the gold list: the script's row adds 0
        rid = f"WebQTest-{i}_{rnd.getrandbits(32):08x}"
        question = f"what {'year' if year_q else 'thing'} is it {i}?"
        dataset.append({"ID": rid, "webqsp_ID": f"WebQTest-{i}", "webqsp_question": question,
                        "machine_question": question, "question": question, "sparql": "SELECT ?x WHERE { }",
                        "compositionality_type": rnd.choice(["composition", "conjunction", "comparative"]),
                        "answers": [{"answer": name, "answer_id": _mid(rnd), "aliases": aliases}],
                        "created": "2018-02-13T17:52:33"})
        kind = rnd.randrange(11)
        if kind == 0:
            continue
        norm = name.lower()
        text = [norm, name, _strip_accents_article(norm), (aliases[0] or "x").lower() if aliases else norm,
                name[:4] if year_q else norm, "wrong", 1987, norm, norm, name.upper(), norm][kind]
        preds.append({"ID": rid, "answer": text})
        if rnd.random() < 0.05:  # the ID given twice: both rows add
            preds.append({"ID": rid, "answer": rnd.choice([text, "wrong"])})
    rnd.shuffle(preds)
    return dataset, preds


def _strip_accents_article(text: str) -> str:
    import re
    import unicodedata

    t = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    t = re.sub(r"\W", " ", t).strip()
    for art in ("the ", "a ", "an "):
        if t.startswith(art):
            t = t[len(art):]
    return t
