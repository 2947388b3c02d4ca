"""Transcriptions of the official evaluation scripts' arithmetic, one function per script, each
quirk on its own commented line quoting the script statement it restates. They are the oracle
the differential tests (tests/score/test_official_differential.py) hold kgqa's profiles to; they read
the files' JSON as the scripts do (no kgqa code).

- :func:`webqsp_eval`: WebQuestionsSP ``eval/eval.py`` (Python 2.7; Microsoft Research release);
- :func:`cwq_eval`: ComplexWebQuestions ``eval_script.py`` v1.0;
- :func:`mintaka_eval`: Mintaka ``evaluate/evaluate.py`` (amazon-science/mintaka), pandas 1.x/2.x;
- :func:`qald_eval`: QALD ``6/scripts/evaluation.rb`` (ag-sc/QALD, commit ceabb5f; Ruby 3.1 with
  ``URI.unescape`` as it was, ``URI::DEFAULT_PARSER.unescape``).

Each raises where its script raises (``ScriptStops``), so a test can tell refused inputs apart.
"""

from __future__ import annotations

import collections
import math
import re
import unicodedata
from urllib.parse import unquote_to_bytes

import regex


class ScriptStops(Exception):
    """The script raises on this input (the message says where)."""


# --------------------------------------------------------------------------- WebQSP eval.py


def webqsp_prf1(gold_answers: list, pred: list) -> list[float]:
    if len(gold_answers) == 0:  # if len(goldAnswerList) == 0:
        return [1.0, 1.0, 1.0] if len(pred) == 0 else [0.0, 1.0, 0.0]  # 'correct' / precision=0 and recall=1
    if len(pred) == 0:  # elif len(predAnswerList)==0: return [1.0, 0.0, 0.0]
        return [1.0, 0.0, 0.0]
    glist = [x["AnswerArgument"] for x in gold_answers]  # glist =[x["AnswerArgument"] for x in goldAnswerList]
    tp, fp, fn = 1e-40, 0.0, 0.0  # tp = 1e-40  # numerical trick
    for g in glist:
        if any(g == p for p in pred):  # FindInList: `entry == item` (2005 != u"2005"; u" m.x" != u"m.x")
            tp += 1
        else:
            fn += 1
    for p in pred:
        if not any(p == g for g in glist):  # for pentry in plist: if not FindInList(pentry,glist): fp += 1
            fp += 1
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return [precision, recall, (2 * precision * recall) / (precision + recall)]


def webqsp_eval(gold_doc: dict, preds: list) -> dict:
    by_id = {}
    for item in preds:
        by_id[item["QuestionId"]] = item["Answers"]  # PredAnswersById[...] = ...: a repeated id keeps the last
    total, f1sum, recsum, precsum, correct = 0.0, 0.0, 0.0, 0.0, 0
    per_question = []
    for entry in gold_doc["Questions"]:  # every record, a repeated QuestionId included
        skip = True
        for parse in entry["Parses"]:
            c = parse["AnnotatorComment"]
            if c["QuestionQuality"] == "Good" and c["ParseQuality"] == "Complete":
                skip = False
        if len(entry["Parses"]) == 0 or skip:  # if(len(entry["Parses"])==0 or skip): continue
            continue
        total += 1  # total += 1 (before the prediction lookup)
        qid = entry["QuestionId"]
        if qid not in by_id:  # numNotInc: counted, adds nothing
            per_question.append((qid, 0.0, 0.0, 0.0))
            continue
        best = (-9999, -9999, -9999)  # bestf1 = -9999 ...
        for parse in entry["Parses"]:
            p, r, f = webqsp_prf1(parse["Answers"], by_id[qid])
            if f > best[2]:  # if f1 > bestf1: the first of equal F1s
                best = (p, r, f)
        precsum, recsum, f1sum = precsum + best[0], recsum + best[1], f1sum + best[2]
        if best[2] == 1.0:  # if bestf1 == 1.0: numCorrect += 1
            correct += 1
        per_question.append((qid, *best))
    if total == 0:
        raise ScriptStops("ZeroDivisionError: no counted question")
    p, r = precsum / total, recsum / total
    return {"Average precision": p, "Average recall": r, "Average f1": f1sum / total,
            "F1 of average recall and average precision": 2 * r * p / (r + p),
            "True accuracy": correct / total, "n": int(total), "per_question": per_question}


# --------------------------------------------------------------------------- CWQ eval_script.py


def _cwq_proprocess(answer: str) -> str:
    text = unicodedata.normalize("NFKD", answer).encode("ascii", "ignore").decode(encoding="UTF-8")
    text = re.sub(r"\W", " ", text).lower().strip()  # removing common endings such as "f.c."
    if text.startswith("the "):  # three ifs, one after the other
        text = text[4:]
    if text.startswith("a "):
        text = text[2:]
    if text.startswith("an "):
        text = text[3:]
    return text


