"""Reading YAML config files with errors that name the file and line.

`load` for plain config files; `load_strict` for files whose mappings must carry their
line (for messages) and refuse duplicate keys (the server catalog).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from perftrack.core.errors import ConfigError

MAX_CONFIG_BYTES = 1024 * 1024  # a config file larger than this is certainly a mistake
# libyaml's parser when PyYAML has it (the same documents and errors, ~10x faster: a site
# build reads a few dozen study and matrix files)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes; not a config")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from None
    try:
        return yaml.load(text, Loader=_SAFE_LOADER)  # a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{where}: malformed YAML: {problem}") from None


class LineMapping(dict):
    """A YAML mapping that remembers the line it starts on (1-based)."""

    line: int = 0


class StrictLoader(yaml.SafeLoader):
    """Safe loader whose mappings carry their line and refuse duplicate keys."""


def _construct_mapping(loader: StrictLoader, node: yaml.MappingNode) -> LineMapping:
    loader.flatten_mapping(node)
    result = LineMapping()
    result.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str | int | float | bool | None):
            raise yaml.constructor.ConstructorError(
                None, None, "mapping keys must be plain words", key_node.start_mark
            )
        if key in result:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        result[key] = loader.construct_object(value_node, deep=True)
    return result


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_strict(text: str) -> Any:
    """Parse YAML text with `StrictLoader` (raises yaml.YAMLError)."""
    return yaml.load(text, Loader=StrictLoader)  # a SafeLoader subclass


def marked_message(where: str, err: yaml.MarkedYAMLError) -> str:
    """`FILE:LINE:COL: malformed YAML: problem (context at line N)` for a parse error."""
    mark = err.problem_mark or err.context_mark
    at = f"{where}:{mark.line + 1}:{mark.column + 1}" if mark else where
    message = f"{at}: malformed YAML: {_one_line(err.problem or err.context or 'unreadable')}"
    if err.context and err.problem:
        started = f" at line {err.context_mark.line + 1}" if err.context_mark else ""
        message += f" ({_one_line(err.context)}{started})"
    return message


def _one_line(text: str) -> str:
    return " ".join(text.split())
