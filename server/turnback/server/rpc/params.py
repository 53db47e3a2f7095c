"""Validation of JSON-RPC params.

Custom methods reach the server as plain JSON (pygls has no type for them), so
every field is checked here and a bad one is reported by its camelCase name —
the client's developer reads the message, not a Python traceback.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...errors import InvalidInput
from ...events import check_id
from ...fs.paths import utf8_text

MAX_STR = 4096  # longest free-text param (a label, a query, a path)
MAX_LIMIT = 10_000  # largest page a client may ask for


class Params:
    """The params object of one request, read field by field."""

    def __init__(self, raw: object, method: str) -> None:
        self.method = method
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise InvalidInput(
                f"{method}: params must be a JSON object with named fields, not {_json_type(raw)}"
            )
        self.raw: dict[str, Any] = raw

    def _bad(self, name: str, want: str) -> InvalidInput:
        value = self.raw.get(name)
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        return InvalidInput(f"{self.method}: param '{name}' must be {want}, got {shown}")

    def missing(self, name: str) -> InvalidInput:
        return InvalidInput(f"{self.method}: param '{name}' is required")

    def has(self, name: str) -> bool:
        return self.raw.get(name) is not None

    def string(self, name: str, *, required: bool = False, max_len: int = MAX_STR) -> str | None:
        """A string; None when absent (null counts as absent)."""
        value = self.raw.get(name)
        if value is None:
            if required:
                raise self.missing(name)
            return None
        if not isinstance(value, str):
            raise self._bad(name, "a string")
        if len(value) > max_len:
            raise InvalidInput(
                f"{self.method}: param '{name}' is {len(value)} characters; the limit is {max_len}"
            )
        if "\x00" in value:
            raise self._bad(name, "a string without NUL characters")
        if not utf8_text(value):
            raise self._bad(name, "text without lone surrogates (\\ud800-\\udfff)")
        return value

    def req_string(self, name: str, *, max_len: int = MAX_STR) -> str:
        value = self.string(name, required=True, max_len=max_len)
        assert value is not None
        if not value:
            raise InvalidInput(f"{self.method}: param '{name}' must not be empty")
        return value

    def ident(self, name: str, *, required: bool = False) -> str | None:
        """A session or event id (the characters the store accepts in file names)."""
        value = self.string(name, required=required, max_len=256)
        if value is None:
            return None
        try:
            return check_id(value, f"{self.method}: param '{name}'")
        except InvalidInput as exc:
            raise InvalidInput(exc.message) from None

    def req_ident(self, name: str) -> str:
        value = self.ident(name, required=True)
        assert value is not None
        return value

    def integer(self, name: str, default: int, *, minimum: int = 0, maximum: int = 2**53) -> int:
        value = self.raw.get(name)
        if value is None:
            return default
        # JSON has one number type; 10.0 is accepted as 10, 10.5 is not.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._bad(name, "an integer")
        if not minimum <= value <= maximum:
            raise self._bad(name, f"an integer from {minimum} to {maximum}")
        return value

    def opt_integer(self, name: str, *, minimum: int = 0, maximum: int = 2**53) -> int | None:
        if self.raw.get(name) is None:
            return None
        return self.integer(name, 0, minimum=minimum, maximum=maximum)

    def boolean(self, name: str, default: bool = False) -> bool:
        value = self.raw.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._bad(name, "true or false")
        return value

    def choice(self, name: str, choices: Iterable[str], default: str) -> str:
        options = tuple(choices)
        value = self.raw.get(name)
        if value is None:
            return default
        if not isinstance(value, str) or value not in options:
            raise self._bad(name, "one of " + ", ".join(repr(c) for c in options))
        return value

    def strings(self, name: str, *, max_items: int = 100_000) -> list[str] | None:
        value = self.raw.get(name)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self._bad(name, "an array of strings")
        if len(value) > max_items:
            raise InvalidInput(
                f"{self.method}: param '{name}' has {len(value)} items; the limit is {max_items}"
            )
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item or "\x00" in item or not utf8_text(item):
                raise InvalidInput(
                    f"{self.method}: param '{name}[{i}]' must be a non-empty string (no NUL, "
                    f"no lone surrogate), got {item!r}"[
                        :200
                    ]
                )
        return list(value)


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return type(value).__name__
