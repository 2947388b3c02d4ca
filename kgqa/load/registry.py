"""Named benchmark datasets: where their files come from, their checksums, how to load them.

Each :class:`Entry` lists its files as paths relative to a data directory laid out like the
project's shared data folder (``qald-9/qald-9-test-multilingual.json``, ...), each with its
upstream URL (a raw GitHub URL pinned to a commit) and its SHA-256.

:func:`resolve` finds each file, in this order:

1. ``$KGQA_DATA_DIR/<relpath>`` when the variable is set and the file exists (its SHA-256
   is verified; a mismatch raises :class:`~kgqa.model.InputError` unless ``verify=False``);
2. the user cache ``$KGQA_CACHE_DIR/<relpath>`` (default ``~/.cache/kgqa/datasets``), verified
   the same way;
3. a download of the upstream URL with httpx (rich progress bar on a terminal) into a
   temporary file next to the cache path, verified, then atomically renamed into place.
   A checksum mismatch deletes the temporary file and raises InputError.

Files of the built-in ``demo`` entry live inside the package and need no download.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kgqa.model.registry import Registry
from kgqa.model import Dataset, InputError

PACKAGE_DIR = Path(__file__).resolve().parents[1]

Where = Literal["package", "data dir", "cache", "not downloaded"]


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset: ``path`` relative to the data dir (or to the ``kgqa`` package
    when ``package`` is True), its upstream ``url`` and ``sha256``. Where only the upstream
    git blob id is known, ``git_blob`` holds it and the file is verified by that instead
    (sha1 of ``b"blob <size>\\0"`` + content, what ``git hash-object`` prints). A file with
    neither is not verified (``kgqa datasets list`` says so)."""

    path: str
    url: str | None = None
    sha256: str | None = None
    package: bool = False
    git_blob: str | None = None

    @property
    def checksum(self) -> str:
        """``sha256:<hex>``, ``git-blob:<hex>`` or ``unverified``."""
        if self.sha256:
            return f"sha256:{self.sha256}"
        if self.git_blob:
            return f"git-blob:{self.git_blob}"
        return "unverified"


@dataclass(frozen=True)
class Entry:
    name: str
    description: str
    format: str
    files: tuple[DataFile, ...]
    items: int | None = None
    licence: str = ""
    citation: str = ""
    homepage: str = ""
    options: dict[str, Any] = field(default_factory=dict)


_QALD = "https://raw.githubusercontent.com/ag-sc/QALD/7a43e2b99a523f74377c317630f5ec55a6d8c1cf/"
_QALD10 = "https://raw.githubusercontent.com/KGQA/QALD-10/89caa86371c7a65c6c87a64e0eeaa0e247ff5fe5/"
_T2S = "https://raw.githubusercontent.com/AKSW/text2sparql.aksw.org/d317a8476a3be27a2eef5bfc5f670a58f5c128ee/"
_CK25 = "https://raw.githubusercontent.com/eccenca/ck25-dataset/c838fcc95b1f7ad98492ccfb9ceacc7c84c5e02c/"
_RUBQ = "https://raw.githubusercontent.com/vladislavneon/RuBQ/fade3eae6a4807c35b19cfce20dfa805fc8c0cdf/"
# Pinned by the abbreviated commit ids the issue names where the full id could not be looked up
# (GitHub resolves abbreviated commit ids in raw URLs; the checksum decides either way).
_LCQ1 = "https://raw.githubusercontent.com/AskNowQA/LC-QuAD/9b8c16a/"
_LCQ2 = "https://raw.githubusercontent.com/AskNowQA/LC-QuAD2.0/0a5f8f85b6f863c3b80f0fa02839e25d438af3ae/"
_SDQA = "https://raw.githubusercontent.com/castorini/SimpleDBpediaQA/782696e/"
_GQ = "https://raw.githubusercontent.com/ysu1989/GraphQuestions/add2fea/"
_LCQ1_CITE = ("Trivedi, Maheshwari, Dubey, Lehmann: LC-QuAD: A Corpus for Complex Question Answering over "
              "Knowledge Graphs. ISWC 2017.")
_LCQ2_CITE = ("Dubey, Banerjee, Abdelkawi, Lehmann: LC-QuAD 2.0: A Large Dataset for Complex Question Answering "
              "over Wikidata and DBpedia. ISWC 2019.")
_SDQA_CITE = ("Azmy, Shi, Lin, Ilyas: Farewell Freebase: Migrating the SimpleQuestions Dataset to DBpedia. "
              "COLING 2018.")
