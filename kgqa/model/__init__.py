"""The typed model every stage shares: terms, answers, outcomes, items, runs, problems."""

from kgqa.model.answer import Answer, BooleanAnswer, TableAnswer, answer_items, is_empty
from kgqa.model.item import Dataset, Item
from kgqa.model.outcome import Outcome, Status
from kgqa.model.problems import InputError, Problem
from kgqa.model.run import Prediction, Run
from kgqa.model.terms import BNode, IRI, Literal, Term, TermMatching

__all__ = [
    "Answer", "BooleanAnswer", "TableAnswer", "answer_items", "is_empty",
    "Dataset", "Item", "Outcome", "Status", "InputError", "Problem", "Prediction", "Run",
    "BNode", "IRI", "Literal", "Term", "TermMatching",
]
