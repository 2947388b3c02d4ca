"""SSRF through a redirect (issue 34, scope 4): every request kgqa sends (SPARQL endpoints, live
systems, downloads) is checked with the one URL rule at every redirect hop, and connects to the
address that was checked (no second DNS look-up). Real loopback servers (tests/faultserver.py)
answer 307 to another port or to 169.254.169.254; nothing leaves 127.0.0.1."""

from __future__ import annotations

import httpx
import pytest

from faultserver import FaultServer, Reply
from kgqa.execute.endpoint import SparqlEndpoint
from kgqa.execute.live import AskSettings, ask
from kgqa.load.registry import DataFile, _download
from kgqa.model import Dataset, InputError, Item, Status, TableAnswer
from kgqa.model.terms import IRI
from kgqa.model.urlguard import Guard, GuardedTransport, UrlRefused, UrlRule, using

WEB = UrlRule(public_only=True, allowed_hosts=frozenset({"localhost"}))  # --allowed-url-host localhost
SECRET = Reply.select(["x"], [{"x": {"type": "literal", "value": "internal secret"}}])
METADATA = "http://169.254.169.254/latest/meta-data/"


def resolver(table: dict[str, list[str]], calls: list[str] | None = None):
    def resolve(host, port, type=0):
        if calls is not None:
            calls.append(host)
        if host not in table:
            raise OSError(-2, "Name or service not known")
        addrs = table[host]
        out = addrs.pop(0) if addrs and isinstance(addrs[0], list) else addrs
        return [(2, 1, 6, "", (a, port)) for a in out]
    return resolve


def bouncer(target: str):
    """An endpoint that answers kgqa's probe and sends every query elsewhere (307 keeps the POST)."""
    return lambda req: Reply.ask(True) if (req.query or "").strip() == "ASK {}" else \
        Reply(status=307, headers={"Location": target})


@pytest.fixture
def servers():
    with FaultServer(SECRET_HANDLER, lifetime=60) as internal, FaultServer(lifetime=60) as evil:
        yield internal, evil


def SECRET_HANDLER(req):  # noqa: N802 - a handler, named as the reply it gives
    return SECRET


@pytest.mark.parametrize("where", ["internal", "metadata"])
def test_endpoint_redirect_to_a_non_public_address_is_refused_on_the_web(servers, where):
    internal, evil = servers
    target = internal.url("/") if where == "internal" else METADATA
    evil.handler = bouncer(target)
    with using(WEB), SparqlEndpoint(f"http://localhost:{evil.port}/sparql", retries=0) as ep:
        o = ep.execute("SELECT ?x WHERE { ?s ?p ?x }", timeout=10)
    assert o.status is Status.EXEC_ERROR and o.answer is None
    word = "loopback" if where == "internal" else "link-local"
    assert f"request to {target} refused: " in o.message and f"is a {word} address" in o.message
    assert "--allowed-url-host" in o.message
    assert internal.requests == []  # the internal service never saw the run's query


def test_a_users_local_endpoint_may_redirect_locally(servers):
    # the command line, default rule: the chain started at the user's own loopback service
    internal, evil = servers
    evil.handler = bouncer(internal.url("/"))
    with SparqlEndpoint(f"http://localhost:{evil.port}/sparql", retries=0) as ep:
        o = ep.execute("SELECT ?x WHERE { ?s ?p ?x }", timeout=10)
    assert o.status is Status.OK and o.answer.rows[0][0].value == "internal secret"


def test_a_chain_that_starts_at_a_public_host_stays_public():
    public = resolver({"qa.example": ["93.184.215.14"]})
    g = Guard("https://qa.example/sparql", UrlRule(), resolve=public)
    assert g.strict
    for hop in ("http://127.0.0.1:8080/", METADATA, "http://10.1.2.3/", "http://[::1]/", "http://[::ffff:127.0.0.1]/"):
        with pytest.raises(UrlRefused, match="not followed to a non-public address"):
            g.check(hop)
    g.check("https://qa.example/other")  # public: fine
    assert not Guard("http://127.0.0.1:8890/sparql", UrlRule()).strict  # the user's own service
    assert Guard("http://127.0.0.1:8890/sparql", WEB).strict  # the web: always


