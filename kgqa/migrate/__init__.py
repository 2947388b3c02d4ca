"""Migrating a QA dataset from one knowledge graph to another (Azmy et al. 2018, SimpleDBpediaQA,
section 4), for SimpleQuestions-style fact records and for full SPARQL gold queries.

Beside the flow (like :mod:`kgqa.build`): uses load, execute and the shared model/sparql.
One module per concept:

- :mod:`kgqa.migrate.kg`: every query sent to a KG (engine + result cache: resumable);
- :mod:`kgqa.migrate.links`: link files (owl:sameAs either direction, TSV, links in the
  target KG) and entity mapping with how each IRI was mapped (label fallback marked);
- :mod:`kgqa.migrate.paths`: path enumeration and the one-hop / disambiguation / redirection
  / complex classification;
- :mod:`kgqa.migrate.predicates`: candidate mappings with support, proposed rules with type
  constraints;
- :mod:`kgqa.migrate.rules`: the rules YAML;
- :mod:`kgqa.migrate.rewrite`: rewriting gold queries on token spans;
- :mod:`kgqa.migrate.agreement`: exact / partial / empty / failed / unverified;
- :mod:`kgqa.migrate.stats`: Table 2 / Table 3 shaped statistics;
- :mod:`kgqa.migrate.records`: SimpleQuestions-style inputs;
- :mod:`kgqa.migrate.pipeline`: :func:`migrate`; :mod:`kgqa.migrate.output`: files;
- :mod:`kgqa.migrate.run`: :func:`migrate_files`, from files to a written migration (what
  ``kgqa migrate`` calls).
"""

from kgqa.migrate.kg import KG
from kgqa.migrate.links import EntityMapper, Links
from kgqa.migrate.pipeline import Migration, MigrateOptions, migrate
from kgqa.migrate.records import read_triples
from kgqa.migrate.rules import Rule, RuleSet, load_rules, write_rules
from kgqa.migrate.run import Written, migrate_files

__all__ = ["KG", "Links", "EntityMapper", "Migration", "MigrateOptions", "migrate", "migrate_files", "Written", "read_triples", "Rule", "RuleSet",
           "load_rules", "write_rules"]
