"""Secret references: `$UPPER_SNAKE` spec values, resolved from the environment at run time."""

from __future__ import annotations

import os

from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.safety.redaction import register_secret


class MissingSecretError(RuntimeError):
    pass


@lazy_dataclass(frozen=True)
class SecretRef:
    """A secret named by its environment variable (``$NAME``), read only when needed."""

    env: str

    def resolve(self) -> str:
        value = os.environ.get(self.env)
        if not value:
            raise MissingSecretError(f"secret ${self.env} is not set in the environment")
        register_secret(self.env, value)
        return value

    def __repr__(self) -> str:  # never print a resolved value
        return f"SecretRef({self.env!r})"


SettingValue = SecretRef | str | int | float | bool
