"""``seq2seq``: a Transformer encoder-decoder trained from scratch, with or without the copy
mechanism of Reyd & Zouaq (2023, Sect. 3.3; after Hirigoyen et al.). Needs PyTorch
(``pip install 'kgqa[baselines]'``); nothing else in kgqa imports it.

**Tokens.** Source: :func:`kgqa.baselines.tokens.question_tokens` of the (raw, tagged or tag-end)
question; target: :func:`kgqa.baselines.tokens.query_tokens` of the gold query. ``tokens=word``
(default): these words are the tokens; vocabularies keep the tokens seen in training
(``<unk>`` for the others). ``tokens=bpe``: every word is split into byte-pair pieces
(:mod:`kgqa.baselines.bpe`, ``bpe_merges`` merges learned jointly on the training questions' and
queries' words), except the KB tokens the copy mechanism copies, which stay whole; the decoded
pieces are joined back into words. Without copy, BPE lets the model spell a KB element it never
saw whole from pieces it did (``dbr:Stanley_Kubrick`` from ``dbr:Stan``, ``ley_``, ...).

**Without copy** (``copy=false``): KB tokens are ordinary tokens of both vocabularies; a KB
element not seen in training cannot be produced (this is what the unknown-URI split shows).

**With copy** (``copy=true``): every KB token of the source is replaced by one mask token
``<kb>`` before the encoder (tag-end's ``<sep>`` separators are ordinary words, not KB tokens); the target vocabulary holds the SPARQL tokens only (KB tokens are
excluded, and a KB token is fed back to the decoder as ``<kb>``). At each step the decoder
gives a generation distribution (softmax over the SPARQL vocabulary) and a copy distribution:
the cross-attention weights of its last layer (mean over heads) over the masked KB positions
of the source, renormalised. A learned gate ``g = sigmoid(w . h + b)`` on the decoder state
mixes them: ``P(token) = (1 - g) P_gen(token) + g * sum of P_copy over the source positions
holding that KB token``. A target KB token absent from the source is trained as ``<unk>`` of
the generation side. ``copy_gate=false`` fixes ``g = 0`` (the ablation the toy test uses).

**Training**: teacher forcing, cross-entropy on the mixed distribution (negative log of the
probability of the gold token), Adam, ``epochs`` passes over the training set in batches of
``batch``, shuffled by a generator seeded with ``seed``; with ``--valid``, the epoch with the
lowest validation loss is kept. ``torch.manual_seed(seed)`` and deterministic algorithms make
CPU training reproducible for a given seed (and thread count). **Decoding**: greedy, at most
``max_len`` tokens, 64 questions at a time (source padding and a finished question's padding
are masked as attention keys, so batching does not change what a question attends to).

Presets: ``small`` (default: 2+2 layers, d_model 128, 4 heads, feed-forward 256, dropout 0.1,
Adam 1e-3, 40 epochs, batch 32) and ``paper`` (6+6 layers, d_model 1024, 16 heads, feed-forward
4096, dropout 0.3, Adam 5e-4); any key can be set on its own (``--set layers=3``).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from kgqa.model import InputError, Item
from kgqa.baselines.base import System
from kgqa.baselines.bpe import BPE, join_pieces
from kgqa.baselines.inputs import SEP
from kgqa.baselines.tokens import detokenize, is_kb, query_tokens, question_tokens, split_declarations
from kgqa.baselines.tokens import dataset_checksum
from kgqa.baselines.training import Watch

PAD, UNK, KB, BOS, EOS = "<pad>", "<unk>", "<kb>", "<s>", "</s>"
SPECIALS = [PAD, UNK, KB, BOS, EOS]

PRESETS: dict[str, dict[str, Any]] = {
    "small": {"layers": 2, "d_model": 128, "heads": 4, "ff": 256, "dropout": 0.1, "lr": 1e-3, "epochs": 40,
              "batch": 32},
    "paper": {"layers": 6, "d_model": 1024, "heads": 16, "ff": 4096, "dropout": 0.3, "lr": 5e-4, "epochs": 40,
              "batch": 32},
}


def _src_is_kb(token: str) -> bool:
    """A question token the copy mechanism may copy: a KB element (not tag-end's ``<sep>``)."""
    if token == SEP:
        return False
    return token.startswith(("<", '"')) and len(token) > 2 or (":" in token and token[0].isalpha())


class DecoderLayer(nn.Module):
    """Self-attention, cross-attention (its weights kept for the copy distribution), FFN."""

    def __init__(self, d: int, heads: int, ff: int, dropout: float):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d, heads, dropout=dropout, batch_first=True)
        self.cross = nn.MultiheadAttention(d, heads, dropout=dropout, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.ReLU(), nn.Dropout(dropout), nn.Linear(ff, d))
        self.n1, self.n2, self.n3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, memory, causal, tgt_pad, src_pad):
        h, _ = self.self_attn(x, x, x, attn_mask=causal, key_padding_mask=tgt_pad, need_weights=False)
        x = self.n1(x + self.drop(h))
        h, w = self.cross(x, memory, memory, key_padding_mask=src_pad, need_weights=True, average_attn_weights=True)
        x = self.n2(x + self.drop(h))
        return self.n3(x + self.drop(self.ff(x))), w


