"""What the fault rows read from ``kgqa evaluate -f json`` (and a saved ``-o`` file)."""

from __future__ import annotations

import json
from typing import Any


def run_json(text: str) -> dict[str, Any]:
    """The one run of a ``kgqa evaluate -f json`` document: ``{"runs": [...]}`` since issue 38
    (a bare run object, as before, reads too)."""
    doc = json.loads(text)
    if isinstance(doc, list):
        return doc[0]
    return doc["runs"][0] if isinstance(doc, dict) and "runs" in doc else doc
