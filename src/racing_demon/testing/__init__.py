"""Support for tests and benchmarks: random players and playouts. Not the product."""
