"""The server's transports: HTTP (the ASGI app that routes to an era, the response and its framing, requests
refused before the app) and stdio.
"""
