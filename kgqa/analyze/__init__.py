"""Analysis of evaluations: statistics (:mod:`~kgqa.analyze.stats`), breakdowns by question
characteristic (:mod:`~kgqa.analyze.characteristics`, :mod:`~kgqa.analyze.breakdown`),
paraphrase robustness (:mod:`~kgqa.analyze.paraphrase`), comparison of systems
(:mod:`~kgqa.analyze.comparison`) and the error taxonomy (:mod:`~kgqa.analyze.taxonomy`)."""
