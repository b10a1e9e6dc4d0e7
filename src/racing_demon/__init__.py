"""Racing Demon: verifiable seeded-deal replay and audit."""
