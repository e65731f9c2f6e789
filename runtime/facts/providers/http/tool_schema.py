"""The model's arguments checked against a provider tool's input schema (a JSON Schema subset).

The keywords are ``MEMORY_TOOL_SCHEMA_KEYWORDS`` (``codegen check`` refuses any other, so every
keyword a spec writes is enforced here). ``format`` is an annotation, as JSON Schema 2020-12
says by default. ``problem`` returns the first violation as one line (a JSON pointer and what is
wrong), or None.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "number": (int, float),
    "integer": (int, float),
}
# How deep a schema or an argument may nest before it is refused (hostile input).
MAX_DEPTH = 64


def _is_type(value: Any, name: str) -> bool:
    if name in ("number", "integer") and isinstance(value, bool):
        return False
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, _TYPES.get(name, ()))


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _equal(left: Any, right: Any) -> bool:
    """JSON equality (``1 == 1.0``, ``true != 1``)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    return _canonical(left) == _canonical(right)


def problem(value: Any, schema: Any, where: str = "", depth: int = 0) -> str | None:
    """The first way ``value`` breaks ``schema``, or None."""
    if depth > MAX_DEPTH:
        return f"{where or '/'}: nested too deeply"
    if schema is True or schema == {}:
        return None
    if schema is False:
        return f"{where or '/'}: not allowed"
    if not isinstance(schema, dict):
        return f"{where or '/'}: the tool's schema is not valid here"
    here = where or "/"
    for check in (_generic, _combined, _object, _array, _string, _number):
        found = check(value, schema, where, here, depth)
        if found is not None:
            return found
    return None


def _generic(value: Any, schema: dict[str, Any], where: str, here: str, depth: int) -> str | None:
    wanted = schema.get("type")
    if wanted is not None:
        names = wanted if isinstance(wanted, list) else [wanted]
        if not any(_is_type(value, name) for name in names):
            return f"{here}: expected {' or '.join(str(n) for n in names)}"
    if "const" in schema and not _equal(value, schema["const"]):
        return f"{here}: must be {_canonical(schema['const'])}"
    if "enum" in schema and not any(_equal(value, item) for item in schema["enum"]):
        return f"{here}: must be one of {_canonical(schema['enum'])}"
    return None


def _combined(value: Any, schema: dict[str, Any], where: str, here: str, depth: int) -> str | None:
    for sub in schema.get("allOf", ()):
        found = problem(value, sub, where, depth + 1)
        if found is not None:
            return found
    if "anyOf" in schema and all(
        problem(value, sub, where, depth + 1) is not None for sub in schema["anyOf"]
    ):
        return f"{here}: matches none of the allowed forms"
    if "oneOf" in schema:
        matching = sum(problem(value, sub, where, depth + 1) is None for sub in schema["oneOf"])
        if matching != 1:
            return f"{here}: must match exactly one form ({matching} match)"
    if "not" in schema and problem(value, schema["not"], where, depth + 1) is None:
        return f"{here}: matches a form that is not allowed"
    return None


def _object(value: Any, schema: dict[str, Any], where: str, here: str, depth: int) -> str | None:
    if not isinstance(value, dict):
        return None
    for name in schema.get("required", ()):
        if name not in value:
            return f"{here}: {name!r} is required"
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        path = f"{where}/{name}"
        if name in properties:
            found = problem(item, properties[name], path, depth + 1)
        elif extra is False:
            return f"{here}: unknown property {name!r}"
        else:
            found = problem(item, extra, path, depth + 1)
        if found is not None:
            return found
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        return f"{here}: needs at least {schema['minProperties']} properties"
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        return f"{here}: takes at most {schema['maxProperties']} properties"
    return None


def _array(value: Any, schema: dict[str, Any], where: str, here: str, depth: int) -> str | None:
    if not isinstance(value, list):
        return None
    if "minItems" in schema and len(value) < schema["minItems"]:
        return f"{here}: needs at least {schema['minItems']} items"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        return f"{here}: takes at most {schema['maxItems']} items"
    if schema.get("uniqueItems") is True and len({_canonical(v) for v in value}) != len(value):
        return f"{here}: items must be unique"
    if "items" in schema:
        for index, item in enumerate(value):
            found = problem(item, schema["items"], f"{where}/{index}", depth + 1)
            if found is not None:
                return found
    return None


def _string(value: Any, schema: dict[str, Any], where: str, here: str, depth: int) -> str | None:
    if not isinstance(value, str):
        return None
    length = len(value)  # JSON Schema counts characters (code points)
    if "minLength" in schema and length < schema["minLength"]:
        return f"{here}: at least {schema['minLength']} characters"
    if "maxLength" in schema and length > schema["maxLength"]:
        return f"{here}: at most {schema['maxLength']} characters"
    if "pattern" in schema:
        try:
            matched = re.search(schema["pattern"], value) is not None
        except re.error:
            return f"{here}: the tool's pattern cannot be used"
        if not matched:
            return f"{here}: does not match the pattern {schema['pattern']!r}"
    return None


def _number(value: Any, schema: dict[str, Any], where: str, here: str, depth: int) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if "minimum" in schema and value < schema["minimum"]:
        return f"{here}: at least {schema['minimum']}"
    if "maximum" in schema and value > schema["maximum"]:
        return f"{here}: at most {schema['maximum']}"
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        return f"{here}: more than {schema['exclusiveMinimum']}"
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        return f"{here}: less than {schema['exclusiveMaximum']}"
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and step > 0 and (value / step) % 1 != 0:
        return f"{here}: a multiple of {step}"
    return None
