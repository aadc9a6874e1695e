"""Errors a service raises to answer a request with a 4xx (or 5xx) JSON body ``{"error": ...}``."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    status = 400

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None, **extra: Any):
        super().__init__(message)
        self.message = message
        self.code = code
        self.extra = extra
        if status is not None:
            self.status = status

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.message}
        if self.code:
            body["code"] = self.code
        body.update(self.extra)
        return body

    def headers(self) -> dict[str, str]:
        """Response headers that go with the error (none but for a few statuses)."""
        return {}


class BadRequest(ApiError):
    status = 400


class Unauthorized(ApiError):
    status = 401


class Forbidden(ApiError):
    status = 403


class NotFound(ApiError):
    status = 404


class Conflict(ApiError):
    status = 409


class PayloadTooLarge(ApiError):
    status = 413


class TooManyRequests(ApiError):
    """429 with when to retry, both in the body (``retryAfterSeconds``) and as ``Retry-After``."""

    status = 429

    def __init__(self, message: str, *, retry_after_s: int):
        super().__init__(message, retryAfterSeconds=retry_after_s)
        self.retry_after_s = retry_after_s

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_s)}


class ServiceUnavailable(ApiError):
    status = 503


class InsufficientStorage(ApiError):
    status = 507