_GQ_CITE = ("Su, Sun, Sadler, Srivatsa, Gur, Yan, Yan: On Generating Characteristic-rich Question Sets for QA "
            "Evaluation. EMNLP 2016.")
_QALD_CITE = "Question Answering over Linked Data (QALD) challenge series, ag-sc/QALD"
_QALD_NOTE = " (no checksum known: not verified)"


def _qald(name: str, desc: str, fmt: str, *files: str) -> "Entry":
    """A QALD edition of ag-sc/QALD@7a43e2b whose checksums are not known to kgqa."""
    return Entry(name, desc + _QALD_NOTE, fmt,
                 tuple(DataFile(f"qald-{name.split('-')[1]}/{f.rsplit('/', 1)[1]}", _QALD + f) for f in files),
                 licence="MIT", citation=_QALD_CITE, homepage="https://github.com/ag-sc/QALD")

_QALD9_CITE = ("Usbeck, Gusmita, Ngonga Ngomo, Saleem: 9th Challenge on Question Answering over Linked Data "
               "(QALD-9). Semdeep/NLIWoD@ISWC 2018, CEUR-WS vol. 2241.")
_T2S_CITE = ("Text2SPARQL'25 challenge, Text2KG workshop at ESWC 2025 (AKSW, eccenca); "
             "https://text2sparql.aksw.org/")

