"""The real KGs of ``$KGQA_DATA_DIR/kgs`` (its README) and CK25's KG, as the generation tests
and ``bench/bench_generate_kgs.py`` open them: file (relative to the data folder) and the
options each needs (``--base`` for the two with relative IRIs)."""

from __future__ import annotations

KG_FILES = {
    "organs-it": "kgs/organs-it/organ-it-base.ttl",
    "autry-museum": "kgs/autry-museum/consolidated_data.n3",
    "libris-sab": "kgs/libris-sab/sab.ttl",
    "ammo-occupations": "kgs/ammo-occupations/ammo.ttl",
    "gocam-nod2": "kgs/gocam-nod2/MGI_MGI_2429397.ttl",
    "fso-hgde": "kgs/fso-hgde/STATTAB-SDMX-01-2A01+2011.1.nt.gz",
    "iaml-genres": "kgs/iaml-genres/genre-iaml.ttl",
    "ck25": "ck25/graphs/prod-inst.ttl",
}

#: the base IRI of the KGs whose files hold relative IRIs
BASES = {"libris-sab": "https://id.kb.se/", "gocam-nod2": "http://model.geneontology.org/"}


def kg_options(name: str) -> dict:
    return {"engine_options": {"base": BASES[name]}} if name in BASES else {}
