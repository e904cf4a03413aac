"""SecretStore: the secret values seen so far, to scrub from logs and results.

Apart from acp_lsp.config so that the log filter installed at start-up does not import
pydantic.
"""

from __future__ import annotations

from typing import Any


class SecretStore:
    """Remembers expanded secret values so logs and results can be scrubbed of them."""

    def __init__(self) -> None:
        self._values: set[str] = set()

    def add(self, value: str) -> None:
        if len(value) >= 4:
            self._values.add(value)

    def redact(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, "***")
        return text

    def redact_json(self, value: Any) -> Any:
        """``value`` with every string scrubbed (error data, status payloads)."""
        if not self._values:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {k: self.redact_json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.redact_json(v) for v in value]
        return value

    def __contains__(self, value: str) -> bool:
        return value in self._values
