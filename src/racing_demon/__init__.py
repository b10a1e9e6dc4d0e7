"""Racing Demon: verifiable seeded-deal replay and audit."""

# The one place the version is written: pyproject.toml reads it from here, and
# `racing-demon --version` prints it without loading the installed package's metadata.
__version__ = "0.1.0"
