"""``racing-demon serve``: tables over WebSockets (docs/protocol.md, docs/serving.md).

Only ``app``, ``lobby`` and ``archive`` import the web stack (the ``serve`` extra); the
rest of this package stands on the standard library and racing_demon alone.
"""