def cwq_matches(span, gold: list, question: str) -> bool:
    spans = [span]  # compare_span_to_answer([prediction['answer']], ...)
    answers = [a.lower().strip() for a in gold]  # answers = [answer.lower().strip() for answer in answers]
    question = question.lower().strip()
    for answer in answers:
        if answer in spans:  # exact match: the prediction as written (not lower-cased)
            return True
        if _cwq_proprocess(answer) in spans:
            return True
        if question.find("year") > -1:  # year should match year
            m = re.search("([1-2][0-9]{3})", answer)
            year = m.group(0) if m is not None else None
            if any(type(s) is str and s == year for s in spans):  # spans_series == year_in_answer
                return True
    return False


def cwq_eval(dataset: list, predictions: list) -> dict:
    by_id = {}
    for rec in dataset:
        if rec["ID"] in by_id:
            raise ScriptStops("a repeated dataset ID: dataset_df.loc[ID, 'answers'] is a Series")
        by_id[rec["ID"]] = rec
    p1, per_row = 0, []
    for prediction in predictions:  # for prediction in predictions: every row, a repeated ID too
        rec = by_id.get(prediction["ID"])
        if rec is None:
            raise ScriptStops(f"KeyError: {prediction['ID']}")
        gold = []
        for answer in rec["answers"]:
            gold.append(answer["answer"])  # golden_answer_list.append(answer['answer'])
            gold += answer["aliases"]  # golden_answer_list += answer['aliases']
        cur = 0
        if None not in gold:  # if not None in golden_answer_list:
            cur = 100 if cwq_matches(prediction["answer"], gold, rec["question"]) else 0  # compute_P1
        p1 += cur  # P1 += curr_P1
        per_row.append((prediction["ID"], cur))
    return {"P1": p1 / len(dataset), "per_row": per_row}  # return P1/len(dataset_df)


# --------------------------------------------------------------------------- Mintaka evaluate.py

_TOKEN = regex.compile(r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])", flags=regex.IGNORECASE + regex.UNICODE + regex.MULTILINE)


def _mintaka_answer(a: dict, mode: str, lang: str):
    if a["answerType"] == "entity":
        if mode == "kg":
            return None if a["answer"] is None else [e["name"] for e in a["answer"]]  # a list of Q-codes
        if a["answer"] is None:
            return a["mention"]  # if no entities linked, return annotator's text answer
        labels = []
        for e in a["answer"]:
            if isinstance(e["label"], str):
                raise ScriptStops("TypeError: v1.0 label is a string: ent['label'][lang]")
            labels.append(e["label"][lang] if e["label"][lang] else e["label"]["en"])
        return " ".join(labels)
    if mode == "text":
        if not a["answer"]:
            raise ScriptStops("answer['answer'][0] of a null or empty list")
        return str(a["answer"][0])  # str(answer['answer'][0])
    return a["answer"]


def pandas_preds(preds: dict) -> dict:
    """pd.DataFrame(json.load(f).items()): an all-numeric pred column with a null or a float is
    float64 (pandas 1.x/2.x inference): integers become floats, null becomes NaN."""
    vals = list(preds.values())
    numeric = [v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in vals]
    if vals and all(numeric) and not all(v is None for v in vals) and not all(type(v) is int for v in vals):
        return {k: float("nan") if v is None else float(v) for k, v in preds.items()}
    return preds


def _mintaka_pred(p, mode: str):
    if p is None:  # if pred is None: return pred
        return p
    if mode == "text":
        return str(p)  # str(pred)
    return p if isinstance(p, list) else [p]  # [pred]


def _mintaka_tokens(text) -> list[str]:
    if not isinstance(text, str):
        raise ScriptStops("TypeError: unicodedata.normalize of NaN (no prediction)")
    return [m.group().lower() for m in _TOKEN.finditer(unicodedata.normalize("NFD", text))]


def _mintaka_em(pred, answer, mode: str):
    if mode == "text" and pred and answer:  # if mode == 'text' and pred and answer:
        p, a = _mintaka_tokens(pred), _mintaka_tokens(answer)
        for i in range(0, len(p) - len(a) + 1):
            if a == p[i: i + len(a)]:  # the gold tokens occur as a contiguous run
                return True
        return False
    return int(pred == answer)  # int(pred == answer): lists, order and duplicates matter; NaN never equal


def _mintaka_f1(pred, answer, mode: str) -> float:
    if not answer or not pred:  # if not answer or not pred: return int(answer == pred)
        return int(answer == pred)
    if isinstance(pred, float):
        raise ScriptStops("TypeError: Counter(NaN) (no prediction)")
    if mode == "text":
        pred, answer = pred.split(), answer.split()  # whitespace tokens, not normalised
    common = collections.Counter(pred) & collections.Counter(answer)
    same = sum(common.values())
    if same == 0:
        return 0
    precision, recall = 1.0 * same / len(pred), 1.0 * same / len(answer)
    return (2 * precision * recall) / (precision + recall)


def _mintaka_h1(pred, answer, mode: str):
    if mode == "text" or pred is None or answer is None:  # same as exact match
        return _mintaka_em(pred, answer, mode)
    return int(len(collections.Counter(pred) & collections.Counter(answer)) > 0)