def test_the_connection_goes_to_the_checked_address(servers):
    # qa.example is no real name: only the guard's one look-up can make the request reach the server
    internal, _ = servers
    calls: list[str] = []
    rule = UrlRule(public_only=True, allowed_hosts=frozenset({"qa.example"}))
    g = Guard("http://qa.example/", rule, resolve=resolver({"qa.example": ["127.0.0.1"]}, calls))
    with httpx.Client(transport=GuardedTransport(httpx.HTTPTransport(), g)) as client:
        r = client.get(f"http://qa.example:{internal.port}/sparql?query=ASK%7B%7D")
    assert r.status_code == 200 and "internal secret" in r.text
    assert str(r.url) == f"http://qa.example:{internal.port}/sparql?query=ASK%7B%7D"  # as asked
    assert internal.requests[-1].headers["Host"] == f"qa.example:{internal.port}"
    assert calls == ["qa.example"]


def test_dns_rebinding_between_check_and_connect_is_refused(servers):
    # public when the chain starts, loopback at the next look-up: refused, nothing connects
    internal, _ = servers
    calls: list[str] = []
    flip = resolver({"rebind.example": [["93.184.215.14"], ["127.0.0.1"]]}, calls)
    g = Guard("http://rebind.example/", UrlRule(), resolve=flip)
    with httpx.Client(transport=GuardedTransport(httpx.HTTPTransport(), g)) as client:
        with pytest.raises(UrlRefused, match=r"rebind.example \(127.0.0.1\) is a loopback address"):
            client.get(f"http://rebind.example:{internal.port}/")
    assert internal.requests == [] and calls == ["rebind.example", "rebind.example"]


def test_live_system_on_a_host_the_web_does_not_allow_is_refused(servers):
    internal, _ = servers
    ds = Dataset("d", [Item(id="1", questions={"en": "q"}, answer=TableAnswer.single_column([IRI("http://x/a")], "a"))])
    with using(UrlRule(public_only=True)):
        res = ask(ds, internal.url("/qa"), "gerbil", AskSettings(progress=False, allow_failures=True, retries=0))
    rec = res.records[0]
    assert rec["outcome"] == "refused" and "127.0.0.1 is a loopback address" in rec["message"]
    assert internal.requests == []


def test_download_redirect_to_a_non_public_address_is_refused(servers, tmp_path):
    internal, evil = servers
    evil.handler = lambda req: Reply(status=307, headers={"Location": internal.url("/file")})
    f = DataFile(path="x.json", url=f"http://localhost:{evil.port}/x.json")
    with using(WEB), pytest.raises(InputError, match="download refused: 127.0.0.1 is a loopback address"):
        _download(f, tmp_path / "x.json", verify=False)
    assert internal.requests == [] and not (tmp_path / "x.json").exists()


def test_https_pinned_to_the_address_verifies_the_certificate_for_the_name(tmp_path):
    # a TLS server on 127.0.0.1 with a certificate for qa.example only: the pinned connection
    # sends qa.example as the TLS server name and verifies the certificate for it; a name the
    # certificate does not cover fails verification although it reaches the same address
    import http.server
    import shutil
    import ssl
    import subprocess
    import threading

    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=qa.example",
                    "-addext", "subjectAltName=DNS:qa.example", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    seen: list[tuple[str | None, str | None]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            seen.append((self.headers.get("Host"), getattr(self.connection, "server_hostname", None)))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    names: list[str | None] = []
    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    sctx.load_cert_chain(cert, key)
    sctx.sni_callback = lambda sock, name, ctx: names.append(name)
    server.socket = sctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        rule = UrlRule(public_only=True, allowed_hosts=frozenset({"qa.example", "other.example"}))
        table = {"qa.example": ["127.0.0.1"], "other.example": ["127.0.0.1"]}
        verify = ssl.create_default_context(cafile=str(cert))
        g = Guard("https://qa.example/", rule, resolve=resolver(table))
        with httpx.Client(transport=GuardedTransport(httpx.HTTPTransport(verify=verify), g)) as client:
            r = client.get(f"https://qa.example:{port}/")
            assert r.status_code == 200 and r.text == "ok"
            assert names == ["qa.example"] and seen[-1][0] == f"qa.example:{port}"
            with pytest.raises(httpx.ConnectError, match="certificate|hostname"):
                client.get(f"https://other.example:{port}/")
    finally:
        server.shutdown()
        server.server_close()