ENTRIES: tuple[Entry, ...] = (
    Entry(
        "demo", "built-in demo: a few questions over the small demo KG shipped with kgqa", "qald-json",
        (DataFile("demo/data/questions.json", package=True),),
        licence="same as kgqa", citation="",
    ),
    Entry(
        "qald-9-train", "QALD-9 multilingual train set (DBpedia 2016-10), 408 questions, 12 languages", "qald-json",
        (DataFile("qald-9/qald-9-train-multilingual.json", _QALD + "9/data/qald-9-train-multilingual.json",
                  "1f85913e6d62a0a55d52b6b70ccb3e828aeaa5e79cd888d270d2a251417bdb9c"),),
        items=408, licence="MIT", citation=_QALD9_CITE, homepage="https://github.com/ag-sc/QALD",
    ),
    Entry(
        "qald-9-test", "QALD-9 multilingual test set (DBpedia 2016-10), 150 questions, 12 languages", "qald-json",
        (DataFile("qald-9/qald-9-test-multilingual.json", _QALD + "9/data/qald-9-test-multilingual.json",
                  "ee61ebacfe14f2a9e70df2d6b1bdd5338d8616b715b628353b3934b26b7d9d78"),),
        items=150, licence="MIT", citation=_QALD9_CITE, homepage="https://github.com/ag-sc/QALD",
    ),
    Entry(
        "qald-10", "QALD-10 test set (Wikidata), 394 questions", "qald-json",
        (DataFile("qald-10/qald_10.json", _QALD10 + "data/qald_10/qald_10.json",
                  "55720cbc9effb250f4b814a9c27ce5f5d61d863d5943bc8aa93773f6f761c6cc"),),
        items=394, licence="MIT",
        citation=("Usbeck, Yan, Perevalov, Jiang, Schulz, Kraft, Möller, Huang, Reineke, Ngonga Ngomo, Saleem, "
                  "Both: QALD-10 - The 10th Challenge on Question Answering over Linked Data. Semantic Web "
                  "journal, 2023."),
        homepage="https://github.com/KGQA/QALD-10",
    ),
    Entry(
        "ck25", "Text2SPARQL'25 corporate benchmark CK25: 50 English questions over the CK25 KG", "text2sparql",
        (DataFile("ck25/questions.yml", _CK25 + "questions.yml",
                  "305263d864bca6c7452d5d10bfd57fc9598a815d7c4fd930d0e36e699ba0e6a6"),
         DataFile("ck25/official-gold/ck25_true_result_set.json", _T2S + "docs/benchmark/ck25_true_result_set.json",
                  "8563a66faa72bc803833d22773bb5c41d33656645d0906c84cce135a84f68771")),
        items=50, licence="CC BY 4.0 (questions), CC BY-SA 4.0 (gold result set)",
        citation=("Tramp, Pietzsch et al.: The CK25 Corporate Knowledge Reference Dataset for Benchmarking "
                  "Text 2 SPARQL Question Answering Approaches (2025), doi:10.5281/zenodo.16912605"),
        homepage="https://github.com/eccenca/ck25-dataset",
    ),
    Entry(
        "db25", "Text2SPARQL'25 DBpedia benchmark DB25: 100 questions in English and Spanish", "text2sparql",
        (DataFile("db25/questions_db25.yaml", _T2S + "docs/benchmark/questions_db25.yaml",
                  "41c447c361f5315b066c157f1dd9801e60ce6029cb02f56af9937fae9cfcebb6"),
         DataFile("db25/db25_true_result_set.json", _T2S + "docs/benchmark/db25_true_result_set.json",
                  "e5001e581283b43dbe16c0710bb718fb98e08845c67e2ddef2e8610533175302")),
        items=100, licence="CC BY-SA 4.0", citation=_T2S_CITE, homepage="https://text2sparql.aksw.org/",
    ),
    Entry(
        "rubq-1.0-dev", "RuBQ 1.0 dev set: 300 Russian questions (with English translations) over Wikidata", "rubq",
        (DataFile("rubq-1.0/RuBQ_1.0_dev.json", _RUBQ + "RuBQ_1.0/RuBQ_1.0_dev.json",
                  "c9cc36e6312836fe1c5373fd2c06fb3cb41712385985f2d529c6eb892a59df85"),),
        items=300, licence="CC BY-SA 4.0",
        citation="Korablinov, Braslavski: RuBQ: A Russian Dataset for Question Answering over Wikidata. ISWC 2020, 97-110.",
        homepage="https://github.com/vladislavneon/RuBQ",
    ),
    Entry(
        "rubq-1.0-test", "RuBQ 1.0 test set: 1,200 Russian questions (with English translations) over Wikidata", "rubq",
        (DataFile("rubq-1.0/RuBQ_1.0_test.json", _RUBQ + "RuBQ_1.0/RuBQ_1.0_test.json",
                  "fddf13605226756f4cec7185066ba48c0089592d9d48d3f2e023625afeeeb5d3"),),
        items=1200, licence="CC BY-SA 4.0",
        citation="Korablinov, Braslavski: RuBQ: A Russian Dataset for Question Answering over Wikidata. ISWC 2020, 97-110.",
        homepage="https://github.com/vladislavneon/RuBQ",
    ),
    Entry(
        "lcquad-1.0-train", "LC-QuAD 1.0 train set (DBpedia 2016-04), 4,000 questions, no stored answers", "lcquad",
        (DataFile("lcquad-1.0/train-data.json", _LCQ1 + "train-data.json",
                  "91f47ced1e4a7a5771f8523dfeac587db0788429574225af17a5018a6fef4b0f"),),
        items=4000, licence="GPL-3.0", citation=_LCQ1_CITE, homepage="https://github.com/AskNowQA/LC-QuAD",
    ),
    Entry(
        "lcquad-1.0-test", "LC-QuAD 1.0 test set (DBpedia 2016-04), 1,000 questions, no stored answers", "lcquad",
        (DataFile("lcquad-1.0/test-data.json", _LCQ1 + "test-data.json",
                  "09aaa6c6ab835aeb389efc3d9944270dcedd322dadd31bd9aab7c7763f08722e"),),
        items=1000, licence="GPL-3.0", citation=_LCQ1_CITE, homepage="https://github.com/AskNowQA/LC-QuAD",
    ),
    Entry(
        "simpledbpediaqa-valid", "SimpleDBpediaQA V1 validation set (SimpleQuestions migrated to DBpedia)",
        "simpledbpediaqa",
        (DataFile("simpledbpediaqa/V1/valid.json", _SDQA + "V1/valid.json",
                  "3f10fa436d8d4e388a20887a23b5da97798bf8a3cbc89b038c6bac9f56a60568"),),
        licence="see upstream repository", citation=_SDQA_CITE, homepage="https://github.com/castorini/SimpleDBpediaQA",
    ),
    Entry(
        "simpledbpediaqa-test", "SimpleDBpediaQA V1 test set (SimpleQuestions migrated to DBpedia)", "simpledbpediaqa",
        (DataFile("simpledbpediaqa/V1/test.json", _SDQA + "V1/test.json",
                  "d690064e85cc7f4fd8fe1b005496adc5b412b35e2a9e6b2aff438b09136be563"),),
        licence="see upstream repository", citation=_SDQA_CITE, homepage="https://github.com/castorini/SimpleDBpediaQA",
    ),
    Entry(
        "graphquestions-train", "GraphQuestions training set (Freebase 2013-07)", "graphquestions",
        (DataFile("graphquestions/freebase13/graphquestions.training.json",
                  _GQ + "freebase13/graphquestions.training.json",
                  git_blob="b4469ff7aef4426a8cf0657b90f3f30543cc6921"),),
        licence="CC BY 4.0", citation=_GQ_CITE, homepage="https://github.com/ysu1989/GraphQuestions",
    ),
    Entry(
        "graphquestions-test", "GraphQuestions testing set (Freebase 2013-07)", "graphquestions",
        (DataFile("graphquestions/freebase13/graphquestions.testing.json",
                  _GQ + "freebase13/graphquestions.testing.json",
                  git_blob="304d5032bf61a74070be1c71a0dafd605c4e6fd9"),),
        licence="CC BY 4.0", citation=_GQ_CITE, homepage="https://github.com/ysu1989/GraphQuestions",
    ),
    Entry(
        "lcquad-2.0-train", "LC-QuAD 2.0 train set (Wikidata queries; DBpedia 2018 queries kept in metadata)", "lcquad2",
        (DataFile("lcquad-2.0/dataset/train.json", _LCQ2 + "dataset/train.json",
                  git_blob="1a972fb91a6ce480e34cbbb3c88532a40e3d9d7c"),),
        licence="CC BY 3.0", citation=_LCQ2_CITE, homepage="https://github.com/AskNowQA/LC-QuAD2.0",
    ),
    Entry(
        "lcquad-2.0-test", "LC-QuAD 2.0 test set (Wikidata queries; DBpedia 2018 queries kept in metadata)", "lcquad2",
        (DataFile("lcquad-2.0/dataset/test.json", _LCQ2 + "dataset/test.json",
                  git_blob="9efb5c1e883b9c1ba9df6a2e81591ba908a0011f"),),
        licence="CC BY 3.0", citation=_LCQ2_CITE, homepage="https://github.com/AskNowQA/LC-QuAD2.0",
    ),
    _qald("qald-3-train", "QALD-3 DBpedia train set (XML)", "qald-xml", "3/data/dbpedia-train-answers.xml"),
    _qald("qald-3-test", "QALD-3 DBpedia test set (XML)", "qald-xml", "3/data/dbpedia-test-answers.xml"),
    _qald("qald-4-train", "QALD-4 multilingual train set (XML)", "qald-xml", "4/data/qald-4_multilingual_train_withanswers.xml"),
    _qald("qald-4-test", "QALD-4 multilingual test set (XML)", "qald-xml", "4/data/qald-4_multilingual_test_withanswers.xml"),
    _qald("qald-5-train", "QALD-5 train set (QALD-5 JSON)", "qald-json", "5/data/qald-5_train.json"),
    _qald("qald-6-train", "QALD-6 multilingual train set", "qald-json", "6/data/qald-6-train-multilingual.json"),
    _qald("qald-6-test", "QALD-6 multilingual test set", "qald-json", "6/data/qald-6-test-multilingual.json"),
    _qald("qald-6-train-hybrid", "QALD-6 hybrid train set", "qald-json", "6/data/qald-6-train-hybrid.json"),
    _qald("qald-6-test-hybrid", "QALD-6 hybrid test set", "qald-json", "6/data/qald-6-test-hybrid.json"),
    _qald("qald-7-train", "QALD-7 multilingual train set", "qald-json", "7/data/qald-7-train-multilingual.json"),
    _qald("qald-7-test", "QALD-7 multilingual test set", "qald-json", "7/data/qald-7-test-multilingual.json"),
    _qald("qald-7-train-extended", "QALD-7 multilingual train set, extended JSON", "qald-json",
          "7/data/qald-7-train-multilingual-extended-json.json"),
    _qald("qald-7-train-wikidata", "QALD-7 English Wikidata train set", "qald-json", "7/data/qald-7-train-en-wikidata.json"),
    _qald("qald-7-test-wikidata", "QALD-7 English Wikidata test set", "qald-json", "7/data/qald-7-test-en-wikidata.json"),
    _qald("qald-8-train", "QALD-8 multilingual train set", "qald-json", "8/data/qald-8-train-multilingual.json"),
    _qald("qald-8-test", "QALD-8 multilingual test set", "qald-json", "8/data/qald-8-test-multilingual.json"),
)


