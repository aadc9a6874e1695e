"""The auth domain: users, sessions, API tokens, multi-factor authentication."""

from hausbox.auth import events, models
from hausbox.auth.service import AuthService
from hausbox.core.components import Component


def setup(engine) -> None:  # noqa: ANN001 - the Engine (import cycle otherwise)
    engine.auth = AuthService(
        engine.db, engine.bus, engine.settings, engine.secrets.jwt_signing_key, engine.config, engine.clock, engine.redactor.add_secret
    )


COMPONENT = Component(name="auth", events=events.EVENTS, entities=models.define_entities, routes="hausbox.auth.routes", setup=setup)
