"""The experiment store (beside the flow): experiments, their input files and results in a
database (SQLite by default, PostgreSQL through the same code), with versioned schema
migrations (:mod:`kgqa.store.schema`). :mod:`kgqa.store.runner` evaluates a stored experiment
through the pipeline; the web platform (:mod:`kgqa.web`) and ``kgqa experiments`` read it."""

from kgqa.store.store import Experiment, ImmutableError, Store, StoreError, default_store_path, store_url

__all__ = ["Experiment", "ImmutableError", "Store", "StoreError", "default_store_path", "store_url"]