#: The named datasets as a :class:`~kgqa.model.registry.Registry` (others may register more).
DATASETS: Registry[Entry] = Registry("dataset", case_insensitive=True)
for _e in ENTRIES:
    DATASETS.register(_e.name, _e)


def entries() -> list[Entry]:
    return list(DATASETS.values())


def find(name: str) -> Entry | None:
    return DATASETS.find(name.strip())


#: Knowledge graphs by the name of the dataset they belong to: what ``--kg NAME`` (CLI, web form,
#: ``kg=`` in the library) executes queries on when NAME is not a file or URL.
KGS: dict[str, DataFile] = {
    "demo": DataFile("demo/data/kg.ttl", package=True),
    "ck25": DataFile("ck25/graphs/prod-inst.ttl", _CK25 + "graphs/prod-inst.ttl",
                     "9e701537f6baac2a295aa365645eea1fda75b711e007a69ba2d4babe9e41a19a"),
}


def resolve_kg(spec: str, verify: bool = True, download: bool = True) -> str:
    """A ``--kg`` value as the engine opens it: a registry KG name (``ck25``; see :data:`KGS`)
    becomes its local file (verified against its checksum, downloaded when missing and a source
    is known); a URL, an existing path (a file named like a KG wins) or a comma-separated list
    is returned as it is. A bare word that is neither gets "did you mean"; a registered KG that
    is not on this machine and cannot be fetched is an error saying where it was looked for."""
    text = spec.strip()
    if text.startswith(("http://", "https://")) or "," in text or Path(text).expanduser().exists():
        return spec
    f = KGS.get(text.lower())
    if f is None:
        if "/" not in text and "." not in text:  # a bare word: a name the user expected us to know
            from kgqa.model.suggest import did_you_mean

            raise InputError("--kg", f"no such file, directory or registry KG {text!r}{did_you_mean(text, KGS)}; "
                                     f"registry KGs: {', '.join(KGS)} (or RDF file(s), a store directory, an "
                                     "http(s) SPARQL endpoint)")
        return spec
    try:
        return str(resolve_file(f, verify, download))
    except InputError as e:
        raise InputError(text, f"the {text.lower()} knowledge graph is not on this machine (looked for {f.path} in "
                               f"the data dir $KGQA_DATA_DIR and the download cache; {e.problem.message}); pass the RDF "
                               "file's path instead") from None


