"""The library parts of issue 23's web fixes, without a server: the Host allow-list, the
report's hash CSP, compression-bomb measuring (property-tested), which URLs the server may
ask, web wording, registry KG names, suggestions and the taxonomy's zero-score rule."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import re
from base64 import b64encode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgqa.model import InputError
from kgqa.web.security import HostPolicy, inline_csp, split_host
from kgqa.web.uploads import check_compressed, check_url, inflated_size, web_wording


def test_host_policy():
    p = HostPolicy("127.0.0.1", ["proxy.example.org:443"])
    for ok in ("127.0.0.1:8800", "localhost", "LOCALHOST:1", "[::1]:8800", "proxy.example.org", "localhost.:80"):
        assert p.allows(ok), ok
    for bad in ("evil.example:8800", "", None, "10.0.0.1", "127.0.0.1.nip.io", "a@127.0.0.1", "127.0.0.1/x",
                "[::1", "proxy.example.org.evil"):
        assert not p.allows(bad), bad
    wild = HostPolicy("0.0.0.0")
    assert wild.allows("192.168.1.5:8800") and wild.allows("[fe80::1]:1") and not wild.allows("evil.example")
    assert HostPolicy("::1").allows("[::1]:9") and not HostPolicy("::1").allows("192.168.1.5")
    assert split_host("[::1]:8800") == ("::1", 8800)
    with pytest.raises(InputError, match="--allowed-host"):
        HostPolicy("127.0.0.1", ["a/b"])


def _h(text: str) -> str:
    return "'sha256-" + b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_inline_csp_allows_exactly_the_documents_own_inline_code():
    doc = ('<html><head><style>b{color:red}</style><script>function f(x){}</script>'
           '<script src="/x.js"></script></head><body><input oninput="f(this)">'
           '<p style="color: blue">x</p><select onchange=\'f(1)\'></select>'
           '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p></body></html>')
    csp = inline_csp(doc)
    script_src = re.search(r"script-src ([^;]*)", csp).group(1).split()
    style_src = re.search(r"style-src ([^;]*)", csp).group(1).split()
    assert sorted(script_src) == sorted([_h("function f(x){}"), "'unsafe-hashes'", _h("f(this)"), _h("f(1)")])
    assert sorted(style_src) == sorted([_h("b{color:red}"), "'unsafe-hashes'", _h("color: blue")])
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert inline_csp("<p>plain</p>").count("'none'") >= 4  # nothing inline: nothing allowed


@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=5000), cap=st.integers(min_value=0, max_value=6000),
       kind=st.sampled_from(["gzip", "bzip2", "xz"]))
def test_inflated_size_counts_up_to_the_cap(data, cap, kind):
    packed = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}[kind](data)
    assert inflated_size(packed, cap) == (len(data) if len(data) <= cap else cap + 1)


def test_check_compressed():
    bomb = gzip.compress(b"\0" * (8 << 20))
    with pytest.raises(InputError, match="inflates to more than 1 MB .*decompression bomb"):
        check_compressed("kg.nt.gz", bomb, "RDF file", 1)
    check_compressed("kg.nt.gz", gzip.compress(b"<a> <b> <c> .\n"), "RDF file", 1)
    with pytest.raises(InputError, match="rename it"):
        check_compressed("kg.nt", gzip.compress(b"<a> <b> <c> .\n"), "RDF file", 1)
    with pytest.raises(InputError, match="upload the uncompressed file"):
        check_compressed("run.json.gz", gzip.compress(b"{}"), "run", 1)
    with pytest.raises(InputError, match="not valid gzip"):
        check_compressed("kg.nt.gz", b"\x1f\x8b\x08garbage", "RDF file", 1)
    check_compressed("run.json", b"{}", "run", 1)


def test_check_url_refuses_private_ranges_unless_listed():
    def resolver(addrs):
        return lambda host, port, type=0: [(2, 1, 6, "", (a, port)) for a in addrs]

    refused = {"http://127.0.0.1:9/": "loopback", "http://10.0.0.8/": "private", "http://192.168.0.1/": "private",
               "http://169.254.169.254/latest": "link-local", "http://[::1]/": "loopback", "http://0.0.0.0/": "unspecified",
               "http://[::ffff:127.0.0.1]/": "loopback", "http://224.0.0.1/": "multicast"}
    for url, word in refused.items():
        with pytest.raises(InputError, match=word):
            check_url(url, "system URL", set())
    assert check_url("https://93.184.215.14/qa", "system URL", set()) == "https://93.184.215.14/qa"
    # a name is judged by every address it resolves to
    with pytest.raises(InputError, match="rebind.example \\(127.0.0.1\\) is a loopback"):
        check_url("http://rebind.example/", "system URL", set(), resolve=resolver(["93.184.215.14", "127.0.0.1"]))
    assert check_url("http://qa.example/", "x", set(), resolve=resolver(["93.184.215.14"])) == "http://qa.example/"
    assert check_url("http://127.0.0.1:9/qa", "x", {"127.0.0.1"}) == "http://127.0.0.1:9/qa"
    for bad in ("ftp://x/", "http:///nohost", "javascript:alert(1)", "http://u:p@93.184.215.14/"):
        with pytest.raises(InputError):
            check_url(bad, "system URL", set())


def test_web_wording_names_form_fields():
    msg = ("run.txt: cannot tell which run format this is; pass --run-format (one of: jsonl); and "
           "pass --dataset-format (--format in kgqa datasets / split / levels) (one of: csv); parses (use --kg)")
    out = web_wording(msg)
    assert "--" not in out and "“Run format” field" in out and "“Dataset format” field" in out and "choose a KG" in out
    assert web_wording(None) is None


def test_registry_kg_names(tmp_path, monkeypatch):
    from kgqa.load import registry

    assert registry.resolve_kg("demo") == str(registry.PACKAGE_DIR / "demo" / "data" / "kg.ttl")
    assert registry.resolve_kg("http://127.0.0.1:9/sparql") == "http://127.0.0.1:9/sparql"
    own = tmp_path / "ck25"
    own.write_text("")
    monkeypatch.chdir(tmp_path)
    assert registry.resolve_kg("ck25") == "ck25"  # an existing file of that name wins
    monkeypatch.chdir(registry.PACKAGE_DIR)
    monkeypatch.setenv("KGQA_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    assert "ck25" not in registry.available_kgs() and "demo" in registry.available_kgs()
    with pytest.raises(InputError, match="ck25 knowledge graph is not on this machine"):
        registry.resolve_kg("ck25")
    kg = tmp_path / "data" / "ck25" / "graphs" / "prod-inst.ttl"
    kg.parent.mkdir(parents=True)
    kg.write_text("<a> <b> <c> .\n")
    monkeypatch.setenv("KGQA_DATA_DIR", str(tmp_path / "data"))
    # a stand-in file: the real one's checksum would refuse it
    monkeypatch.setitem(registry.KGS, "ck25", registry.DataFile(registry.KGS["ck25"].path))
    assert registry.resolve_kg("CK25") == str(kg) == registry.available_kgs()["ck25"]
    assert registry.resolve_kg("my-graph.ttl") == "my-graph.ttl"  # not a registered name: as given


def test_suggestions_need_whole_name_similarity():
    from kgqa.model.suggest import close_matches

    names = ["R", "P", "F1", "F1_Sem", "AnswerEM", "Accuracy", "Hits", "NDCG"]
    assert close_matches("XYZLONGNAMEOFAMEASURE", names) == []
    assert close_matches("Nope", names) == []
    assert close_matches("Acuracy", names) == ["Accuracy"]
    assert close_matches("AnswerExactMatch", names) == ["AnswerEM"]
    assert close_matches("Hit", names) == ["Hits"]


def test_a_question_scored_zero_is_never_correct():
    from kgqa.analyze.taxonomy import classify
    from kgqa.score.evaluate import QuestionScore
    from kgqa.score.rules import Counts

    empty = Counts(tp=0, fp=0, fn=0, sys_size=0, gold_size=0, sys_hits=0, gold_hits=0)
    zero = QuestionScore("q1", "empty", {"set_P": 0.0, "set_recall": 0.0, "set_F": 0.0}, counts=empty)
    label = classify(zero)
    assert label.label == "empty_answer" and "scores an empty answer 0" in label.reason
    one = QuestionScore("q2", "empty", {"F1": 1.0}, counts=empty)  # the kgqa profile: empty = empty scores 1
    assert classify(one).label == "correct"
    hit = Counts(tp=2, fp=0, fn=0, sys_size=2, gold_size=2, sys_hits=2, gold_hits=2)
    assert classify(QuestionScore("q3", "ok", {"set_F": 1.0}, counts=hit)).label == "correct"


def test_a_public_binding_without_a_token_is_refused_with_the_fix(tmp_path, capsys):
    from kgqa.cli import main
    from kgqa.web.serve import check_binding

    for host in ("127.0.0.1", "::1", "localhost"):
        check_binding(host, None)
    check_binding("0.0.0.0", "s3cret")
    for host in ("0.0.0.0", "::", "192.168.1.5"):
        with pytest.raises(InputError, match="--token SECRET"):
            check_binding(host, None)
    with pytest.raises(SystemExit) as ex:
        main(["web", "--store", str(tmp_path / "s.sqlite"), "--host", "0.0.0.0", "--port", "1"])
    assert ex.value.code == 2
    assert "--token" in capsys.readouterr().err
