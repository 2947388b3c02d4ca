"""Migrating a QA dataset from one knowledge graph to another (Azmy et al. 2018, SimpleDBpediaQA,
section 4), for SimpleQuestions-style fact records and for full SPARQL gold queries.

Beside the flow (like :mod:`kgqa.make`): uses load, execute and the shared model/sparql.
One module per concept:

- :mod:`kgqa.make.migrate.kg`: every query sent to a KG (engine + result cache: resumable);
- :mod:`kgqa.make.migrate.links`: link files (owl:sameAs either direction, TSV, links in the
  target KG) and entity mapping with how each IRI was mapped (label fallback marked);
- :mod:`kgqa.make.migrate.paths`: path enumeration and the one-hop / disambiguation / redirection
  / complex classification;
- :mod:`kgqa.make.migrate.predicates`: candidate mappings with support, proposed rules with type
  constraints;
- :mod:`kgqa.make.migrate.separate`: constraints that separate a merged target relation,
  measured on the aligned facts (issue 37);
- :mod:`kgqa.make.migrate.scale`: unit changes applied to FILTER constants and answers;
- :mod:`kgqa.make.migrate.rules`: the rules YAML;
- :mod:`kgqa.make.migrate.rewrite`: rewriting gold queries on token spans;
- :mod:`kgqa.make.migrate.agreement`: exact / partial / superset / empty / failed / unverified
  (only exact items go to the migrated dataset; the others to ``OUT.unverified.json``);
- :mod:`kgqa.make.migrate.stats`: Table 2 / Table 3 shaped statistics;
- :mod:`kgqa.make.migrate.records`: SimpleQuestions-style inputs;
- :mod:`kgqa.make.migrate.pipeline`: :func:`migrate`; :mod:`kgqa.make.migrate.output`: files;
- :mod:`kgqa.make.migrate.run`: :func:`migrate_files`, from files to a written migration (what
  ``kgqa migrate`` calls).
"""

from kgqa.make.migrate.kg import KG
from kgqa.make.migrate.links import EntityMapper, Links
from kgqa.make.migrate.pipeline import Migration, MigrateOptions, migrate
from kgqa.make.migrate.records import read_triples
from kgqa.make.migrate.rules import Rule, RuleSet, load_rules, write_rules
from kgqa.make.migrate.run import Written, migrate_files

__all__ = ["KG", "Links", "EntityMapper", "Migration", "MigrateOptions", "migrate", "migrate_files", "Written", "read_triples", "Rule", "RuleSet",
           "load_rules", "write_rules"]