# --------------------------------------------------------------------------- locations


def data_dir() -> Path | None:
    env = os.environ.get("KGQA_DATA_DIR")
    return Path(env).expanduser() if env else None


def cache_dir() -> Path:
    env = os.environ.get("KGQA_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "kgqa" / "datasets"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def git_blob_sha1(path: Path) -> str:
    """The git blob id of a file: sha1 of ``b"blob <size>\\0"`` followed by the content."""
    h = hashlib.sha1()
    h.update(b"blob %d\0" % path.stat().st_size)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def checksum_problem(path: Path, f: DataFile) -> str | None:
    """None when ``path`` matches the file's checksum (or it has none), else what differs."""
    if f.sha256:
        got = sha256_of(path)
        return None if got == f.sha256 else f"sha256 {got}, expected {f.sha256}"
    if f.git_blob:
        got = git_blob_sha1(path)
        return None if got == f.git_blob else f"git blob {got}, expected {f.git_blob}"
    return None


def _verify(path: Path, f: DataFile, where: str, verify: bool) -> Path:
    if verify:
        msg = checksum_problem(path, f)
        if msg:
            raise InputError(path, f"checksum mismatch in the {where}: {msg} "
                                   f"(upstream {f.url}); replace the file, or pass verify=False to use it anyway")
    return path


def locate(f: DataFile) -> tuple[Where, Path]:
    """Where a file would be taken from, without downloading or verifying it."""
    if f.package:
        p = PACKAGE_DIR / f.path
        return ("package" if p.exists() else "not downloaded"), p
    dd = data_dir()
    if dd is not None and (dd / f.path).is_file():
        return "data dir", dd / f.path
    cp = cache_dir() / f.path
    if cp.is_file():
        return "cache", cp
    return "not downloaded", cp


def where(entry: Entry) -> Where:
    """Where the entry's files resolve now: the least available location of its files."""
    order: list[Where] = ["package", "data dir", "cache", "not downloaded"]
    return max((locate(f)[0] for f in entry.files), key=order.index)


def _searched(f: DataFile) -> str:
    """Where a named dataset's file was looked for before downloading, and the fix: a data folder
    near the working directory that holds the file is named with the ``KGQA_DATA_DIR`` to set."""
    dd = data_dir()
    looked = (f"{dd / f.path} ($KGQA_DATA_DIR)" if dd is not None else "$KGQA_DATA_DIR (not set)")
    text = f"{f.path} was looked for in {looked} and in the download cache {cache_dir() / f.path}"
    here = Path.cwd()
    near = [here / "data", here / "shared" / "data", here.parent / "shared" / "data", here.parent / "data",
            Path(__file__).resolve().parents[3] / "shared" / "data"]
    found = next((d for d in near if (d / f.path).is_file() and d != dd), None)
    if found is not None:
        return f"{text}; it is in {found}: set KGQA_DATA_DIR={found}"
    return f"{text}; set KGQA_DATA_DIR to the folder that holds {f.path} (offline), or connect to the network"


def _download(f: DataFile, dest: Path, verify: bool) -> Path:
    import httpx

    from kgqa.model.urlguard import UrlRefused, guarded_client

    if not f.url:
        raise InputError(dest, "file is not available locally and has no download URL")
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    h = hashlib.sha256()
    try:
        # every redirect hop checked with the URL rule, each connection pinned to the checked address
        with os.fdopen(fd, "wb") as out, guarded_client(f.url, follow_redirects=True, timeout=60.0) as client, \
                client.stream("GET", f.url) as resp:
            if resp.status_code != 200:
                raise InputError(f.url, f"download failed: HTTP {resp.status_code}; {_searched(f)}")
            total = int(resp.headers.get("content-length") or 0) or None
            from kgqa.model.progress import progress_bar

            with progress_bar(total, f"downloading {f.path}", unit="bytes") as bar:
                for chunk in resp.iter_bytes():
                    out.write(chunk)
                    h.update(chunk)
                    bar(len(chunk))
        if verify and f.sha256 and h.hexdigest() != f.sha256:
            raise InputError(f.url, f"checksum mismatch after download: sha256 {h.hexdigest()}, expected {f.sha256}; "
                                    "the upstream file changed or the download is corrupt (nothing was saved)")
        if verify and not f.sha256 and f.git_blob and git_blob_sha1(tmp) != f.git_blob:
            raise InputError(f.url, f"checksum mismatch after download: git blob {git_blob_sha1(tmp)}, expected "
                                    f"{f.git_blob}; the upstream file changed or the download is corrupt (nothing was saved)")
        os.replace(tmp, dest)
        return dest
    except httpx.HTTPError as e:
        raise InputError(f.url, f"download failed: {e}; {_searched(f)}") from None
    except UrlRefused as e:
        raise InputError(f.url, f"download refused: {e}") from None
    finally:
        if tmp.exists():
            tmp.unlink()


def resolve_file(f: DataFile, verify: bool = True, download: bool = True) -> Path:
    kind, path = locate(f)
    if kind == "package":
        return path
    if f.package:
        raise InputError(path, "built-in data file is missing from the kgqa package")
    if kind == "data dir":
        return _verify(path, f, "data dir ($KGQA_DATA_DIR)", verify)
    if kind == "cache":
        return _verify(path, f, "download cache", verify)
    if not download:
        raise InputError(path, f"not downloaded (upstream {f.url})")
    return _download(f, path, verify)


def resolve(entry: Entry, verify: bool = True, download: bool = True) -> list[Path]:
    """Local paths of the entry's files (downloading missing ones; see module docstring)."""
    return [resolve_file(f, verify, download) for f in entry.files]


def load(entry: Entry, verify: bool = True, **options: Any) -> Dataset:
    """The entry's dataset, loaded with its format (``options`` go to the format's loader)."""
    from kgqa.load import formats

    paths = resolve(entry, verify=verify)
    fmt = formats.get("dataset", entry.format)
    ds = fmt.load(paths, **{**entry.options, **options})
    ds.name = entry.name
    ds.format = ds.format or fmt.name
    ds.metadata = {**ds.metadata, "registry": entry.name}
    return ds


# --------------------------------------------------------------------------- knowledge graphs

def kg_path(name: str) -> Path | None:
    """The local RDF file of the registered KG ``name`` (None: no such KG, or not present
    here: the data dir or the download cache lacks it)."""
    f = KGS.get(name.strip().lower())
    if f is None:
        return None
    kind, path = locate(f)
    return path if kind in ("package", "data dir", "cache") and path.is_file() else None


def available_kgs() -> dict[str, str]:
    """Registered KGs present on this machine: name -> RDF file (what ``kgqa web`` offers)."""
    return {name: str(p) for name in KGS if (p := kg_path(name)) is not None}
