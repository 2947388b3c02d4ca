"""A hosted challenge end to end in a real Chromium (issue 39, Done-when 1): CK25 with hidden
gold (question 1 published), one organiser and three participants on a real ``kgqa web``. Each
participant logs in, submits its team's run (the three real CK25 systems' runs), sees its own
experiment and the public leaderboard and none of the others'; the organiser sees every
experiment, freezes the leaderboard and reads the audit log. Then every route is crawled as a
logged-in participant and searched for every hidden gold answer and gold query. Screenshots go
to the test's temp dir (``screenshots/``)."""

from __future__ import annotations

import json

import httpx
import pytest

from kgqa.store import Store
from kgqa.store.accounts import Accounts
from kgqa.web.views import Views
from test_web_browser import OFFICIAL_ORDER, Pages
from webcrawl import experiment_routes, gold_values, leaks, login, published_in, site_routes
from webserver import WebServer, chromium

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("web-browser")]  # Chromium: the slow part (.ci/run)

TEAMS = {"team-infai": "INFAI", "team-wse": "WSE", "team-aifb": "AIFB"}
PASSWORDS = {"org": "the organiser's secret", **{t: f"{t}'s secret!" for t in TEAMS}}
PUBLISHED = {"ck25:1-en"}  # the question ids of a text2sparql evaluation


@pytest.fixture(scope="module")
def drv():
    d = chromium()
    if d is None:
        pytest.skip("Chromium, chromium-driver or selenium is not installed (.ci/chromium.sh installs them)")
    yield d
    d.quit()


def _log_in(p: Pages, name: str) -> None:
    p.drv.delete_all_cookies()
    p.go("/")  # the login wall: to the login page, then back
    p.wait_for("#login-form")
    assert p.drv.current_url.endswith("/login?next=%2F")
    p.find("#name").send_keys(name)
    p.find("#password").send_keys(PASSWORDS[name])
    p.find("#login").click()
    assert p.wait_for("#whoami").text.startswith(name)


def _submit(p: Pages, runs, team: str) -> str:
    system = TEAMS[team]
    if system == "WSE":  # WSE's result set is its own; INFAI's and AIFB's are copies of the gold: their queries run
        return p.new_experiment(dataset="ck25", run=runs / system / "ck25_system_result_set.json",
                                profile="text2sparql", run_name=system)
    return p.new_experiment(dataset="ck25", run=runs / system / "ck25_answers.json", profile="text2sparql", kg="ck25",
                            run_name=system)


def test_a_ck25_challenge_with_hidden_gold_end_to_end(drv, tmp_path, shared_data):
    runs = shared_data / "ck25-runs"
    store = tmp_path / "challenge.sqlite"
    with Store(store) as st:
        acc = Accounts(st)
        acc.add("org", "organiser", PASSWORDS["org"])
        for team in TEAMS:
            acc.add(team, "participant", PASSWORDS[team])
    with WebServer(store, tmp_path, "--hidden-gold", "ck25=" + ",".join(PUBLISHED), "--quota-per-day", "2") as srv:
        p = Pages(drv, srv.base, tmp_path / "screenshots")
        p.go("/")
        p.screenshot("login")
        ids: dict[str, str] = {}
        for team in TEAMS:
            _log_in(p, team)
            ids[team] = _submit(p, runs, team)
            assert "hidden on this server" in drv.page_source and p.find('td[data-measure="set_F"]').text
            p.screenshot(f"experiment-{team}")
            p.go("/")
            shown = {a.text.strip() for a in p.finds('a[href^="/e/"] code')} | {
                a.get_attribute("href").rsplit("/", 1)[1] for a in p.finds('a[href^="/e/"]')}
            assert ids[team] in shown and not (set(ids.values()) - {ids[team]}) & shown
        p.screenshot("home-participant")
        # a participant: the others' experiments are absent for it; the public leaderboard ranks all three
        for team, eid in ids.items():
            if team != "team-aifb":
                p.go(f"/e/{eid}")
                assert p.find("h1").text == "404" and "no experiment" in p.find("#error").text
        p.go("/leaderboard/ck25/text2sparql")
        assert [tr.get_attribute("data-system") for tr in p.finds("#leaderboard tbody tr")] == OFFICIAL_ORDER
        assert not p.finds("#freeze-form")
        p.screenshot("leaderboard-participant")
        drv.set_window_size(900, 1000)  # the whole table in its box at 900 px, the created column included
        assert drv.execute_script("var b = document.querySelector('#leaderboard').parentElement;"
                                  "return b.scrollWidth - b.clientWidth") <= 1
        drv.set_window_size(1400, 1000)
        # the organiser: every experiment, the freeze, the audit log
        _log_in(p, "org")
        p.go("/")
        assert all(eid in drv.page_source for eid in ids.values())
        p.screenshot("home-organiser")
        p.go("/leaderboard/ck25/text2sparql")
        p.find("#freeze").click()
        assert "Frozen at" in p.wait_for("#frozen").text
        p.screenshot("leaderboard-frozen")
        # a submission after the freeze is not ranked on the frozen board
        _log_in(p, "team-wse")
        late = _submit(p, runs, "team-wse")
        p.go("/leaderboard/ck25/text2sparql")
        assert p.finds("#frozen") and late not in drv.page_source and ids["team-wse"] in drv.page_source
        # the quota: two a day
        p.go("/new")
        assert "team-wse has used its 2 submissions of today (UTC)" in p.find("#error").text
        p.screenshot("quota")
        _log_in(p, "org")
        p.go("/audit")
        actions = [tr.get_attribute("data-action") for tr in p.finds("#audit-log tbody tr")]
        assert actions.count("submit") == 4 and actions.count("login") == 6 and actions.count("freeze") == 1
        p.screenshot("audit")
        # the crawl: every route as a logged-in participant, searched for every hidden gold value
        hidden, qids = gold_values(store, ids["team-wse"], PUBLISHED)
        with Store(store) as st:
            published_questions = [Views(st).question(st.get(ids["team-wse"]), q) for q in PUBLISHED]
        assert len(hidden) > 50 and set(qids) > PUBLISHED
        with httpx.Client(base_url=srv.base, timeout=60) as c:
            login(c, "team-wse", PASSWORDS["team-wse"])
            routes = site_routes("ck25", "text2sparql", [ids["team-wse"], ids["team-infai"]])
            for eid in [*ids.values(), late]:
                routes += experiment_routes(eid, qids)
            pages = {url: c.get(url) for url in routes}
            official = json.loads((shared_data / "ck25" / "official-gold" / "ck25_true_result_set.json").read_text())
    assert leaks(pages, hidden) == []
    # the official gold bags too (keyed by question id; every value of 5 characters or more, but the published
    # questions' values)
    bags = {key: bag or {} for key, bag in official.items()}
    shown = {v for qid in PUBLISHED for v in bags.get(qid, {})} | {q["gold_sparql"] for q in published_questions}
    values = {v for qid, bag in bags.items() if qid not in PUBLISHED for v in bag if len(v) >= 5 and v != "false"
              and not published_in(v, shown)}
    assert len(values) > 50 and leaks(pages, values) == []
    own = pages[f"/e/{ids['team-wse']}"]
    assert own.status_code == 200 and "hidden on this server" in own.text
    assert pages[f"/e/{ids['team-wse']}/q/ck25:1-en"].status_code == 200  # the published question
    assert pages[f"/e/{ids['team-wse']}/q/ck25:2-en"].status_code == 403
    assert all(pages[f"/e/{ids[t]}"].status_code == 404 for t in ("team-infai", "team-aifb"))
