"""Duplicate tournaments: one committed secret deals every table the same packs
(docs/tournament.md). ``plan`` makes and reads the plan published before play."""
