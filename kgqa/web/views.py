"""What the pages show, computed from stored experiments. Tables and figures come from the
report stage (:mod:`kgqa.report`): one rendering path for the CLI, the HTML report and the web.
Scoring and comparison go through :mod:`kgqa.store.runner` (the one pipeline adapter).

Finished experiments are immutable, so everything derived from one is cached in memory."""

from __future__ import annotations

import difflib
import threading
from concurrent.futures import Future
from collections import Counter
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from markupsafe import Markup

from kgqa.store import Experiment, Store
from kgqa.store import runner
from kgqa.analyze.characteristics import answer_characteristics, per_question_scores, query_characteristics
from kgqa.analyze.stats import bootstrap_ci
from kgqa.analyze.taxonomy import classify, classify_evaluation
from kgqa.load import registry
from kgqa.model.answer import to_results_json
from kgqa.report.html import html_report
from kgqa.score.evaluate import require_items
from kgqa.store.export import FORMATS, export
from kgqa.web.boards import RESAMPLES, TESTED, BoardTests, Tested, renamed, unique_names
from kgqa.web.jobs import open_store

QUESTION_ROWS = 2_000  # per-question rows an experiment page lists (downloads have all)
BOARD_ROWS = 100  # leaderboard rows a page lists
LIST_ROWS = 50  # experiments a home or compare-picker page lists
PAGES = 512  # finished experiments whose page data stays cached (scores, question rows: small)


def _mean_ci(evaluation: Any, label: str, *, seed: int = 0, resamples: int = 10_000):
    """Bootstrap CI of the mean of a measure's per-question values (None: no per-question values)."""

    vals = list(per_question_scores(evaluation, label).values())
    if not vals:
        return None
    return bootstrap_ci(vals, resamples=resamples, seed=seed)


@dataclass
class ScoreRow:
    label: str
    measure: str
    value: float | None
    low: float | None
    high: float | None
    n: int | None


