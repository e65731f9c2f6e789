"""What a remote fact provider raises. Every class is a ``StoreError`` (its message is safe to
show to the model: it never carries a token, a URL's credentials or memory content).

``ProviderError``               base: ``code`` (the envelope's), ``retryable``, ``http_status``.
├─ ``ProviderInvalidRequest``   400/413/422: refused; also an ``InvalidRequestError``.
├─ ``ProviderAuthError``        401: the token is missing or not a tenant's.
├─ ``ProviderScopeError``       403: the request named a scope its token cannot reach.
├─ ``ProviderConflict``         409: an ``operationId`` reused with a different request.
├─ ``ProviderUnavailable``      transport failures, 429, 5xx after every retry; the deadline hit
│  └─ ``ProviderTimeout``       on a read (nothing was changed by a read).
├─ ``ProviderUncertain``        a write whose outcome is unknown (``status == "uncertain"``): it
│                               may or may not have been applied. Retrying it with the same
│                               ``operation_id`` is safe within the server's de-dup window.
└─ ``ProviderProtocolError``    the server's answer broke the contract (oversized, not JSON,
                                wrong shape or version).
"""

from __future__ import annotations

from typing import Any, Literal

from specwire.runtime.core.errors import StoreError
from specwire.runtime.facts.model import InvalidRequestError


class ProviderError(StoreError):
    """A remote provider failed; ``code`` is the error envelope's (or a client-side one)."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "provider_error",
        retryable: bool = False,
        http_status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.retryable = retryable
        self.http_status = http_status


class ProviderInvalidRequest(ProviderError, InvalidRequestError):
    """The provider refused the request as malformed, too large or not applicable."""


class ProviderCapExceeded(ProviderInvalidRequest):
    """A keyed write refused past its ``maxBytes`` (``cap_exceeded``): the sizes the service
    gave, in bytes. ``HttpFactProvider.retain`` raises it as ``CapExceededError``."""

    def __init__(
        self, message: str, *, cap_bytes: int, current_size: int, projected_size: int, **kw: Any
    ) -> None:
        super().__init__(message, **kw)
        self.cap_bytes = cap_bytes
        self.current_size = current_size
        self.projected_size = projected_size


class ProviderAuthError(ProviderError):
    """The memory service did not accept the token (401)."""


class ProviderScopeError(ProviderError):
    """The request named a tenant, spec or session its token may not reach (403)."""


class ProviderConflict(ProviderError):
    """An ``operationId`` was reused with a different request (409)."""


class ProviderUnavailable(ProviderError):
    """The provider could not be reached or kept failing (transport, 429, 5xx) within the
    deadline. For a write this is raised only when the request certainly never arrived (the
    connection was refused) or the server answered with an error: nothing was applied."""


class ProviderTimeout(ProviderUnavailable):
    """A read ran out of its deadline."""


class ProviderUncertain(ProviderError):
    """A write may or may not have been applied: its request was sent, then the connection
    failed or the deadline passed before an answer came (after every retry allowed).

    ``status`` is always ``"uncertain"``; ``operation`` is ``"retain"`` or ``"forget"``;
    ``operation_id`` is the id the write carried (None when it carried none): sending the same
    request again with that id is safe, the server replays the first outcome.
    """

    status: Literal["uncertain"] = "uncertain"

    def __init__(self, message: str, *, operation: str, operation_id: str | None) -> None:
        super().__init__(message, code="uncertain", retryable=operation_id is not None)
        self.operation = operation
        self.operation_id = operation_id


class ProviderProtocolError(ProviderError):
    """The server's answer broke the contract."""
