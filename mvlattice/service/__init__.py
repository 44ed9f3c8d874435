"""The command-line interface (and later the HTTP API) over the Python API."""
