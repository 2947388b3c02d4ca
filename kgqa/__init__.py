"""kgqa: benchmarking question answering over knowledge graphs.

Stages (data flows one way): ``kgqa.load`` -> ``kgqa.execute`` -> ``kgqa.score`` ->
``kgqa.analyze`` -> ``kgqa.report``; ``kgqa.model`` (and ``kgqa.sparql``) are shared by all.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    """Lazy top-level helpers (no import cost for the CLI): ``kgqa.to_dataframe``."""
    if name == "to_dataframe":
        from kgqa.report.dataframe import to_dataframe

        return to_dataframe
    raise AttributeError(f"module 'kgqa' has no attribute {name!r}")
