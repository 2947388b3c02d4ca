"""Byte-pair encoding (Sennrich et al. 2016) learned on a system's training words, for the
``seq2seq`` baseline's ``tokens=bpe`` (Reyd & Zouaq train on BPE tokens). No dependency.

**Learning** (:func:`learn_merges`): every word is a sequence of characters, its last marked
as the word's end (``</w>``); the most frequent adjacent pair of symbols (counted over the
word frequencies) is merged into one symbol, ``merges`` times or until no pair occurs twice.
Ties go to the pair that sorts first, so the merges are a function of the word counts alone.

**Encoding** (:meth:`BPE.encode`): a word's characters merged in the learned order (the
lowest-ranked pair present first, as subword-nmt does); each piece but the last carries the
suffix :data:`CONT` (``\\x1f``, the role of subword-nmt's ``@@``: a character no token holds,
since tokens are split at whitespace and Python counts it as whitespace), so
:func:`join_pieces` restores the words of any piece sequence. Encoding is cached per word.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

__all__ = ["END", "CONT", "learn_merges", "BPE", "join_pieces"]

END = "</w>"
CONT = "\x1f"


def learn_merges(words: Counter[str] | dict[str, int], merges: int) -> list[tuple[str, str]]:
    """The merge list of ``words`` (word -> count), at most ``merges`` long (module docstring)."""
    vocab: dict[tuple[str, ...], int] = {}
    for w, c in words.items():
        if w and c > 0:
            syms = (*w[:-1], w[-1] + END)
            vocab[syms] = vocab.get(syms, 0) + c
    pairs: Counter[tuple[str, str]] = Counter()
    where: dict[tuple[str, str], set[tuple[str, ...]]] = {}
    for syms, c in vocab.items():
        for p in zip(syms, syms[1:]):
            pairs[p] += c
            where.setdefault(p, set()).add(syms)
    out: list[tuple[str, str]] = []
    while len(out) < merges and pairs:
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < 2:
            break
        out.append(best)
        merged = best[0] + best[1]
        for syms in sorted(where.pop(best, ())):
            c = vocab.pop(syms, 0)
            if not c:
                continue
            for p in zip(syms, syms[1:]):
                pairs[p] -= c
                if pairs[p] <= 0:
                    del pairs[p]
                if p in where and p != best:
                    where[p].discard(syms)
            new = _merge(syms, best, merged)
            vocab[new] = vocab.get(new, 0) + c
            for p in zip(new, new[1:]):
                pairs[p] += c
                where.setdefault(p, set()).add(new)
        pairs.pop(best, None)
    return out


def _merge(syms: tuple[str, ...], pair: tuple[str, str], merged: str) -> tuple[str, ...]:
    out: list[str] = []
    i = 0
    while i < len(syms):
        if i + 1 < len(syms) and syms[i] == pair[0] and syms[i + 1] == pair[1]:
            out.append(merged)
            i += 2
        else:
            out.append(syms[i])
            i += 1
    return tuple(out)


class BPE:
    """Encoder of a merge list (module docstring)."""

    def __init__(self, merges: Sequence[Sequence[str]]):
        self.merges = [(str(a), str(b)) for a, b in merges]
        self.rank = {p: i for i, p in enumerate(self.merges)}
        self.encode = lru_cache(maxsize=200_000)(self._encode)

    @classmethod
    def learn(cls, words: Iterable[str], merges: int) -> "BPE":
        return cls(learn_merges(Counter(words), merges))

    def _encode(self, word: str) -> tuple[str, ...]:
        if not word:
            return ()
        syms = (*word[:-1], word[-1] + END)
        while len(syms) > 1:
            ranked = [(self.rank[p], p) for p in zip(syms, syms[1:]) if p in self.rank]
            if not ranked:
                break
            _, best = min(ranked)
            syms = _merge(syms, best, best[0] + best[1])
        return (*(s + CONT for s in syms[:-1]), syms[-1][: -len(END)])

    def encode_all(self, words: Iterable[str]) -> list[str]:
        return [p for w in words for p in self.encode(w)]


def join_pieces(pieces: Iterable[str]) -> list[str]:
    """The words of a piece sequence: a piece ending in :data:`CONT` joins the next; a trailing
    one ends its word."""
    out: list[str] = []
    cur = ""
    for p in pieces:
        if p.endswith(CONT):
            cur += p[: -len(CONT)]
        else:
            out.append(cur + p)
            cur = ""
    if cur:
        out.append(cur)
    return out