def mintaka_eval(test: list, preds: dict, mode: str, lang: str = "en") -> dict:
    preds = pandas_preds(preds)  # load_predictions: the DataFrame's typing of the pred column
    rows = []
    for rec in test:  # mintaka_test.merge(mintaka_pred, on='id', how='left'): NaN where no prediction
        pred = _mintaka_pred(preds[rec["id"]], mode) if rec["id"] in preds else float("nan")
        answer = _mintaka_answer(rec["answer"], mode, lang)
        rows.append((rec["id"], float(_mintaka_em(pred, answer, mode)), float(_mintaka_f1(pred, answer, mode)),
                     float(_mintaka_h1(pred, answer, mode))))
    n = len(rows)
    return {"Exact Match": sum(r[1] for r in rows) / n, "F1": sum(r[2] for r in rows) / n,
            "Hits@1": sum(r[3] for r in rows) / n, "per_question": rows}


# --------------------------------------------------------------------------- QALD evaluation.rb


def qald_normalize(value):
    if not isinstance(value, str):
        raise ScriptStops("NoMethodError: strip of a value that is not a string")
    if re.fullmatch(r"[0-9]+", value):  # if answer =~ /\A\d+\z/ then answer + ".0" (Ruby's \d: ASCII)
        return value + ".0"
    value = value.lstrip(" \t\n\v\f\r").rstrip(" \t\n\v\f\r\0")  # answer.strip
    return unquote_to_bytes(value).decode("utf-8", "surrogateescape")  # URI.unescape: %XX to bytes


def _ruby_to_i(text: str) -> int:
    m = re.match(r"\s*([+-]?\d+(?:_\d+)*)", text)  # String#to_i: a leading integer, else 0
    return int(m.group(1).replace("_", "")) if m else 0


def _qald_read(doc: dict) -> dict:
    out = {}
    for question in doc["questions"]:
        answers = []
        for answer in question.get("answers", []):  # if question.key? "answers"
            if "results" in answer and "bindings" in answer["results"]:
                for bind in answer["results"]["bindings"]:
                    b = collections.Counter(qald_normalize(v["value"]) for v in bind.values())  # Multiset
                    answers.append(("multiset", tuple(sorted(b.items()))))
            elif "boolean" in answer:
                answers.append(("boolean", answer["boolean"]))  # answers << answer["boolean"]
        qid = question["id"]
        if isinstance(qid, str):
            qid = _ruby_to_i(qid)  # if (id.is_a? String) then id = id.to_i end
        out[qid] = list(dict.fromkeys(answers))  # out[id] = answers.uniq; a repeated id: the last wins
    return out


def _fscore(p, r):
    return 0 if p == 0 and r == 0 else (2 * p * r) / (p + r)  # fscore(precision,recall)


def qald_eval(gold_doc: dict, system_doc: dict) -> dict:
    gold, user = _qald_read(gold_doc), _qald_read(system_doc)
    sum_p = sum_r = 0
    correct = gold_all = gold_proc = total_user = processed = 0
    breakdown = {}
    for qid, g in gold.items():  # answers_gold.each
        gold_all += len(g)
        if qid in user:  # results[id][:processed] = true: present in the system file
            u = user[qid]
            c = len([x for x in u if x in g])  # (user.select {|x| gold.include? x}).length
            processed += 1
            gold_proc += len(g)
            total_user += len(u)
            correct += c
            if len(g) == 0:  # OUT OF SCOPE questions
                p = r = f = 1 if len(u) == 0 else 0
            else:
                p = 1 if len(u) == 0 else c / len(u)
                r = c / len(g)
                f = _fscore(p, r)
        else:
            p = r = f = 0  # not processed
        breakdown[qid] = (p, r, f)
        sum_p += p
        sum_r += r
    n = len(gold)  # total_number_of_questions = answers_gold.keys.length
    micro_p = correct / total_user if total_user else 0
    micro_r_proc = correct / gold_proc if gold_proc else 0
    micro_r_all = correct / gold_all if gold_all else 0
    mp_proc = sum_p / processed if processed else 0
    mr_proc = sum_r / processed if processed else 0
    mp_all, mr_all = (sum_p / n, sum_r / n) if n else (0, 0)
    return {
        "Micro Recall (all)": micro_r_all, "Micro Precision (all)": micro_p,
        "Micro F1 (all)": _fscore(micro_p, micro_r_all),
        "Macro Recall (all)": mr_all, "Macro Precision (all)": mp_all, "Macro F1 (all)": _fscore(mp_all, mr_all),
        "Micro Recall (processed)": micro_r_proc, "Micro Precision (processed)": micro_p,
        "Micro F1 (processed)": _fscore(micro_p, micro_r_proc),
        "Macro Recall (processed)": mr_proc, "Macro Precision (processed)": mp_proc,
        "Macro F1 (processed)": _fscore(mp_proc, mr_proc),
        "per_question": breakdown,
    }


def isclose(a: float, b: float) -> bool:
    """Equal to 6 decimals (what the differential tests require)."""
    return math.isclose(a, b, abs_tol=5e-7)
