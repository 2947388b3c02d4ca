"""Help that teaches: typed metavars (``DATASET``, ``RUN...``, ``FILE``) instead of ``<str>``, and
two or three examples under every command (``EXAMPLES``; a test checks every command has some).
"""

from __future__ import annotations

import inspect

#: Examples printed under each command's help, by command path ("evaluate", "kg load").
EXAMPLES: dict[str, list[str]] = {
    "evaluate": [
        "kgqa evaluate demo strong=kgqa/demo/data/runs/strong.json",
        "kgqa evaluate qald-9-test my_run.json -p gerbil -f md",
        "kgqa evaluate ck25 ck25_answers.json --kg ck25.ttl -p text2sparql -m set_F",
    ],
    "compare": [
        "kgqa compare demo A=runs/a.json B=runs/b.json",
        "kgqa compare qald-9-test a.json b.json c.json --baseline a -f latex -o table.tex",
    ],
    "demo": ["kgqa demo", "kgqa demo -f md"],
    "measures": ["kgqa measures", "kgqa measures | grep GEK"],
    "profiles": ["kgqa profiles"],
    "report": [
        "kgqa evaluate demo a.json b.json --save results.json",
        "kgqa report results.json -o report.html",
        "kgqa report results.json -f latex --by hops",
    ],
    "show": ["kgqa show results.json --id 7", "kgqa show demo runs/weak.json --id 12"],
    "audit": ["kgqa audit ck25 --kg ck25.ttl", "kgqa audit qald-9-test --kg http://127.0.0.1:8890/sparql"],
    "split": ["kgqa split qald-9-train --by uri -o splits/", "kgqa split lcquad.json --by template --seed 1 -o out/"],
    "levels": ["kgqa levels qald-9-train qald-9-test"],
    "annotate": ["kgqa annotate ck25 --kg ck25.ttl --mode tagged -o annotated.jsonl"],
    "degrade": ["kgqa degrade ck25 --kg ck25.ttl --transform T1 --rate 0.1 -o degraded.jsonl"],
    "sensitivity": ["kgqa sensitivity ck25 --kg ck25.ttl --rates 0.1,0.2 --seeds 3"],
    "axioms": ["kgqa axioms BLEU F1_Tri GEK3", "kgqa axioms F1_Sem --dataset ck25 --kg ck25.ttl"],
    "datasets": ["kgqa datasets list", "kgqa datasets info qald-9-test", "kgqa datasets validate my.json"],
    "datasets list": ["kgqa datasets list"],
    "datasets info": ["kgqa datasets info ck25"],
    "datasets validate": ["kgqa datasets validate my_dataset.json"],
    "datasets export": ["kgqa datasets export qald-9-test -o qald9.jsonl"],
    "kg": ["kgqa kg load ck25.ttl --store ck25-store", "kgqa kg info ck25-store"],
    "kg load": ["kgqa kg load dbpedia.nt.gz --store dbpedia-store"],
    "kg info": ["kgqa kg info ck25-store"],
    "cache": ["kgqa cache stats", "kgqa cache clear"],
    "cache stats": ["kgqa cache stats"],
    "cache clear": ["kgqa cache clear"],
    "system": ["kgqa system serve --run ck25_answers.json --protocol text2sparql",
               "kgqa system ask http://127.0.0.1:8000/ ck25 --protocol text2sparql -o answers.json"],
    "system ask": ["kgqa system ask http://127.0.0.1:8000/ ck25 --protocol text2sparql -o answers.json",
                   "kgqa system ask http://127.0.0.1:8000/gerbil qald-9-test --lang en -o run.json"],
    "system serve": ["kgqa system serve --run ck25_answers.json --protocol text2sparql --port 8000",
                     "kgqa system serve --python mysystem.py:answer --kg graph.ttl --protocol gerbil"],
    "baseline": ["kgqa baseline train retrieval train.jsonl -o models/retrieval",
                 "kgqa baseline predict models/retrieval test.jsonl -o run.jsonl"],
    "baseline train": ["kgqa baseline train retrieval train.jsonl -o models/retrieval",
                       "kgqa baseline train seq2seq train.jsonl --valid valid.jsonl --copy --seed 0 -o models/s2s",
                       "kgqa baseline train simple generated.jsonl --kg ck25.ttl -o models/simple"],
    "baseline predict": ["kgqa baseline predict models/s2s test.jsonl -o run.jsonl",
                         "kgqa baseline predict models/simple test.jsonl --kg ck25.ttl -o run.jsonl"],
    "web": ["kgqa web --store experiments.sqlite", "kgqa web --kg ck25=prod-inst.ttl --port 8800",
            "kgqa demo --web"],
    "web users": ["kgqa web users add alice --role participant --store challenge.sqlite --generate",
                  "kgqa web users list --store challenge.sqlite"],
    "web users add": ["kgqa web users add org --role organiser --store challenge.sqlite",
                      "kgqa web users add alice --role participant --store challenge.sqlite --generate"],
    "web users list": ["kgqa web users list --store challenge.sqlite"],
    "web users remove": ["kgqa web users remove alice --store challenge.sqlite"],
    "web users password": ["kgqa web users password alice --store challenge.sqlite --generate"],
    "worker": ["kgqa worker --store postgresql+psycopg://kgqa@db/kgqa --processes 4",
               "kgqa worker --store postgresql+psycopg://kgqa@db/kgqa --kg ck25=prod-inst.ttl"],
    "experiments": ["kgqa experiments list", "kgqa experiments show ID", "kgqa experiments export ID -o e.json"],
    "experiments list": ["kgqa experiments list --dataset ck25"],
    "experiments show": ["kgqa experiments show ID"],
    "experiments export": ["kgqa experiments export ID -o experiment.json"],
    "experiments delete": ["kgqa experiments delete ID"],
    "generate": ["kgqa generate --kg kgqa/demo/data/kg.ttl -n 50 --seed 1 -o generated.json",
                 "kgqa generate --kg prod-inst.ttl -n 200 --edges 1-3 --min-commonness -40 -o ck25-gen.json"],
    "paraphrases": ["kgqa paraphrases generated.json filled-annotation.csv -o with-paraphrases.json"],
    "migrate": ["kgqa migrate ck25 --target-kg target.nt --source-kg prod-inst.ttl --links links.nt "
                "--propose-rules rules.yaml -o migrated.json",
                "kgqa migrate ck25 --target-kg target.nt --links links.nt --rules rules.yaml -o migrated.json"],
}

