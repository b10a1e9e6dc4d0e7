"""The rules of the game: pure values and functions; no I/O, no crypto library, no format."""
