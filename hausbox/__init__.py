"""hausbox: the home automation engine of a plug-in home hub.

The public surface is the REST + WebSocket API (see the interface spec). Inside, one ``Engine``
builds every service; domains live in their own packages (``auth``, ``system``, ``realtime`` ...)
with ``core`` holding the bus, database, settings, logging and clock.
"""

__version__ = "0.1.0"
