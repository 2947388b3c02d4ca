"""``kgqa baseline train`` / ``kgqa baseline predict``: the reference systems of
:mod:`kgqa.baselines` (retrieval, seq2seq, simple)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from kgqa.cli.options import InputFormatOption, option
from rich.console import Console

from kgqa.model import InputError

err = Console(stderr=True)


def parse_config(pairs: list[str]) -> dict:
    """``["layers=2", "copy=false", "name=x"]`` -> ``{"layers": 2, "copy": False, "name": "x"}``
    (values read as JSON, else kept as strings)."""
    out = {}
    for p in pairs:
        key, sep, value = p.partition("=")
        if not sep or not key.strip():
            raise InputError("--set", f"expected KEY=VALUE, got {p!r}")
        try:
            out[key.strip().replace("-", "_")] = json.loads(value)
        except ValueError:
            out[key.strip().replace("-", "_")] = value
    return out


def train_cmd(
    kind: str = typer.Argument(..., help="retrieval, seq2seq, simple or e2e."),
    train: Optional[str] = typer.Argument(None, help="Training dataset: registry name or file (annotated with kgqa annotate for tagged inputs); e2e: none, it generates its own from --kg."),
    output: Annotated[Path, option("--output", help="Folder to save the trained system in.")] = ...,
    valid: Optional[str] = typer.Option(None, "--valid", help="Validation dataset (seq2seq keeps the best epoch on it)."),
    kg: Annotated[Optional[str], option("--kg", help="KG the system reads (simple, e2e: required; retrieval: label matching).")] = None,
    seed: Annotated[int, option("--seed", help="Random seed (training is deterministic on CPU for a given seed).")] = 0,
    device: Optional[str] = typer.Option(None, "--device", help="seq2seq: cpu or cuda."),
    preset: Optional[str] = typer.Option(None, "--preset", help="seq2seq: small (default) or paper (6 layers, 1024 hidden, dropout 0.3)."),
    copy: Optional[bool] = typer.Option(None, "--copy/--no-copy", help="seq2seq: with or without the copy mechanism (default: with)."),
    epochs: Optional[int] = typer.Option(None, "--epochs", help="seq2seq / simple: training epochs."),
    tokens: Optional[str] = typer.Option(None, "--tokens", help="seq2seq: word (default) or bpe (byte-pair pieces; --set bpe_merges=N, default 2000)."),
    lang: Annotated[str, option("--lang", help="Question language.")] = "en",
    setting: list[str] = typer.Option([], "--set", help="Any other option of the kind, KEY=VALUE (repeatable)."),
    format: InputFormatOption = None,
    minutes: Optional[float] = typer.Option(None, "--minutes", help="Time budget: no epoch is started that would end past it."),
    progress: Annotated[bool, option("--progress/--no-progress", help="Progress bar (terminal) or a line per epoch (log) on stderr.")] = True,
) -> None:
    """Train a reference system on TRAIN and save it to a folder (manifest.json + state).

    Kinds trained by epochs (seq2seq) write OUTPUT/checkpoint.pt after every epoch: the same
    command run again after an interruption (even kill -9) resumes from the last finished epoch."""
    from kgqa.baselines import train as train_system

    config = {"seed": seed, "lang": lang, "device": device, "preset": preset, "copy": copy, "epochs": epochs,
              "tokens": tokens, **parse_config(setting)}
    system = train_system(kind, train, valid, output=output, kg=kg, format=format, minutes=minutes, progress=progress,
                          **{k: v for k, v in config.items() if v is not None})
    m = system.manifest
    err.print(f"trained {kind} on {m['train']['items']} items of {m['train']['name']} ({m['input']} questions) in "
              f"{m['fit_seconds']:.1f} s (seed {seed}); saved to {output}", highlight=False)
    h = m.get("held_out")
    if h:
        err.print(f"held-back generated questions: {h['correct']}/{h['items']} answered exactly ({h['accuracy']:.1%})",
                  highlight=False)
    t = m.get("training")
    if t:
        err.print(f"{t['epochs_run']} epoch(s) run" + (f", best epoch by validation loss: {t['best_epoch']}" if valid else "")
                  + (f"; stopped early ({t['stopped']})" if t["stopped"] else ""), highlight=False)


def predict_cmd(
    model: Path = typer.Argument(..., help="Folder of a trained system (kgqa baseline train -o)."),
    dataset: str = typer.Argument(..., help="Dataset to answer: registry name or file."),
    output: Annotated[Path, option("--output", help="Run file to write (kgqa JSONL).")] = ...,
    kg: Annotated[Optional[str], option("--kg", help="Execute the queries on this KG and store the answers too.")] = None,
    timeout: Annotated[float, option("--timeout", help="Seconds per query when executing.")] = 30.0,
    format: InputFormatOption = None,
) -> None:
    """Answer every question of DATASET with a trained system; score the run with kgqa evaluate."""
    from kgqa.baselines import predict_to_file

    run, n = predict_to_file(model, dataset, output, kg=kg, format=format, timeout=timeout)
    answered = sum(1 for p in run.predictions if p.answer is not None)
    err.print(f"{n}/{len(run.predictions)} questions got a query" + (f", {answered} an answer" if kg else "")
              + f"; wrote {output}", highlight=False)
    trained, given = run.metadata["system"].get("input") or "not recorded", run.metadata.get("input") or "none"
    err.print(f"input: {given} questions (the system was trained on {trained}); scores of this run say "
              f"input:{given} in their signature", highlight=False)
    if trained != given:
        err.print(f"[yellow]warning:[/] the questions are not in the form the system was trained on ({given} vs "
                  f"{trained}): its figures are not those of its training setting", highlight=False)


def register(app: typer.Typer) -> None:
    baseline = typer.Typer(help="Train and run the reference systems (retrieval, seq2seq, simple) on any dataset.",
                           no_args_is_help=True)
    app.add_typer(baseline, name="baseline")
    baseline.command("train")(train_cmd)
    baseline.command("predict")(predict_cmd)
