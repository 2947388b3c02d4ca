"""What happened when a system (or kgqa, executing its query) produced an answer.

A query that fails to parse, errors, times out or is refused is an outcome of its own, never
an empty answer; a question the run does not cover is ``missing``. A live system asked through
its web service (:mod:`kgqa.execute.live`) can also fail with ``http_error`` or
``malformed_response`` (its ``timeout`` and ``refused`` are the statuses of those names).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from kgqa.model.answer import Answer, is_empty


class Status(str, Enum):
    OK = "ok"
    PARSE_ERROR = "parse_error"
    EXEC_ERROR = "exec_error"
    TIMEOUT = "timeout"
    REFUSED = "refused"
    MISSING = "missing"
    #: a live QA system answered with an HTTP error (after retries), or could not be reached
    HTTP_ERROR = "http_error"
    #: a live QA system's response did not follow its web-service contract
    MALFORMED_RESPONSE = "malformed_response"

    @property
    def failed(self) -> bool:
        return self is not Status.OK


_VALUES = {s: s.value for s in Status}  # Status.value is an enum property: slow per question


@dataclass(frozen=True, slots=True)
class Outcome:
    status: Status
    answer: Answer | None = None
    message: str = ""
    elapsed: float | None = None

    @property
    def label(self) -> str:
        """``ok`` / ``empty`` / ``parse_error`` / ``exec_error`` / ``timeout`` / ``refused`` /
        ``missing``: the per-question outcome shown in reports."""
        if self.status is Status.OK and is_empty(self.answer):
            return "empty"
        return _VALUES[self.status]

    @classmethod
    def ok(cls, answer: Answer, elapsed: float | None = None) -> "Outcome":
        return cls(Status.OK, answer, "", elapsed)

    @classmethod
    def missing(cls, message: str = "no entry in the run") -> "Outcome":
        return cls(Status.MISSING, None, message)
