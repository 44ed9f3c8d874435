"""The HTTP API: app factory, routes, security, error mapping, background jobs, the server."""

from mvlattice.http.app import create_app

__all__ = ["create_app"]
