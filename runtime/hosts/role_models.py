"""Which model a crew role's next session runs: its pool in turn, its model, or the crew's.

``RoleModels(crew_model, spec_name).for_role(role)`` is called once per session of a role:

- a role with a ``model_pool`` gets the pool's next model (round-robin per role, per process;
  the counter is thread-safe, so concurrent sessions of one role spread over the pool);
- otherwise the role's ``model``, otherwise the crew's model;
- with ``model_fallbacks`` the model is wrapped in a ``FallbackModel`` that tries them in order
  when a call fails with a retryable error.

Secret references are read when the session starts (``select_spec_model``). With
``SPECWIRE_MODEL`` set the override wins outright: one model, no pool and no fallbacks. A model
that cannot be loaded (an unknown id, a missing key or secret) is reported in one line on the
log, exactly like ``console.load_model``, and ``for_role`` returns ``None``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping

from specwire.runtime.hosts.console import load_model, stderr_log
from specwire.runtime.hosts.types import RoleConfig
from specwire.runtime.models.fallback import FallbackModel
from specwire.runtime.models.select import MODEL_ENV, ModelRef
from specwire.runtime.models.types import Model
from specwire.runtime.safety.secrets import SecretRef


class RoleModels:
    """Model selection for a crew's roles; one instance per process (it keeps the pools' turns).

    ``log`` receives complete lines ending in a newline (``stderr_log`` by default): load
    failures and, through ``FallbackModel``, each fallback taken.
    """

    def __init__(
        self,
        crew_model: str | SecretRef,
        spec_name: str,
        log: Callable[[str], None] = stderr_log,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._crew_model = crew_model
        self._spec_name = spec_name
        self._log = log
        self._environ = environ
        self._lock = threading.Lock()
        self._turns: dict[str, int] = {}

    def for_role(self, role: RoleConfig) -> Model | None:
        """The model for ``role``'s next session, or ``None`` after a one-line error."""
        primary = self._next_primary(role)
        if self._overridden():
            return self._load(primary)
        chosen = self._load(primary)
        if chosen is None:
            return None
        if not role.model_fallbacks:
            return chosen
        models = [chosen]
        for fallback in role.model_fallbacks:
            loaded = self._load(fallback)
            if loaded is None:
                return None
            models.append(loaded)
        return FallbackModel(models, self._log)

    def _next_primary(self, role: RoleConfig) -> ModelRef:
        if role.model_pool:
            with self._lock:
                turn = self._turns.get(role.name, 0)
                self._turns[role.name] = turn + 1
            return role.model_pool[turn % len(role.model_pool)]
        return role.model if role.model is not None else self._crew_model

    def _overridden(self) -> bool:
        env = os.environ if self._environ is None else self._environ
        return bool(env.get(MODEL_ENV, "").strip())

    def _load(self, model: ModelRef) -> Model | None:
        return load_model(model, self._spec_name, log=self._log, environ=self._environ)