#: Metavars by option name, where the type alone would say too little.
_OPTION_METAVARS = {
    "kg": "KG", "graph": "IRI", "profile": "PROFILE", "measures": "MEASURES", "measure": "MEASURE",
    "lang": "LANGS", "output": "FILE", "save": "FILE", "timeout": "SECONDS", "seed": "N", "seeds": "N",
    "store": "DIR", "baseline": "RUN", "id": "ID", "run": "RUN", "by": "KEY", "bins": "KEY=EDGES",
    "dataset-format": "FORMAT", "run-format": "FORMAT", "dataset-option": "KEY=VALUE",
    "run-option": "KEY=VALUE", "rates": "RATES", "rate": "RATE", "transform": "NAME",
}
_TYPE_METAVARS = {"integer": "N", "float": "X", "path": "PATH", "boolean": "BOOL"}

# Duck-typed on purpose: typer >= 0.2x vendors its own copy of click, so isinstance checks against
# the ``click`` package would miss its parameter classes.


def _option_metavar(p) -> str | None:
    if getattr(p, "is_flag", False) or getattr(p, "count", False):
        return ""
    desc = getattr(p, "type_descriptor", None)  # typer's own parameter model
    ptype = getattr(p, "type", None)  # click's
    choices = getattr(desc, "choices", None) if desc is not None else getattr(ptype, "choices", None)
    if choices:
        return "|".join(str(getattr(c, "value", c)) for c in choices)
    long = next((o[2:] for o in p.opts if o.startswith("--")), None)
    if long in _OPTION_METAVARS:
        return _OPTION_METAVARS[long]
    if desc is not None:
        ann = getattr(desc, "annotation", None)
        kind = {int: "integer", float: "float", bool: "boolean"}.get(ann, "path" if getattr(desc, "is_path", False) else "")
    else:
        kind = getattr(ptype, "name", "")
    return _TYPE_METAVARS.get(kind, (long or p.name or "VALUE").upper().replace("-", "_"))


def _argument_metavar(p) -> str:
    name = (p.name or "arg").upper()
    if name.endswith("S") and p.nargs != 1:
        name = name[:-1]
    return name


def polish(cmd, path: str = "") -> None:
    """Set typed metavars and examples on ``cmd`` and every subcommand (in place). Help is
    click's plain layout: it wraps at the terminal's width at word boundaries and puts a long
    option name on a line of its own, where rich's boxed layout cut names (``--exclude-engine-depen…``)."""
    if hasattr(cmd, "rich_markup_mode"):
        cmd.rich_markup_mode = None
    for p in cmd.params:
        if p.metavar is not None:
            continue
        if p.param_type_name == "argument":
            p.metavar = _argument_metavar(p)
            if hasattr(p, "display_type_rich"):  # typer prints <str> beside the name otherwise
                p.display_type_rich = lambda ctx, _n=p.nargs: "..." if _n != 1 else ""
        elif p.param_type_name == "option":
            p.metavar = _option_metavar(p)
    if cmd.help:
        # Docstrings wrap at 100 columns; help should rewrap to the terminal, not break mid-line.
        cmd.help = "\n\n".join(
            par if par.startswith("\b") else " ".join(line.strip() for line in par.splitlines())
            for par in inspect.cleandoc(cmd.help).split("\n\n")
        )
    get_help = getattr(cmd, "get_help_option", None)
    if get_help is not None and not getattr(get_help, "_kgqa", False):
        def _help_option(ctx, _orig=get_help):
            opt = _orig(ctx)
            if opt is not None and opt.metavar is None:
                opt.metavar = ""
            return opt

        _help_option._kgqa = True
        cmd.get_help_option = _help_option
    ex = EXAMPLES.get(path)
    if ex and not cmd.epilog:
        cmd.epilog = "Examples:\n\n" + "\n\n".join(f"  $ {e}" for e in ex)
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        polish(sub, f"{path} {name}".strip())
