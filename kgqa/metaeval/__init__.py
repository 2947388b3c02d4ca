"""Measure validation (Linjordet, Balog, Setty, ICTIR 2022): synthetic degradations of gold
queries (:mod:`~kgqa.metaeval.degrade`), sensitivity tables (:mod:`~kgqa.metaeval.sensitivity`)
and axiom checks (:mod:`~kgqa.metaeval.axioms`).

Like :mod:`kgqa.make`, this sits beside the load -> execute -> score -> analyze -> report flow:
it builds runs and drives every stage over them, so it may import any stage; no stage imports
it (only the CLI does).
"""
