"""Duplicate tournaments: one committed secret deals every table the same packs
(docs/tournament.md). ``plan`` makes and reads the plan published before play,
``contribute`` its entropy contributions and ``sheets`` its printable table sheets;
``simulate`` plays every table with bots; ``score`` verifies the tables' logs against
the plan and scores them with the ``matchpoints`` (docs/tournament-scoring.md).

Each ``racing-demon tournament`` subcommand is one call of a use case here, for any
caller, without click: ``organise`` (commit, contribute, plan, check), ``simulate``
(``run_simulate``) and ``score_run`` (``run_score``), with ``outputs`` for the files they
write. The reporters are passed in; ``report.tournament`` has the text and JSON ones, by
name, and ``report.standings`` and ``report.standings_html`` print the standings."""
