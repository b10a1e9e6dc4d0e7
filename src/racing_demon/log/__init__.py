"""The signed event log's building blocks: canonical JSON, strict reading, keys, signatures.

The record model, the table that writes logs and the verifier that replays them build on
these (docs/log-format.md).
"""
