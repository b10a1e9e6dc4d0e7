"""Duplicate tournaments: one committed secret deals every table the same packs
(docs/tournament.md). ``plan`` makes and reads the plan published before play,
``contribute`` its entropy contributions and ``sheets`` its printable table sheets;
``simulate`` plays every table with bots; ``score`` and ``standings_html`` score the
tables' logs against the plan (docs/tournament-scoring.md)."""
