"""The real server with rude extras the backbone must survive, chosen by environment variables.

Run as ``python -m tests.core.rude_server serve``:

- ``RUDE_STUCK_WORKER=1``: one more worker whose handler sleeps 30 s on every device value;
- ``RUDE_INLINE_ORDER=<equipment name>``: a view (an inline bus handler, so on the MQTT message
  path) that turns that equipment on whenever a button is pressed, the way a careless subscriber
  would: the integration's message loop must not wait on itself.
"""

from gevent import monkey

monkey.patch_all()

import os  # noqa: E402
import sys  # noqa: E402

import gevent  # noqa: E402

from hausbox import engine as engine_module  # noqa: E402
from hausbox.__main__ import main  # noqa: E402

STUCK_S = 30.0
_build = engine_module.Engine.__init__


def _with_rude_extras(self, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
    _build(self, *args, **kwargs)
    if os.environ.get("RUDE_STUCK_WORKER"):
        self.workers.create("stuck").on("device.data.updated", lambda _event: gevent.sleep(STUCK_S))
    target = os.environ.get("RUDE_INLINE_ORDER")
    if target:

        def order_inline(event: dict) -> None:
            if event.get("alias") == "action":
                equipment = next(e for e in self.equipments.all() if e.name == target)
                self.orders.execute(equipment.id, "state", "ON", {"kind": "manual"})

        self.bus.on("equipment.data.changed", order_inline)


engine_module.Engine.__init__ = _with_rude_extras

if __name__ == "__main__":
    sys.exit(main())
