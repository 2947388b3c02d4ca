"""The experiment store (issue 14): schema versions, immutability, leaderboards, files,
the runner adapter, ``kgqa evaluate --store`` / ``kgqa experiments``, PostgreSQL."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from conftest import no_data

from kgqa.cli import main
from kgqa.load import registry
from kgqa.store import ImmutableError, Store
from kgqa.store import runner, schema
from kgqa.store.record import record_evaluations
from waiting import wait_until

DEMO = registry.PACKAGE_DIR / "demo" / "data"
KGS = {"demo": str(DEMO / "kg.ttl")}


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    s = Store(tmp_path / "exp.sqlite")
    yield s
    s.close()


def cli(*args: str) -> None:
    try:
        main(list(args))
    except SystemExit as e:
        if e.code:
            raise


def _demo_experiment(store: Store, name: str = "strong", **kw) -> str:
    data = (DEMO / "runs" / f"{name}.json").read_bytes()
    sha = store.put_file(data)
    args = dict(dataset="demo", run_name=name, profile="kgqa", run_file=sha, run_filename=f"{name}.json", kg="demo",
                options={"reexecute": True})
    args.update(kw)
    return store.create(**args)


def test_new_store_is_stamped_and_reopening_keeps_version(tmp_path):
    path = tmp_path / "s.sqlite"
    s = Store(path)
    assert s.schema_found == 0
    s.close()
    s = Store(path)
    assert s.schema_found == schema.VERSION
    with s.engine.connect() as c:
        assert c.execute(text("SELECT version FROM kgqa_schema")).scalar() == schema.VERSION
    s.close()


def test_store_of_a_newer_kgqa_is_refused_with_the_reason(tmp_path):
    path = tmp_path / "s.sqlite"
    Store(path).close()
    eng = create_engine(f"sqlite:///{path}")
    with eng.begin() as c:
        c.execute(text("UPDATE kgqa_schema SET version = 99"))
    eng.dispose()
    with pytest.raises(schema.SchemaError, match="schema version 99"):
        Store(path)


def test_migrations_run_in_order_on_an_old_store(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    Store(path).close()
    calls = []

    now = schema.VERSION

    def next_version(conn):
        calls.append(now)
        conn.execute(text("ALTER TABLE experiments ADD COLUMN note TEXT"))

    monkeypatch.setattr(schema, "VERSION", now + 1)
    monkeypatch.setitem(schema.MIGRATIONS, now, next_version)
    s = Store(path)
    assert calls == [now] and s.schema_found == now
    with s.engine.connect() as c:
        assert c.execute(text("SELECT version FROM kgqa_schema")).scalar() == now + 1
        cols = [r[1] for r in c.execute(text("PRAGMA table_info(experiments)"))]
    assert "note" in cols
    s.close()


def test_a_version_2_store_gets_listing_indices_that_end_with_the_id(tmp_path):
    path = tmp_path / "v2.sqlite"
    st = Store(path)
    eids = [st.create(dataset="demo", run_name=f"r{i}", profile="kgqa", system_url="http://x") for i in range(3)]
    st.close()
    eng = create_engine(f"sqlite:///{path}")
    with eng.begin() as c:  # what kgqa with schema version 2 wrote: the listing indices without the id
        for ix in schema._LISTING:
            if ix.endswith("_id"):
                c.execute(text(f"DROP INDEX {ix}"))
        for name, cols in (("ix_experiments_status_created", "status, created"), ("ix_experiments_headline",
                           "headline_value, created"), ("ix_experiments_run", "run_name, created"),
                           ("ix_experiments_rank", "dataset, profile, status, headline_value, created")):
            c.execute(text(f"CREATE INDEX {name} ON experiments ({cols})"))
        c.execute(text("UPDATE kgqa_schema SET version = 2"))
    eng.dispose()
    s = Store(path)
    assert s.schema_found == 2
    with s.engine.connect() as c:
        names = {r[0] for r in c.execute(text("SELECT name FROM sqlite_master WHERE type = 'index'"))}
        assert c.execute(text("SELECT version FROM kgqa_schema")).scalar() == schema.VERSION == 6
        plan = " ".join(r[3] for r in c.execute(text(
            "EXPLAIN QUERY PLAN SELECT id FROM experiments ORDER BY headline_value DESC, created DESC, id LIMIT 1 OFFSET 1")))
    assert set(schema._LISTING) <= names and not set(schema._SUPERSEDED) & names
    assert "COVERING INDEX ix_experiments_headline_id" in plan
    assert {e.id for e in s.list()} == set(eids)
    s.close()


def test_a_version_1_store_opens_moves_its_results_and_gets_the_listing_indices(tmp_path):
    path = tmp_path / "v1.sqlite"
    st = Store(path)
    eid = _demo_experiment(st)
    assert runner.run_experiment(st, eid, kgs={"demo": str(DEMO / "kg.ttl")})
    before = st.get(eid).evaluation_json()
    assert before and len(before["questions"]) == 30
    pending = st.create(dataset="demo", run_name="p", profile="kgqa", system_url="http://x")
    st.close()
    eng = create_engine(f"sqlite:///{path}")
    with eng.begin() as c:  # what kgqa with schema version 1 wrote: results in the row, no listing indices
        c.execute(text("UPDATE experiments SET evaluation = (SELECT evaluation FROM results WHERE results.id = experiments.id)"))
        c.execute(text("DROP TABLE results"))
        for ix in schema._LISTING:
            c.execute(text(f"DROP INDEX {ix}"))
        c.execute(text("UPDATE kgqa_schema SET version = 1"))
    eng.dispose()
    s = Store(path)
    assert s.schema_found == 1
    assert s.get(eid).evaluation_json() == before and s.get(pending).evaluation_json() is None
    assert s.list(status="finished")[0].evaluation_json() == before  # loaded when asked for
    with s.engine.connect() as c:
        names = {r[0] for r in c.execute(text("SELECT name FROM sqlite_master WHERE type = 'index'"))}
        assert c.execute(text("SELECT version FROM kgqa_schema")).scalar() == schema.VERSION == 6
        assert c.execute(text("SELECT count(*) FROM experiments WHERE evaluation IS NOT NULL")).scalar() == 0
    assert set(schema._LISTING) <= names
    assert s.delete(eid) and s.get(eid) is None
    s.close()


def test_listing_pages_sort_and_count_without_loading_results(tmp_path):
    s = Store(tmp_path / "s.sqlite")
    ids = [s.create(dataset="demo" if i % 2 else "ck25", run_name=f"run{i}", profile="kgqa", system_url="http://x")
           for i in range(7)]
    assert s.count() == 7 and s.count(dataset="demo") == 3
    assert [e.run_name for e in s.list(sort="run", descending=False, limit=3, offset=2)] == ["run2", "run3", "run4"]
    page = s.list(limit=2)
    assert len(page) == 2 and all(e._evaluation is None for e in page)
    assert {e.id for e in s.list(limit=10)} == set(ids)
    with pytest.raises(ValueError, match="cannot sort"):
        s.list(sort="evaluation")
    s.close()


def test_experiment_runs_finishes_and_is_immutable(store, monkeypatch):
    eid = _demo_experiment(store)
    seen = []
    real = store.progress
    monkeypatch.setattr(store, "progress", lambda i, d, t, n="": (seen.append((d, t, n)), real(i, d, t, n)))
    e = store.get(eid)
    assert e.status == "pending" and e.run_filename == "strong.json"
    assert runner.run_experiment(store, eid, kgs=KGS) is True
    e = store.get(eid)
    assert e.status == "finished", e.error
    assert e.headline == "F1" and e.n_questions == 30
    ev = e.evaluation()
    assert ev.aggregate["F1"] == pytest.approx(e.headline_value)
    assert sum(e.outcomes.values()) == 30
    assert "engine:oxigraph" in e.signature and e.kg_fingerprint.startswith("sha256:")
    assert e.dataset_checksum.startswith("sha256:")
    assert e.progress_done == e.progress_total == 100
    notes = [n for _, _, n in seen]
    assert notes[0] == "loading the dataset" and notes[-1] == "done"
    assert any(n.startswith("executing queries: ") and n.endswith(" of 30") for n in notes), notes
    assert [d for d, _, _ in seen] == sorted(d for d, _, _ in seen)
    with pytest.raises(ImmutableError):
        store.finish(eid, ev, headline="F1")
    with pytest.raises(ImmutableError):
        store.fail(eid, "no")
    assert runner.run_experiment(store, eid, kgs=KGS) is False  # nothing re-runs a finished experiment
    assert store.get(eid).headline_value == e.headline_value


def test_same_numbers_as_the_cli(store, capsys):
    eid = _demo_experiment(store, "medium")
    runner.run_experiment(store, eid, kgs=KGS)
    cli("evaluate", "demo", str(DEMO / "runs" / "medium.json"), "--kg", KGS["demo"], "--reexecute", "-f", "json")
    (doc,) = json.loads(capsys.readouterr().out)["runs"]
    assert store.get(eid).aggregate == pytest.approx(doc["aggregate"])


def test_failures_are_recorded_with_a_message_naming_the_file(store):
    sha = store.put_file(b'{"questions": [ {"id": 1, ')
    eid = store.create(dataset="demo", run_name="bad", profile="kgqa", run_file=sha, run_filename="bad.json")
    assert runner.run_experiment(store, eid) is False
    e = store.get(eid)
    assert e.status == "failed" and e.error.startswith("bad.json") and "malformed JSON" in e.error
    # wrong dataset: said out loud, not scored as zero
    sha = store.put_file((DEMO / "runs" / "weak.json").read_bytes())
    eid = store.create(dataset="ck25", run_name="weak", profile="text2sparql", run_file=sha, run_filename="weak.json")
    if registry.where(registry.find("ck25")) == "not downloaded":
        no_data("ck25 not available: set KGQA_DATA_DIR")
    runner.run_experiment(store, eid)
    e = store.get(eid)
    assert e.status == "failed" and "none of the run's" in e.error and "wrong dataset" in e.error
    # a KG the server does not offer
    eid = _demo_experiment(store, kg="nope")
    runner.run_experiment(store, eid, kgs=KGS)
    assert "no knowledge graph named 'nope'" in store.get(eid).error


def test_live_system_with_an_unknown_protocol_fails_clearly(store):
    eid = store.create(dataset="demo", run_name="live", profile="kgqa", system_url="http://127.0.0.1:9/qa",
                       system_protocol="gerbil-qa")
    runner.run_experiment(store, eid)
    e = store.get(eid)
    assert e.status == "failed" and "unknown protocol 'gerbil-qa'" in e.error and e.system_url == "http://127.0.0.1:9/qa"
    # asking a live system works (tests/execute/live/test_system_live.py); an unreachable one gives http_error
    # outcomes, never empty answers: checked there, with short timeouts


def test_leaderboard_order_boards_files_and_delete(store):
    ids = {}
    for name in ("weak", "strong", "medium"):
        ids[name] = _demo_experiment(store, name)
        runner.run_experiment(store, ids[name], kgs=KGS)
    board = store.leaderboard("demo", "kgqa")
    assert [e.run_name for e in board] == ["strong", "medium", "weak"]
    assert [e.headline_value for e in board] == sorted((e.headline_value for e in board), reverse=True)
    assert store.boards() == [("demo", "kgqa", 3)]
    sha = store.get(ids["weak"]).run_file
    assert store.get_file(sha) == (DEMO / "runs" / "weak.json").read_bytes()
    # the same file twice is stored once; deleting one user keeps it, deleting the last drops it
    again = _demo_experiment(store, "weak")
    assert store.get(again).run_file == sha
    assert store.delete(ids["weak"])
    assert store.get_file(sha)
    assert store.delete(again)
    with pytest.raises(KeyError):
        store.get_file(sha)
    assert not store.delete("0000000000")
    assert [e.run_name for e in store.list(status="finished")] == sorted(
        [e.run_name for e in store.list(status="finished")], key=lambda n: [e.run_name for e in store.list()].index(n))


def test_record_evaluations_and_experiments_cli(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "cli.sqlite"
    runs = [str(DEMO / "runs" / "strong.json"), str(DEMO / "runs" / "weak.json")]
    cli("evaluate", "demo", *runs, "--kg", KGS["demo"], "--reexecute", "-f", "json", "--store", str(path))
    doc = json.loads(capsys.readouterr().out)
    cli("experiments", "list", "--store", str(path), "-f", "json")
    rows = json.loads(capsys.readouterr().out)
    assert sorted(r["run"] for r in rows) == ["strong", "weak"]
    by_run = {r["run"]: r for r in rows}
    for ev in doc["runs"]:
        assert by_run[ev["run"]]["aggregate"] == pytest.approx(ev["aggregate"])
        assert by_run[ev["run"]]["signature"] == ev["signature"]
        assert by_run[ev["run"]]["kg_fingerprint"].startswith("oxigraph-")
    eid = by_run["strong"]["id"]
    cli("experiments", "show", eid, "--store", str(path), "-f", "json")
    assert json.loads(capsys.readouterr().out)["headline_value"] == pytest.approx(doc["runs"][0]["aggregate"]["F1"])
    out = tmp_path / "x.csv"
    cli("experiments", "export", eid, "--store", str(path), "-f", "csv", "-o", str(out))
    lines = out.read_text().splitlines()
    assert lines[0].startswith("run,id,outcome") and len(lines) == 31
    cli("experiments", "export", eid, "--store", str(path), "-f", "latex")
    assert "\\begin{tabular}" in capsys.readouterr().out
    with pytest.raises(SystemExit) as ex:
        main(["experiments", "delete", eid, "nope", "--store", str(path)])
    assert ex.value.code == 2
    assert "nothing deleted" in capsys.readouterr().err
    cli("experiments", "delete", eid, "--store", str(path))
    capsys.readouterr()
    cli("experiments", "list", "--store", str(path), "-f", "json")
    assert [r["run"] for r in json.loads(capsys.readouterr().out)] == ["weak"]


# --------------------------------------------------------------------------- PostgreSQL


def _pg_bin() -> Path | None:
    for v in ("17", "16", "15", "14", "13"):
        p = Path(f"/usr/lib/postgresql/{v}/bin")
        if (p / "initdb").exists():
            return p
    return None


@pytest.fixture(scope="module")
def postgres():
    """A private PostgreSQL cluster on a free loopback port (Debian's postgresql), as the
    ``postgres`` user when the tests run as root."""
    from webserver import free_port

    pg = _pg_bin()
    if pg is None:
        pytest.skip("PostgreSQL not installed (apt-get install postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg not installed (pip install 'psycopg[binary]')")
    # a folder of its own directly under the temp dir: pytest keeps its own temp tree private
    # (mode 700), which the postgres user could not enter
    d = Path(tempfile.mkdtemp(prefix="kgqa-pg-"))
    data = d / "data"
    run_as: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: cannot start PostgreSQL")
        run_as = ["runuser", "-u", "postgres", "--"]
        shutil.chown(d, "postgres")
        os.chmod(d, 0o700)
    port = free_port()
    r = subprocess.run([*run_as, str(pg / "initdb"), "-D", str(data), "-U", "kgqa", "--auth=trust", "-E", "UTF8"],
                       capture_output=True, text=True)
    if r.returncode:
        shutil.rmtree(d, ignore_errors=True)
        pytest.skip(f"initdb failed: {r.stderr.strip()[:300]}")
    proc = subprocess.Popen([*run_as, str(pg / "postgres"), "-D", str(data), "-p", str(port), "-k", str(d),
                             "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"postgresql+psycopg://kgqa@127.0.0.1:{port}/postgres"
    eng = create_engine(url)

    def accepting() -> bool:
        try:
            with eng.connect():
                return True
        except Exception:  # noqa: BLE001 - not up yet
            return False

    try:
        wait_until(accepting, timeout=60, every=0.1, what="PostgreSQL accepting connections", proc=proc)
    except AssertionError:
        proc.kill()
        pytest.skip("PostgreSQL did not start")
    eng.dispose()
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.slow  # a PostgreSQL cluster starts: the slow part (.ci/run)
def test_postgresql_through_the_same_code(postgres, tmp_path, monkeypatch):
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    s = Store(postgres)
    assert s.schema_found == 0
    eid = _demo_experiment(s, "medium")
    assert runner.run_experiment(s, eid, kgs=KGS)
    e = s.get(eid)
    assert e.status == "finished" and e.n_questions == 30
    with pytest.raises(ImmutableError):
        s.fail(eid, "x")
    assert s.get_file(e.run_file) == (DEMO / "runs" / "medium.json").read_bytes()
    assert s.leaderboard("demo", "kgqa")[0].id == eid
    s.close()
    s = Store(postgres)
    assert s.schema_found == schema.VERSION and s.get(eid).aggregate == e.aggregate
    assert s.delete(eid)
    s.close()




def test_a_server_reads_registry_names_never_its_own_files(tmp_path, monkeypatch):
    """A request names a registry dataset: a file of that name in the server's working directory
    does not shadow it (kgqa.api.load_dataset(prefer_registry=True)); the CLI's rule (a file
    wins) is unchanged."""
    from kgqa import api

    monkeypatch.chdir(tmp_path)
    doc = json.loads((DEMO / "questions.json").read_text(encoding="utf-8"))
    doc["questions"] = doc["questions"][:2]
    (tmp_path / "demo").write_text(json.dumps(doc), encoding="utf-8")
    assert len(runner.load_dataset("demo")) == 30 and len(api.load_dataset("demo", prefer_registry=True)) == 30
    assert len(api.load_dataset("demo")) == 2
    registered, uploaded = api.dataset_checksum("demo"), api.dataset_checksum(tmp_path / "demo")
    assert registered.startswith("sha256:") and uploaded.startswith("sha256:") and registered != uploaded


def test_kg_endpoint_credentials_are_used_but_never_stored_shown_or_exported(store, tmp_path):
    """A SPARQL endpoint named as the KG with a token in its URL: the store keeps the URL with
    the token as ``***``; the run started with the URL as given queries the endpoint with it;
    a run without it fails saying why; no stored field, signature or export carries it."""
    import pyoxigraph as ox

    from faultserver import FaultServer, oxigraph_handler
    from kgqa.store.export import export

    kg = ox.Store()
    kg.load(path=str(DEMO / "kg.ttl"), format=ox.RdfFormat.TURTLE)
    run = store.put_file((DEMO / "runs" / "strong.json").read_bytes())
    with FaultServer(oxigraph_handler(kg)) as server:
        url = server.url() + "?access_token=TOKEN4242XY"
        shown = server.url() + "?access_token=***"
        eid = store.create(dataset="demo", run_name="s", run_file=run, run_filename="strong.json", profile="kgqa",
                           kg=url, options={"reexecute": True})
        again = store.create(dataset="demo", run_name="s", run_file=run, run_filename="strong.json",
                             profile="kgqa", kg=url, options={"reexecute": True})
        e = store.get(eid)
        assert e.kg == shown and e.kg_credentials_withheld and "not kept in the store" in e.withheld_message()
        assert not runner.run_experiment(store, again, kgs=KGS)
        failed = store.get(again)
        assert failed.status == "failed" and "are not kept in the store" in failed.error and shown in failed.error
        assert runner.run_experiment(store, eid, kgs=KGS, kg_url=url)
        asked = list(server.requests)
    assert asked and all(r.params.get("access_token") == ["TOKEN4242XY"] for r in asked)
    e = store.get(eid)
    assert e.status == "finished" and e.n_questions == 30 and "sparql-endpoint" in e.signature
    texts = [json.dumps(e.summary()), e.signature, export(e, "json"), export(e, "csv")]
    texts += [p.read_bytes().decode("latin-1") for p in tmp_path.glob("exp.sqlite*")]
    assert not any("TOKEN4242XY" in t for t in texts)
    assert "access_token=***" in e.signature


def test_system_url_credentials_are_used_but_never_stored_shown_or_exported(store, tmp_path, capsys):
    """A live system's URL with credentials (userinfo, a credential-like query value): the
    store keeps and shows it with them as ``***``; the run started with the URL as given asks
    the system with them; a run without it (resumed, re-run) fails saying why; no stored field,
    export or command output carries them."""
    from kgqa import api
    from kgqa.store.export import export
    from systemprocs import faulty, requests_log

    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"question": it.question("en"), "query": it.sparql}
                                   for it in api.load_dataset("demo").items]), encoding="utf-8")
    secrets = ("hunter2pw", "SECRETKEY123")
    plain = store.get(store.create(dataset="demo", run_name="p", profile="kgqa", system_url="HTTP://Example.ORG/qa"))
    assert plain.system_url == "http://example.org/qa" and not plain.credentials_withheld  # normalised, nothing hidden
    with faulty(answers) as srv:
        url = f"http://alice:hunter2pw@127.0.0.1:{srv.port}/?api_key=SECRETKEY123&lang=en"
        shown = f"http://***@127.0.0.1:{srv.port}/?api_key=***&lang=en"
        eid = store.create(dataset="demo", run_name="live", profile="kgqa", system_url=url, system_protocol="gerbil",
                           kg="demo")
        e = store.get(eid)
        assert e.system_url == shown and e.credentials_withheld
        # without the URL as given (a resumed or re-run experiment) the credentials are missing: said so
        again = store.create(dataset="demo", run_name="live", profile="kgqa", system_url=url,
                             system_protocol="gerbil", kg="demo")
        assert not runner.run_experiment(store, again, kgs=KGS)
        failed = store.get(again)
        assert failed.status == "failed" and "are not kept in the store" in failed.error and shown in failed.error
        assert runner.run_experiment(store, eid, kgs=KGS, system_url=url)
        log = requests_log(srv)
    assert log and all("api_key=SECRETKEY123" in r["path"] for r in log)  # the system got its credentials
    assert all(r["headers"].get("Authorization", r["headers"].get("authorization")) == "Basic YWxpY2U6aHVudGVyMnB3"
               for r in log)
    e = store.get(eid)
    assert e.status == "finished" and e.n_questions and e.system_url == shown
    cli("experiments", "show", eid, "--store", str(tmp_path / "exp.sqlite"), "-f", "json")
    texts = [json.dumps(e.summary()), e.progress_note or "", export(e, "json"), export(e, "csv"),
             capsys.readouterr().out]
    for path in tmp_path.glob("exp.sqlite*"):  # the database file and its write-ahead log
        texts.append(path.read_bytes().decode("latin-1"))
    for text_ in texts:
        assert not any(s in text_ for s in secrets)
    assert shown in texts[0] and shown in texts[2]
