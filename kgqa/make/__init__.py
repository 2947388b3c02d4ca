"""Benchmark building (outside the load -> execute -> score -> analyze -> report flow):
generalization splits (:mod:`kgqa.make.splits`), generalization levels
(:mod:`kgqa.make.levels`) and question annotation for seq2seq training
(:mod:`kgqa.make.annotate`). Only the CLI imports this package."""