class CopyTransformer(nn.Module):
    def __init__(self, n_src: int, n_tgt: int, cfg: dict[str, Any]):
        super().__init__()
        d = cfg["d_model"]
        self.d = d
        self.src_emb = nn.Embedding(n_src, d, padding_idx=0)
        self.tgt_emb = nn.Embedding(n_tgt, d, padding_idx=0)
        self.pos = nn.Embedding(cfg["max_positions"], d)
        layer = nn.TransformerEncoderLayer(d, cfg["heads"], cfg["ff"], cfg["dropout"], batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg["layers"], enable_nested_tensor=False)
        self.decoder = nn.ModuleList(DecoderLayer(d, cfg["heads"], cfg["ff"], cfg["dropout"]) for _ in range(cfg["layers"]))
        self.out = nn.Linear(d, n_tgt)
        self.gate = nn.Linear(d, 1)
        self.drop = nn.Dropout(cfg["dropout"])

    def _embed(self, emb, ids):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        return self.drop(emb(ids) * math.sqrt(self.d) + self.pos(pos))

    def encode(self, src):
        src_pad = src.eq(0)
        return self.encoder(self._embed(self.src_emb, src), src_key_padding_mask=src_pad), src_pad

    def decode(self, tgt_in, memory, src_pad):
        n = tgt_in.shape[1]
        causal = torch.triu(torch.ones(n, n, dtype=torch.bool, device=tgt_in.device), diagonal=1)
        x = self._embed(self.tgt_emb, tgt_in)
        tgt_pad = tgt_in.eq(0)
        w = None
        for layer in self.decoder:
            x, w = layer(x, memory, causal, tgt_pad, src_pad)
        return x, w  # w: (batch, tgt, src), last layer's cross-attention

    def distributions(self, h, w, kb_mask, copy: bool, gate_on: bool):
        """(generation probabilities, copy probabilities over source positions); both sum
        to the mixed total."""
        p_gen = torch.softmax(self.out(h), dim=-1)
        if not copy:
            return p_gen, None
        has_kb = kb_mask.any(dim=1, keepdim=True).unsqueeze(-1).float()  # (b, 1, 1)
        cw = w * kb_mask.unsqueeze(1).float()
        cw = cw / cw.sum(dim=-1, keepdim=True).clamp_min(1e-9)
        g = torch.sigmoid(self.gate(h)) * has_kb if gate_on else torch.zeros_like(h[..., :1])
        return (1 - g) * p_gen, g * cw


