"""The web console: plain ES modules and CSS under ``static/``, served by the engine (``serve.py``)
and talking only to the public REST API and the WebSocket, like any other client."""
