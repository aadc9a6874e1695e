"""Web push subscriptions: a browser's ``PushSubscription`` (endpoint and keys) per user.

A user manages their own: registering an endpoint already known moves it to the caller (the
browser is theirs now: an endpoint is an unguessable URL only that browser has); deleting one of
another user's answers 404 (an administrator may delete any). Read from the database when a
message goes out, so a deleted user's subscriptions (their rows go with the user) are never used.
"""

from __future__ import annotations

import uuid
from typing import Any

from pony import orm

from hausbox.core.clock import Clock, iso_utc
from hausbox.core.errors import BadRequest, NotFound
from hausbox.notifications.webpush import check_subscription

MAX_PER_USER = 50


class PushSubscriptions:
    def __init__(self, db: orm.Database, clock: Clock):
        self._db = db
        self._clock = clock

    def add(self, user_id: str, endpoint: str, p256dh: str, auth: str) -> dict[str, Any]:
        endpoint, p256dh, auth = check_subscription(endpoint, p256dh, auth)
        with orm.db_session:
            row = self._db.PushSubscription.get(endpoint=endpoint)
            if row is not None:
                row.set(user_id=user_id, p256dh=p256dh, auth=auth)
            else:
                if self._db.PushSubscription.select(lambda s: s.user_id == user_id).count() >= MAX_PER_USER:
                    raise BadRequest(f"At most {MAX_PER_USER} push subscriptions per user")
                row = self._db.PushSubscription(id=str(uuid.uuid4()), user_id=user_id, endpoint=endpoint, p256dh=p256dh, auth=auth,
                                                created_at=self._clock.now_ms())  # fmt: skip
            return {"id": row.id, "endpoint": row.endpoint, "createdAt": iso_utc(row.created_at)}

    def remove(self, endpoint: str, user_id: str, is_admin: bool) -> None:
        with orm.db_session:
            row = self._db.PushSubscription.get(endpoint=endpoint.strip())
            if row is None or (row.user_id != user_id and not is_admin):
                raise NotFound("Push subscription not found")
            row.delete()

    def remove_by_id(self, subscription_id: str) -> None:
        with orm.db_session:
            self._db.PushSubscription.select(lambda s: s.id == subscription_id).delete(bulk=True)

    def all(self) -> list[dict[str, Any]]:
        with orm.db_session:
            return [
                {"id": s.id, "userId": s.user_id, "endpoint": s.endpoint, "p256dh": s.p256dh, "auth": s.auth}
                for s in self._db.PushSubscription.select().order_by(lambda s: (s.created_at, s.id))
            ]
