"""kgqa's built-in demo data: a small fictional knowledge graph (``kg.ttl``), 30 questions with
gold SPARQL and gold answers (``questions.json``, QALD JSON) and three invented system runs
(``runs/strong.json``, ``runs/medium.json``, ``runs/weak.json``), all under :data:`DATA`.
``DATA / "README.md"`` documents every deliberate error in the runs. The files are generated
by ``tools/make_demo.py`` (gold and run answers are the results of executing the queries on
``kg.ttl`` with pyoxigraph)."""

from pathlib import Path

DATA = Path(__file__).parent / "data"
