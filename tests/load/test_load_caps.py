"""Caps on loaders (issue 24, scope 5): a JSON integer over Python's 4,300-digit limit is a
malformed value with its place, not a crash; ``migrate --links`` files get the decompression
bomb guard and report bad UTF-8 with file and line."""

from __future__ import annotations

import gzip
import json

import pytest

from kgqa.load import decompress
from kgqa.load.decompress import DECOMPRESSION_FLOOR
from kgqa.load import load_dataset, load_run
from kgqa.make.migrate.links import Links
from kgqa.model import InputError


def test_huge_integer_in_a_jsonl_run_is_a_listed_problem(tmp_path):
    p = tmp_path / "run.jsonl"
    p.write_text('{"id": "1", "answers": [' + "7" * 5000 + ']}\n{"id": "2", "answers": ["http://x/a"]}\n',
                 encoding="utf-8")
    run = load_run(p, format="jsonl")
    assert [x.id for x in run.predictions] == ["2"]
    assert len(run.problems) == 1
    assert run.problems[0].record == "line 1"
    assert "more than 4,300 digits" in run.problems[0].message


def test_huge_integer_in_a_json_file_names_line_and_column(tmp_path):
    p = tmp_path / "ds.json"
    p.write_text('{"questions": [\n {"id": ' + "1" * 4400 + "}]}", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2, column 9: number with more than 4,300 digits"):
        load_dataset(p, format="qald-json")


# the default floor (64 MiB inflated and read, ~2 CPU-s) in the slow run; the README's command
# lowers it to 1 MiB (the same guard, as tests/execute/test_faults.py does for KG files)
@pytest.mark.parametrize("floor", [pytest.param(1 << 20, id="1MiB"),
                                   pytest.param(DECOMPRESSION_FLOOR, id="default", marks=pytest.mark.slow)])
def test_gzip_bomb_links_file_refused(tmp_path, monkeypatch, floor):
    monkeypatch.setattr(decompress, "DECOMPRESSION_FLOOR", floor)
    p = tmp_path / "links.nt.gz"
    # one compressed block written again and again: a multi-member gzip file (valid, and what
    # concatenated .gz files are) past the floor, made without compressing all of it
    block = b"<http://a/x> <http://www.w3.org/2002/07/owl#sameAs> <http://b/x> .\n" * 16000
    member = gzip.compress(block, compresslevel=9)
    p.write_bytes(member * (floor // len(block) + 2))
    with pytest.raises(InputError, match="decompression bomb") as e:
        Links.load([p], wanted={"http://a/nothing"})
    assert str(p) in str(e.value)


def test_gzip_links_table_still_loads(tmp_path):
    p = tmp_path / "links.tsv.gz"
    p.write_bytes(gzip.compress(b"source\ttarget\nhttp://a/x\thttp://b/x\n"))
    assert Links.load([p]).linked("http://a/x") == ["http://b/x"]


@pytest.mark.parametrize("name", ["links.csv", "links.csv.gz"])
def test_invalid_utf8_in_a_links_csv_names_file_and_line(tmp_path, name):
    data = b"source,target\nhttp://a/x,http://b/x\nhttp://a/\xe9,http://b/y\n"
    p = tmp_path / name
    p.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    with pytest.raises(InputError, match=r"line 3: not valid UTF-8 \(byte 0xe9 at column 10\)") as e:
        Links.load([p])
    assert str(p) in str(e.value)


def test_multiline_quoted_cell_reports_the_physical_line(tmp_path):
    p = tmp_path / "links.csv"
    p.write_text('source,target\n"http://a/x\n",http://b/x\nonly-one\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 4: expected two columns"):
        Links.load([p])


def test_json_loads_error_type_is_kept():
    from kgqa.load.jsonio import loads

    with pytest.raises(json.JSONDecodeError):
        loads("[" + "9" * 4301 + "]")


@pytest.mark.parametrize("name", ["links.tsv", "links.tsv.xz", "links.nt.bz2"])
def test_one_link_reader_for_evaluate_and_migrate(tmp_path, name):
    """``evaluate --links`` and ``migrate --links`` read a link file through one reader: the same
    pairs, whatever the compression."""
    import bz2
    import lzma

    from kgqa.load.links import load_links, read_pairs

    if ".nt" in name:
        text = ("<http://a/x> <http://www.w3.org/2002/07/owl#sameAs> <http://b/x> .\n"
                "<http://b/y> <http://www.w3.org/2002/07/owl#sameAs> <http://a/y> .\n"
                "<http://a/z> <http://www.w3.org/2000/01/rdf-schema#seeAlso> <http://b/z> .\n")
    else:
        text = "source\ttarget\n# a comment\nhttp://a/x\thttp://b/x\n<http://b/y>\t<http://a/y>\n"
    raw = text.encode()
    p = tmp_path / name
    p.write_bytes(lzma.compress(raw) if name.endswith(".xz") else bz2.compress(raw) if name.endswith(".bz2") else raw)
    assert list(read_pairs(p)) == [("http://a/x", "http://b/x"), ("http://b/y", "http://a/y")]
    links = Links.load([p])
    assert links.linked("http://a/x") == ["http://b/x"] and links.linked("http://a/y") == ["http://b/y"]
    assert Links.load([p], wanted={"http://a/y"}).pairs.keys() == {"http://a/y", "http://b/y"}
    il = load_links([p], dbpedia=False)
    assert il.description == "sameAs=2" and il.map("http://b/y") == il.map("http://a/y") != il.map("http://a/x")
