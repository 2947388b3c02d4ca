"""kgqa: benchmarking question answering over knowledge graphs.

Stages (data flows one way): ``kgqa.load`` -> ``kgqa.execute`` -> ``kgqa.score`` ->
``kgqa.analyze`` -> ``kgqa.report``; ``kgqa.model`` (and ``kgqa.sparql``) are shared by all.
"""

__version__ = "0.1.0"