class Seq2SeqSystem(System):
    kind = "seq2seq"
    defaults = {"preset": "small", "copy": True, "copy_gate": True, "device": "cpu", "max_len": None,
                "max_positions": 256, "tokens": "word", "bpe_merges": 2000, **{k: None for k in PRESETS["small"]}}

    def __init__(self, **config: Any):
        super().__init__(**config)
        preset = self.config["preset"]
        if preset not in PRESETS:
            raise InputError("--preset", f"expected one of {', '.join(PRESETS)}, got {preset!r}")
        for k, v in PRESETS[preset].items():
            if self.config.get(k) is None:
                self.config[k] = v
        if self.config["tokens"] not in ("word", "bpe"):
            raise InputError("--tokens", f"expected word or bpe, got {self.config['tokens']!r}")
        if self.config["max_len"] is None:  # decoded tokens at most: BPE pieces are more per query
            self.config["max_len"] = 160 if self.config["tokens"] == "bpe" else 80
        self.bpe: BPE | None = None
        if self.config["device"] not in ("cpu", "cuda"):
            raise InputError("--device", f"expected cpu or cuda, got {self.config['device']!r}")
        if self.config["device"] == "cuda" and not torch.cuda.is_available():
            raise InputError("--device", "cuda was asked for but PyTorch sees no CUDA device")

    # ------------------------------------------------------------------ data

    def _src(self, item: Item) -> list[str]:
        return self._pieces(question_tokens(item, self.lang), _src_is_kb)[: self.config["max_positions"] - 1]

    def _tgt(self, sparql: str) -> list[str]:
        return self._pieces(query_tokens(sparql, self.prefixes), is_kb)[: self.config["max_positions"] - 2]

    def _pieces(self, words: list[str], kb: Any) -> list[str]:
        """With BPE, every word as its pieces but the KB tokens the copy mechanism copies."""
        if self.bpe is None:
            return words
        copy = self.config["copy"]
        return [p for w in words for p in ((w,) if copy and kb(w) else self.bpe.encode(w))]

    def _learn_bpe(self, train: list[Item]) -> None:
        copy = self.config["copy"]
        words = [w for it in train for w in question_tokens(it, self.lang) if not (copy and _src_is_kb(w))]
        words += [w for it in train for w in query_tokens(it.sparql, self.prefixes) if not (copy and is_kb(w))]
        self.bpe = BPE.learn(words, int(self.config["bpe_merges"]))

    def _encode_src(self, toks: list[str]) -> tuple[list[int], list[bool]]:
        copy = self.config["copy"]
        ids, kb = [], []
        for t in toks:
            masked = copy and _src_is_kb(t)
            ids.append(self.src_index[KB] if masked else self.src_index.get(t, 1))
            kb.append(masked)
        return ids, kb

    def _encode_tgt(self, toks: list[str], src: list[str], kb: list[bool]):
        """(decoder inputs, gold generation ids (-1: copy), gold copy mask per step over src)."""
        copy = self.config["copy"]
        inp, gen, cmask = [self.tgt_index[BOS]], [], []
        for t in toks + [EOS]:
            if copy and t != EOS and is_kb(t):
                where = [i for i, (s, k) in enumerate(zip(src, kb)) if k and s == t]
                gen.append(-1 if where else 1)
                cmask.append(where)
                inp.append(self.tgt_index[KB])
            else:
                gen.append(self.tgt_index.get(t, 1))
                cmask.append([])
                inp.append(self.tgt_index.get(t, 1))
        return inp[:-1], gen, cmask

    # ------------------------------------------------------------------ training

    def _fit(self, train: list[Item], valid: list[Item] | None, kg: Any) -> None:
        torch.manual_seed(self.seed)
        torch.use_deterministic_algorithms(True, warn_only=True)
        self.prefixes: dict[str, str] = {}
        for it in train:
            self.prefixes.update(split_declarations(it.sparql)[0])
        copy = self.config["copy"]
        self.bpe = None
        if self.config["tokens"] == "bpe":
            self._learn_bpe(train)
        pairs = [(self._src(it), self._tgt(it.sparql)) for it in train]
        src_vocab = dict.fromkeys(SPECIALS)
        tgt_vocab = dict.fromkeys(SPECIALS)
        for s, t in pairs:
            src_vocab.update(dict.fromkeys(x for x in s if not (copy and _src_is_kb(x))))
            tgt_vocab.update(dict.fromkeys(x for x in t if not (copy and is_kb(x))))
        self.src_vocab, self.tgt_vocab = list(src_vocab), list(tgt_vocab)
        self._indices()
        self.net = self._new_net()
        data = [self._example(s, t) for s, t in pairs]
        vdata = [self._example(self._src(it), self._tgt(it.sparql)) for it in valid] if valid else None
        self._train_loop(data, vdata, self._fingerprint(train, valid))

    def _fingerprint(self, train: list[Item], valid: list[Item] | None) -> str:
        """What a checkpoint must match to be resumed: data and every option but epochs."""

        cfg = {k: v for k, v in sorted(self.config.items()) if k not in ("epochs", "device")}
        return json.dumps([dataset_checksum(train, self.lang), dataset_checksum(valid or [], self.lang), cfg,
                           self.src_vocab, self.tgt_vocab], sort_keys=True, default=str)

    def _train_loop(self, data: list, vdata: list | None, fingerprint: str) -> None:
        """Epochs of teacher forcing, watched (:mod:`kgqa.baselines.training`): progress, budget,
        a checkpoint per epoch to resume from, the epoch of lowest validation loss kept."""

        epochs, bs = int(self.config["epochs"]), int(self.config["batch"])
        watch = Watch(epochs, math.ceil(len(data) / bs), minutes=self.minutes, folder=self.workdir,
                      show=self.show_progress, label=f"seq2seq{' + copy' if self.config['copy'] else ''}",
                      dump=torch.save, read=lambda p: torch.load(p, map_location="cpu", weights_only=False))
        opt = torch.optim.Adam(self.net.parameters(), lr=self.config["lr"])
        gen = torch.Generator().manual_seed(self.seed)
        best: dict[str, Any] = {"loss": math.inf, "epoch": None, "state": None}
        self.history: list[dict[str, Any]] = []
        first = 0
        state = watch.load(fingerprint)
        if state is not None:
            self.net.load_state_dict(state["net"])
            opt.load_state_dict(state["opt"])
            gen.set_state(state["gen"])
            torch.set_rng_state(state["rng"])
            best, self.history, first = state["best"], state["history"], state["epoch"]
        self.stopped = None
        with watch.bars(first):
            for epoch in range(first, epochs):
                if not watch.may_start_epoch():
                    self.stopped = f"budget: {watch.minutes} min would not hold epoch {epoch + 1}"
                    break
                t0 = time.monotonic()
                row = self._epoch(epoch, data, vdata, opt, gen, watch)
                improved = "valid_loss" in row and row["valid_loss"] < best["loss"]
                if improved:
                    best = {"loss": row["valid_loss"], "epoch": epoch + 1,
                            "state": {k: v.detach().clone() for k, v in self.net.state_dict().items()}}
                self.history.append(row)
                seconds = time.monotonic() - t0
                watch.epoch_times.append(seconds)
                watch.save({"fingerprint": fingerprint, "epoch": epoch + 1, "net": self.net.state_dict(),
                            "opt": opt.state_dict(), "gen": gen.get_state(), "rng": torch.get_rng_state(),
                            "best": best, "history": self.history})
                watch.epoch_done(row, seconds, improved)  # said once the checkpoint is written
        self.best_epoch = best["epoch"] or (len(self.history) or None)
        if best["state"] is not None:
            self.net.load_state_dict(best["state"])
        self.net.eval()

    def _epoch(self, epoch: int, data: list, vdata: list | None, opt: Any, gen: Any, watch: Any) -> dict[str, Any]:
        self.net.train()
        order = torch.randperm(len(data), generator=gen).tolist()
        total, seen, bs = 0.0, 0, int(self.config["batch"])
        last_valid = self.history[-1].get("valid_loss") if self.history else None
        for k in range(0, len(order), bs):
            batch = [data[i] for i in order[k:k + bs]]
            loss = self._loss(batch)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)
            opt.step()
            total += float(loss.detach()) * len(batch)
            seen += len(batch)
            watch.batch(epoch, total / seen, last_valid)
        row: dict[str, Any] = {"epoch": epoch + 1, "train_loss": total / len(data)}
        if vdata:
            self.net.eval()
            with torch.no_grad():
                vl = sum(float(self._loss(vdata[k:k + 64])) * len(vdata[k:k + 64]) for k in range(0, len(vdata), 64))
            row["valid_loss"] = vl / len(vdata)
        return row

    def _indices(self) -> None:
        self.src_index = {t: i for i, t in enumerate(self.src_vocab)}
        self.tgt_index = {t: i for i, t in enumerate(self.tgt_vocab)}

    def _new_net(self) -> CopyTransformer:
        return CopyTransformer(len(self.src_vocab), len(self.tgt_vocab), self.config).to(self.config["device"])

    def _example(self, src: list[str], tgt: list[str]):
        ids, kb = self._encode_src(src)
        inp, gold, cmask = self._encode_tgt(tgt, src, kb)
        return ids, kb, inp, gold, cmask

    def _loss(self, batch):
        dev = self.config["device"]
        b = len(batch)
        ls, lt = max(len(x[0]) for x in batch) or 1, max(len(x[2]) for x in batch)
        src = torch.zeros(b, ls, dtype=torch.long)
        kbm = torch.zeros(b, ls, dtype=torch.bool)
        tin = torch.zeros(b, lt, dtype=torch.long)
        gold = torch.zeros(b, lt, dtype=torch.long)
        valid = torch.zeros(b, lt, dtype=torch.bool)
        copy_gold = torch.zeros(b, lt, ls, dtype=torch.bool)
        for i, (ids, kb, inp, g, cm) in enumerate(batch):
            src[i, :len(ids)] = torch.tensor(ids)
            kbm[i, :len(kb)] = torch.tensor(kb, dtype=torch.bool)
            tin[i, :len(inp)] = torch.tensor(inp)
            for j, (gj, cj) in enumerate(zip(g, cm)):
                valid[i, j] = True
                if gj >= 0:
                    gold[i, j] = gj
                for p in cj:
                    copy_gold[i, j, p] = True
        src, kbm, tin, gold, valid, copy_gold = (x.to(dev) for x in (src, kbm, tin, gold, valid, copy_gold))
        memory, src_pad = self.net.encode(src)
        h, w = self.net.decode(tin, memory, src_pad)
        p_gen, p_copy = self.net.distributions(h, w, kbm, self.config["copy"], self.config["copy_gate"])
        is_copy = copy_gold.any(-1)
        p = torch.where(is_copy, torch.zeros_like(gold, dtype=p_gen.dtype), p_gen.gather(-1, gold.unsqueeze(-1)).squeeze(-1))
        if p_copy is not None:
            p = p + (p_copy * copy_gold.float()).sum(-1)
        nll = -torch.log(p.clamp_min(1e-9))
        return (nll * valid.float()).sum() / valid.float().sum()

    # ------------------------------------------------------------------ prediction

    def _queries(self, items: Sequence[Item], executor: Any) -> list[str | None]:
        out: list[str | None] = []
        self.net.eval()
        with torch.no_grad():
            for k in range(0, len(items), 64):
                out.extend(self._decode_batch(items[k:k + 64]))
        return out

    def _decode_batch(self, items: Sequence[Item]) -> list[str | None]:
        """Greedy decoding of several questions at once (each stops at its own ``</s>``)."""
        dev = self.config["device"]
        srcs = [self._src(it) for it in items]
        enc = [self._encode_src(s) for s in srcs]
        keep = [i for i, (ids, _) in enumerate(enc) if ids]
        out: list[str | None] = [None] * len(items)
        if not keep:
            return out
        ls = max(len(enc[i][0]) for i in keep)
        src = torch.zeros(len(keep), ls, dtype=torch.long)
        kbm = torch.zeros(len(keep), ls, dtype=torch.bool)
        for r, i in enumerate(keep):
            src[r, :len(enc[i][0])] = torch.tensor(enc[i][0])
            kbm[r, :len(enc[i][1])] = torch.tensor(enc[i][1], dtype=torch.bool)
        src, kbm = src.to(dev), kbm.to(dev)
        memory, src_pad = self.net.encode(src)
        tin = torch.full((len(keep), 1), self.tgt_index[BOS], dtype=torch.long, device=dev)
        toks: list[list[str]] = [[] for _ in keep]
        done = [False] * len(keep)
        for _ in range(self.config["max_len"]):
            h, w = self.net.decode(tin, memory, src_pad)
            p_gen, p_copy = self.net.distributions(h[:, -1:], w[:, -1:], kbm, self.config["copy"],
                                                   self.config["copy_gate"])
            g_val, g_best = p_gen[:, 0].max(dim=-1)
            if p_copy is not None:
                c_val, c_best = p_copy[:, 0].max(dim=-1)
            nxt = []
            for r in range(len(keep)):
                if done[r]:
                    nxt.append(0)
                elif p_copy is not None and float(c_val[r]) > float(g_val[r]):
                    toks[r].append(srcs[keep[r]][int(c_best[r])])
                    nxt.append(self.tgt_index[KB])
                else:
                    tok = self.tgt_vocab[int(g_best[r])]
                    if tok == EOS:
                        done[r] = True
                    else:
                        toks[r].append("UNK" if tok in SPECIALS else tok)
                    nxt.append(int(g_best[r]))
            if all(done):
                break
            tin = torch.cat([tin, torch.tensor(nxt, device=dev).unsqueeze(1)], dim=1)
        for r, i in enumerate(keep):
            words = join_pieces(toks[r]) if self.bpe is not None else toks[r]
            out[i] = detokenize(words, self.prefixes) if words else None
        return out

    # ------------------------------------------------------------------ files

    def _save_state(self, folder: Path) -> None:
        torch.save({k: v.detach().cpu() for k, v in self.net.state_dict().items()}, folder / "model.pt")
        (folder / "state.json").write_text(json.dumps({"src_vocab": self.src_vocab, "tgt_vocab": self.tgt_vocab,
                                                       "prefixes": self.prefixes, "history": self.history,
                                                       "bpe": self.bpe.merges if self.bpe is not None else None},
                                                      ensure_ascii=False), encoding="utf-8")

    def _load_state(self, folder: Path) -> None:
        state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        self.src_vocab, self.tgt_vocab, self.prefixes = state["src_vocab"], state["tgt_vocab"], state["prefixes"]
        self.history = state.get("history", [])
        self.bpe = BPE(state["bpe"]) if state.get("bpe") is not None else None
        self._indices()
        self.net = self._new_net()
        self.net.load_state_dict(torch.load(folder / "model.pt", map_location=self.config["device"], weights_only=True))
        self.net.eval()
