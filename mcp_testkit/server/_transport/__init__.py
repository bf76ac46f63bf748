"""The server's transports: HTTP (the ASGI app that routes a request to its era, the request before and around its
era, and the heads refused before the app) and stdio. The top of the request's path: each is handed a getter of the
server's current state, and the HTTP answer it sends is the framing's (`server/_framing/`).
"""
