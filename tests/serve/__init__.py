"""`racing-demon serve` from the outside: a player's client written from the protocol, and
tests that start the real server process and talk to it over loopback WebSockets."""
