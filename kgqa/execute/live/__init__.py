"""Asking live QA systems through the GERBIL QA and Text2SPARQL web-service contracts.

- :mod:`kgqa.execute.live.protocols`: what a request carries and how a response is read;
- :mod:`kgqa.execute.live.client`: :func:`ask` (concurrency, retries, journal/resume,
  outcomes, failing systems, credentials) returning a scorable :class:`~kgqa.model.Run`;
- :mod:`kgqa.execute.live.journal`: the append-only journal that survives kill -9;
- :mod:`kgqa.execute.live.output`: run files (QALD JSON, Text2SPARQL answers, JSONL) and
  :func:`ask_to_file`, the call behind ``kgqa system ask``.
"""

from kgqa.execute.live.client import (
    AskInterrupted,
    AskResult,
    AskSettings,
    SystemFailed,
    ask,
    prediction_from_record,
    questions_for,
)
from kgqa.execute.live.output import ask_to_file, journal_path, write_result
from kgqa.execute.live.protocols import OUTCOMES, PROTOCOLS

__all__ = ["AskInterrupted", "AskResult", "AskSettings", "SystemFailed", "ask", "ask_to_file", "journal_path",
           "prediction_from_record", "questions_for", "write_result", "OUTCOMES", "PROTOCOLS"]
