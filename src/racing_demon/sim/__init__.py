"""Computer players and simulated matches, through the table a server uses."""