class Views:
    """Page data for one store (with per-experiment caches)."""

    def __init__(self, store: Store, memory_mb: float = 0.0):
        self.store = store
        self.boards = BoardTests(store, memory_mb)
        self._evals: dict[str, Any] = {}
        self._sections: dict[tuple, Markup] = {}
        self._datasets: dict[tuple, dict[str, Any]] = {}
        self._pages: dict[str, dict[str, Any]] = {}
        self._coming: dict[tuple, Future] = {}  # page data being computed in the test process
        self._locks: dict[tuple, threading.Lock] = {}

    def _once(self, key: tuple) -> threading.Lock:
        """The lock under which ``key``'s cached value is computed: requests arriving together
        (50 participants opening a fresh leaderboard) compute it once, not once each."""
        if len(self._locks) > 4096:
            self._locks.clear()  # a key computed twice at worst
        return self._locks.setdefault(key, threading.Lock())

    def _trim(self, keep: int = 64) -> None:
        while len(self._sections) >= keep:
            self._sections.pop(next(iter(self._sections)))

    # ------------------------------------------------------------------ experiments

    def evaluation(self, e: Experiment):
        """``e``'s evaluation, the 64 most recently used kept (a leaderboard's top ones are asked
        for again whenever a new experiment enters the top)."""
        ev = self._evals.pop(e.id, None)
        if ev is None:
            ev = e.evaluation()
            while len(self._evals) >= 64:
                self._evals.pop(next(iter(self._evals)), None)
        self._evals[e.id] = ev
        return ev

    def scores(self, e: Experiment) -> list[ScoreRow]:
        ev = self.evaluation(e)
        rows = []
        for s in ev.measures:
            ci = _mean_ci(ev, s.label, resamples=RESAMPLES)
            v = ev.aggregate.get(s.label)
            rows.append(ScoreRow(s.label, s.measure.full, None if v is None or v != v else v,
                                 ci.low if ci else None, ci.high if ci else None, ci.n if ci else None))
        return rows

    def sections(self, e: Experiment) -> Markup:
        """Outcomes, score distribution, breakdowns and error taxonomy of one experiment (the
        HTML report's sections)."""
        key = ("exp", e.id)
        if key not in self._sections:
            self._trim()
            self._sections[key] = Markup(_report_sections([self.evaluation(e)], start="outcomes"))
        return self._sections[key]

    def page(self, e: Experiment, only: frozenset[str] | None = None) -> dict[str, Any]:
        """A finished experiment's page data: scores with their CIs, question rows (``only``:
        those questions' rows, as a hidden-gold dataset shows the published ones) and labels,
        and the evaluation's execution notes; computed once per experiment (bootstrap CIs and
        the error taxonomy cost tens of ms each), so ``e`` may come without its results."""
        key = (e.id, only)
        got = self._pages.get(key)
        coming = self._coming.get(key)
        if got is None and coming is not None:  # being computed in the process (it just finished): awaited
            try:
                got = coming.result()
            except Exception:  # computed here instead
                got = None
        if got is None:
            with self._once(("page", *key)):
                got = self._pages.get(key)
                if got is None:
                    kept = e.id in self._evals
                    got = self._keep_page(key, self._page_data(e, only))
                    if not kept:  # cached as page data now: its evaluation leaves room for the leaderboards'
                        self._evals.pop(e.id, None)
        return got

    def precompute_page(self, e: Experiment, only: frozenset[str] | None = None) -> None:
        """:meth:`page`'s data computed in the leaderboards' test process (its results read and
        scored there, not under the server's GIL) and cached here: what the server does when an
        experiment finishes, before anyone asks for its page."""
        key = (e.id, only)
        if key in self._pages:
            return
        try:  # (a request for the page meanwhile awaits this rather than computing it again)
            fut = self._coming[key] = self.boards.submit(page_in_worker, self.store.url, e.id, only)
            got = fut.result()
        except Exception:  # (a process that could not start or died): computed here, as a request would
            self._coming.pop(key, None)
            self.page(e, only)
            return
        with self._once(("page", *key)):
            if key not in self._pages:
                self._keep_page(key, got)
        self._coming.pop(key, None)

    def _page_data(self, e: Experiment, only: frozenset[str] | None) -> dict[str, Any]:
        ev = self.evaluation(e)
        notes = SimpleNamespace(engine_dependence=ev.engine_dependence, execution=ev.execution,
                                skipped=ev.skipped, problems=ev.problems)
        return {"scores": self.scores(e), "questions": self.questions(e, only), "labels": self.question_labels(e),
                "evaluation": notes}

    def _keep_page(self, key: tuple, got: dict[str, Any]) -> dict[str, Any]:
        while len(self._pages) >= PAGES:
            self._pages.pop(next(iter(self._pages)), None)
        self._pages[key] = got
        return got

    def questions(self, e: Experiment, only: frozenset[str] | None = None) -> list[dict[str, Any]]:
        """The rows of the per-question table (``only``: of these questions)."""
        ev = self.evaluation(e)
        shown = [q for q in ev.questions if only is None or q.id in only][:QUESTION_ROWS]
        if only is None:
            tax = classify_evaluation(ev)
        else:  # the taxonomy of the rows shown only
            require_items([ev], "the error taxonomy")
            tax = {q.id: classify(q) for q in shown}
        labels = [s.label for s in ev.measures if any(s.label in q.scores for q in ev.questions)]
        out = []
        for q in shown:
            d = q.details or {}
            out.append({
                "id": q.id, "question": d.get("question") or "", "outcome": q.outcome,
                "taxonomy": tax[q.id].label, "scores": [q.scores.get(lab) for lab in labels],
                "message": q.message,
            })
        return out

    def question_labels(self, e: Experiment) -> list[str]:
        ev = self.evaluation(e)
        return [s.label for s in ev.measures if any(s.label in q.scores for q in ev.questions)]

    def question(self, e: Experiment, qid: str) -> dict[str, Any] | None:
        ev = self.evaluation(e)
        q = next((x for x in ev.questions if x.id == qid), None)
        if q is None:
            return None
        d = q.details or {}
        gold_q = d.get("gold_sparql") or ""
        pred_q = d.get("predicted_sparql") or ""
        gold_a, pred_a = _answer_values(d.get("gold_answer")), _answer_values(d.get("predicted_answer"))
        diff = list(difflib.unified_diff(gold_q.splitlines(), pred_q.splitlines(), "gold", "predicted", lineterm="", n=2))
        label = classify(q)
        return {
            "id": q.id, "question": d.get("question") or "", "outcome": q.outcome, "message": q.message,
            "scores": q.scores, "taxonomy": label.label, "taxonomy_reason": label.reason,
            "gold_sparql": gold_q, "predicted_sparql": pred_q, "query_diff": diff,
            "gold_answer": gold_a, "predicted_answer": pred_a,
            "both": sorted(set(gold_a or []) & set(pred_a or [])),
            "only_gold": sorted(set(gold_a or []) - set(pred_a or [])),
            "only_predicted": sorted(set(pred_a or []) - set(gold_a or [])),
            "counts": q.counts, "details": {k: v for k, v in d.items() if k in ("answer_type", "groups", "metadata", "elapsed")},
        }

    def downloads(self, e: Experiment, fmt: str) -> tuple[str, str]:
        """(text, media type) of a download in ``fmt`` (json, csv, latex, md, html)."""

        ev = None if fmt == "json" else self.evaluation(e)
        return export(e, fmt, evaluation=ev, resamples=RESAMPLES), FORMATS[fmt][1]

    # ------------------------------------------------------------------ leaderboards, comparisons

    def leaderboard(self, dataset: str, profile: str, *, page: int = 1, per: int = BOARD_ROWS, after: str | None = None,
                    before: str | None = None, until: str | None = None) -> dict[str, Any]:
        """The finished experiments of ``dataset`` x ``profile`` on page ``page`` (``per`` a
        page; or the ``per`` right after / before experiment ``after`` / ``before``: keyset
        paging), best first, with significance letters (ranx style, all pairs of the top
        :data:`TESTED` on the headline measure) and the Holm-adjusted p of the comparison with
        the best. Only the page's rows and the top ones' summaries are read; the tests are
        computed off the request path once per set of top experiments
        (:class:`kgqa.web.boards.BoardTests`): until they are in, ``pending`` is true and the
        letters shown are those computed last for the board (``tested_at`` says when), on the
        rows that were in its top then. ``until``: a frozen board ranks the experiments created
        at or before this ISO time only."""
        total = self.store.count(dataset=dataset, profile=profile, status="finished", until=until)
        offset = (min(max(1, page), max(1, -(-total // per))) - 1) * per  # past the end: the last page
        try:
            pg = self.store.leaderboard_page(dataset, profile, limit=per, offset=offset, after=after, before=before,
                                             until=until)
        except KeyError:  # the cursor's experiment was deleted: the numbered page instead
            pg = self.store.leaderboard_page(dataset, profile, limit=per, offset=offset, until=until)
        exps, offset = pg.experiments, pg.offset
        top = exps[:TESTED] if offset == 0 else self.store.leaderboard(dataset, profile, limit=TESTED, until=until)
        headline = top[0].headline if top else None
        tested, pending = self.boards.get((dataset, profile, until), headline, top)
        return self._leaderboard(dataset, profile, exps, top, offset, total, tested, pending)

    def warm_board(self, dataset: str, profile: str, until: str | None = None) -> None:
        """Start the tests of the board's current top (an experiment on it just finished), so
        the next page finds them computed."""
        top = self.store.leaderboard(dataset, profile, limit=TESTED, until=until)
        self.boards.get((dataset, profile, until), top[0].headline if top else None, top)

    def _leaderboard(self, dataset: str, profile: str, exps: list[Experiment], top: list[Experiment], offset: int,
                     total: int, tested: Tested | None, pending: bool) -> dict[str, Any]:
        labels: list[str] = []
        for e in exps:
            for k in e.aggregate:
                if k not in labels:
                    labels.append(k)
        headline = top[0].headline if top else None
        result = tested.result if tested is not None else {"letters": {}, "vs_best": {}, "note": ""}
        letters, vs_best = result["letters"], result["vs_best"]
        note = result["note"]
        if not note and total > TESTED:
            note = (f"Significance is tested among the top {TESTED} of {total} experiments; "
                    "compare any others from the checkboxes.")
        in_top = {e.id for e in top}  # (a last result's letters of experiments that left the top are not shown)
        rows = []
        for rank, (e, name) in enumerate(zip(exps, unique_names(exps)), offset + 1):
            shown = e.id in in_top
            rows.append({"rank": rank, "e": e, "name": name, "letters": letters.get(e.id, ("", "")) if shown else ("", ""),
                         "vs_best": vs_best.get(e.id) if shown else None, "values": [e.aggregate.get(k) for k in labels],
                         "untested": pending and shown and e.id not in letters})
        return {"dataset": dataset, "profile": profile, "labels": labels, "rows": rows, "headline": headline,
                "head": labels.index(headline) if headline in labels else -1,  # the headline's column
                "note": note, "total": total, "offset": offset, "pending": pending, "tested": len(top),
                "tested_at": tested.at if pending and tested is not None else None}

    def compare(self, exps: list[Experiment]) -> Markup:
        key = ("cmp", tuple(e.id for e in exps))
        if key not in self._sections:
            self._trim()
            names = unique_names(exps)
            evals = [renamed(self.evaluation(e), n) for e, n in zip(exps, names)]
            cmp = runner.compare(evals, resamples=RESAMPLES)
            self._sections[key] = Markup(_report_sections(evals, start="scores", comparison=cmp))
        return self._sections[key]

    # ------------------------------------------------------------------ datasets

    def dataset(self, name: str) -> dict[str, Any]:
        key = ("ds", name)
        if key not in self._datasets:
            with self._once(key):
                if key not in self._datasets:
                    self._datasets[key] = self._dataset(name)
        info = dict(self._datasets[key])
        info["boards"] = [(d, p, n) for d, p, n in self.store.boards() if d == name]
        return info

    def audit(self, name: str, kg_name: str, kg: str) -> dict[str, Any]:
        key = ("audit", name, kg_name)
        if key not in self._datasets:
            self._datasets[key] = {"kg": kg_name, **runner.audit_dataset(name, kg)}
        return self._datasets[key]

    def _dataset(self, name: str) -> dict[str, Any]:
        """Registry entry, characteristics and a gold-query audit summary (does every gold
        query parse; forms, functions, hops, answers)."""

        entry = registry.find(name)
        if entry is None:
            raise KeyError(name)
        info: dict[str, Any] = {"entry": entry, "where": registry.where(entry), "error": None}
        try:
            ds = runner.load_dataset(name)
        except Exception as err:  # absent data: the page says so
            info["error"] = str(err)
            return info
        langs = Counter(str(it.metadata.get("language") or "") for it in ds.items)
        qc = [query_characteristics(it.sparql) for it in ds.items]
        with_query = [c for c in qc if c.get("form") is not None]
        ac = [answer_characteristics(to_results_json(it.answer) if it.answer is not None else None, it.answer_type)
              for it in ds.items]
        info.update({
            "n": len(ds.items), "format": ds.format, "languages": dict(langs.most_common()),
            "with_query": len(with_query), "valid": sum(1 for c in with_query if c.get("gold_valid")),
            "invalid_ids": [it.id for it, c in zip(ds.items, qc) if c.get("form") is not None and not c.get("gold_valid")][:20],
            "with_answer": sum(1 for it in ds.items if it.answer is not None),
            "forms": dict(Counter(str(c.get("form")) for c in with_query).most_common()),
            "functions": dict(Counter(str(c.get("function")) for c in with_query).most_common()),
            "hops": dict(sorted(Counter(c.get("hops") for c in with_query if c.get("hops") is not None).items())),
            "cardinality": dict(Counter(str(a.get("answer_cardinality")) for a in ac).most_common()),
            "problems": [str(p) for p in ds.problems[:20]], "n_problems": len(ds.problems),
        })
        return info


def page_in_worker(url: str, eid: str, only: frozenset[str] | None) -> dict[str, Any]:
    """:meth:`Views.page`'s data of experiment ``eid`` of store ``url``, in a worker process."""
    store = open_store(url)
    e = store.get(eid)
    if e is None:
        raise KeyError(f"no experiment {eid}")
    return Views(store)._page_data(e, only)


def _answer_values(results: Any) -> list[str] | None:
    if results is None:
        return None
    if "boolean" in results:
        return [str(results["boolean"]).lower()]
    return [", ".join(str(b.get("value")) for b in row.values())
            for row in results.get("results", {}).get("bindings", [])]


def _report_sections(evals: list[Any], *, start: str, comparison: Any = None) -> str:
    """The sections of :func:`kgqa.report.html.html_report` from the one with anchor ``start``
    to the end of the body (scores, comparison, outcomes, distribution, breakdowns, taxonomy):
    the same tables and figures as ``kgqa report --format html``. The report escapes every
    value itself."""

    page = html_report(evals, per_question=False, comparison=comparison, resamples=RESAMPLES)
    start = page.index(f'<h2 id="{start}">')
    end = page.rindex("</body>")
    return page[start:end]
