"""Duplicate tournaments: one committed secret deals every table the same packs
(docs/tournament.md). ``plan`` makes and reads the plan published before play,
``contribute`` its entropy contributions and ``sheets`` its printable table sheets;
``simulate`` plays every table with bots; ``score`` verifies the tables' logs against
the plan and scores them with the ``matchpoints`` (docs/tournament-scoring.md). The
standings are printed by ``report.tournament`` and ``report.standings_html``."""
