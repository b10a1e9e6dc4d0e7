"""``racing-demon serve``: tables over WebSockets, every record durable before it is acknowledged.

The journal, the data folder, the index and the protocol stand on the standard library and
the package; only ``app``, ``lobby`` and ``archive`` import aiohttp (``racing-demon[serve]``).
"""
