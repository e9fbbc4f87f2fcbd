"""The HTTP engine: `python -m sandbox serve` (server.py) puts an engine behind an HTTP API;
`open_engine("http", url=...)` (client.py) judges through one or more such servers."""
