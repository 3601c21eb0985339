"""TOML files read into declarative pydantic models, with one wording for their errors.

``site.toml`` and rule-set files are written by hand on a casino's server: an error must
name the file and the field in words a person fixes without reading a traceback, and an
unknown field is refused (a misspelt ``trusted_proxy`` must not silently mean "none").
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection
from pathlib import Path
from typing import Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from roads.errors import InputError

Model = TypeVar("Model", bound=BaseModel)

#: Shared by every model of a hand-written file: unknown fields refused, TOML's own types
#: taken as they are (``"yes"`` is not a boolean, ``"8"`` is not a number), values frozen.
STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)

_WORDS = {
    "int_type": "must be an integer", "bool_type": "must be true or false",
    "string_type": "must be a string", "float_type": "must be a number",
    "list_type": "must be a list", "dict_type": "must be a table",
    "model_type": "must be a table", "int_from_float": "must be an integer",
}


def known(what: str, names: Collection[str]) -> AfterValidator:
    """A field's check that its value is one of ``names`` (a preset, a theme...): the error
    lists them, so the fix is in the message."""
    def check(value: str) -> str:
        if value not in names:
            raise ValueError(f"unknown {what} {value!r}; known: {', '.join(names)}")
        return value
    return AfterValidator(check)


def read_toml(path: Path, what: str, error: type[InputError] = InputError) -> dict[str, Any]:
    """The TOML document of ``path``; ``what`` says what kind of file it was meant to be."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: no such {what} file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read the {what} file: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: invalid TOML: {exc}") from None


def field_error(exc: ValidationError) -> str:
    """The first problem of a validation error in words, naming the field by its dotted
    path (``payouts.tie``, ``tables.T01.min_bet``)."""
    first = exc.errors(include_url=False)[0]
    field = ".".join(str(part) for part in first["loc"])
    kind = first["type"]
    if kind == "extra_forbidden":
        return f"unknown field {field}"
    if kind == "missing":
        return f"missing field {field}"
    if kind == "literal_error":
        return f"field {field} must be one of {first.get('ctx', {}).get('expected', '')}"
    if kind in _WORDS:
        return f"field {field} {_WORDS[kind]}"
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"field {field}: {message}" if field else message


def parse(model: type[Model], data: dict[str, Any], where: str,
          error: type[InputError] = InputError, context: dict[str, Any] | None = None
          ) -> Model:
    """``data`` validated by ``model``; an error names ``where`` (the file) and the field."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise error(f"{where}: {field_error(exc)}") from None
