"""Benchmark building (outside the load -> execute -> score -> analyze -> report flow):
generalization splits (:mod:`kgqa.build.splits`), generalization levels
(:mod:`kgqa.build.levels`) and question annotation for seq2seq training
(:mod:`kgqa.build.annotate`). Only the CLI imports this package."""
