"""The statement finder: the clauses of a user's turns a later session should know.

Cues, clauses and markers in several languages (:mod:`.cues`, :mod:`.clauses`, :mod:`.lexicon`),
a small classifier over embeddings (:mod:`.classifier`, :mod:`.finder`), and what it learns from
(:mod:`.labelled`, :mod:`.training`; ``data/``: the shipped weights and labelled sessions).
"""
