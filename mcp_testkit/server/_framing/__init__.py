"""The fake's HTTP answer, as both eras frame it: the `Response` (JSON or SSE, event ids, a stream's plan), SSE
frames, and a request refused before it runs (an HTTP status and a JSON-RPC error).

A layer below the eras and their faults' effects, above dispatch: the eras answer through it and the effects
build the same refusals, so it can be neither the transport's (which routes to the eras, above them) nor an era's.
"""
