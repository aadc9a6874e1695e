"""Who is calling: the result of checking a credential."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Principal:
    user_id: str
    username: str
    role: Literal["admin", "standard"]
    kind: Literal["jwt", "api_token"]
    session_id: str | None = None  # for a JWT: the login session it belongs to
    token_id: str | None = None  # for an API token: its id

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"
