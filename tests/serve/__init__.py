"""The server's tests: the journal, the tables it hosts, the real server over WebSockets."""
