"""Byte-pair encoding of the seq2seq baseline (kgqa.baselines.bpe): no PyTorch needed."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings, strategies as st

from conftest import examples

from kgqa.baselines.bpe import BPE, CONT, END, join_pieces, learn_merges

# words as the tokenizers make them: no whitespace (CONT is whitespace to Python)
WORD = st.text(st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1, max_size=12)


def naive_merges(words: dict[str, int], merges: int) -> list[tuple[str, str]]:
    """The textbook algorithm: recount every pair after every merge."""
    vocab = {(*w[:-1], w[-1] + END): c for w, c in words.items()}
    out = []
    for _ in range(merges):
        pairs: Counter = Counter()
        for syms, c in vocab.items():
            for p in zip(syms, syms[1:]):
                pairs[p] += c
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < 2:
            break
        out.append(best)
        new: dict = {}
        for syms, c in vocab.items():
            merged, i = [], 0
            while i < len(syms):
                if i + 1 < len(syms) and (syms[i], syms[i + 1]) == best:
                    merged.append(syms[i] + syms[i + 1])
                    i += 2
                else:
                    merged.append(syms[i])
                    i += 1
            new[tuple(merged)] = new.get(tuple(merged), 0) + c
        vocab = new
    return out


def test_sennrich_example_merges_the_most_frequent_pairs_first():
    words = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    merges = learn_merges(words, 4)
    # e+s and s+t</w> both occur 9 times: the tie goes to the pair that sorts first
    assert merges == [("e", "s"), ("es", "t" + END), ("l", "o"), ("e", "w")]
    bpe = BPE(merges)
    assert bpe.encode("newest") == ("n" + CONT, "ew" + CONT, "est")
    assert bpe.encode("lowest") == ("lo" + CONT, "w" + CONT, "est")
    assert join_pieces(bpe.encode_all(["lowest", "x", "newer"])) == ["lowest", "x", "newer"]


@examples(60)
def test_incremental_learner_equals_the_textbook_algorithm(examples):
    @settings(max_examples=examples, deadline=None)
    @given(st.dictionaries(WORD, st.integers(1, 6), min_size=1, max_size=25), st.integers(0, 40))
    def check(words, merges):
        _check_incremental_learner_equals_the_textbook_algorithm(words, merges)

    check()


def _check_incremental_learner_equals_the_textbook_algorithm(words, merges):
    assert learn_merges(words, merges) == naive_merges(words, merges)


@settings(max_examples=60, deadline=None)
@given(st.lists(WORD, min_size=1, max_size=30), st.lists(WORD, max_size=20), st.integers(0, 60))
def test_pieces_join_back_into_the_words(train, words, merges):
    bpe = BPE.learn(train, merges)
    assert join_pieces(bpe.encode_all(words)) == words
    assert join_pieces(bpe.encode_all(train)) == train
    # every piece but a word's last carries the continuation mark, and only those
    for w in words:
        pieces = bpe.encode(w)
        assert all(p.endswith(CONT) for p in pieces[:-1]) and not pieces[-1].endswith(CONT)


def test_merges_depend_on_the_word_counts_only_not_their_order():
    words = [f"w{i % 7}x{i % 3}" for i in range(200)] + ["select", "where", "select"] * 5
    shuffled = words[:]
    random.Random(1).shuffle(shuffled)
    assert BPE.learn(words, 30).merges == BPE.learn(shuffled, 30).merges
    assert len(BPE.learn(words, 30).merges) == 30
    assert learn_merges({"ab": 1}, 10) == []  # a pair seen once is not merged
