"""YAML in: loading with positions, so errors can say file:line:col: $.path (yamldump writes it)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import yaml

from ai_proving_ground.errors import ApgError

# The C loader is several times faster on large fixture sets; PyYAML may be built without it.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


PathPart = str | int


def json_path(parts: Sequence[PathPart]) -> str:
    """Render a path the way check-jsonschema does: ``$.a.b[0]``."""
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


class YamlDocument:
    """Parsed data, plus the node tree that remembers where each value came from.

    The tree is composed only when a position is asked for (an error message, fixture export):
    on a fixture of 50,000 items building it costs several times what building the data does.
    """

    __slots__ = ("_root", "_text", "data", "path")

    def __init__(self, path: Path, data: Any, root: yaml.Node | None = None,
                 text: str | None = None) -> None:
        self.path = path
        self.data = data
        self._root = root
        self._text = text  # composed on demand when given; ``root`` is then ignored

    @property
    def root(self) -> yaml.Node | None:
        if self._text is not None:
            self._root = _compose(self._text)
            self._text = None
        return self._root

    def position(self, parts: Sequence[PathPart]) -> tuple[int, int]:
        """1-based line and column of the deepest node that ``parts`` reaches."""
        node = self.root
        best = (1, 1)
        if node is not None:
            best = (node.start_mark.line + 1, node.start_mark.column + 1)
        for part in parts:
            child: yaml.Node | None = None
            if isinstance(node, yaml.MappingNode):
                for key, value in node.value:
                    if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                        child = value
                        break
            elif (isinstance(node, yaml.SequenceNode) and isinstance(part, int)
                  and 0 <= part < len(node.value)):
                child = node.value[part]
            if child is None:
                break
            node = child
            best = (node.start_mark.line + 1, node.start_mark.column + 1)
        return best

    def where(self, parts: Sequence[PathPart]) -> str:
        """``file:line:col: $.path`` for a message."""
        line, col = self.position(parts)
        return f"{self.path}:{line}:{col}: {json_path(parts)}"


def load_document(path: Path, token: str = "APG_YAML_INVALID",
                  text: str | None = None) -> YamlDocument:
    """Parse one YAML file (or ``text`` read from it); errors name the file, line and column."""
    try:
        if text is None:
            text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ApgError(token, f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise ApgError(token, f"{path}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:  # a directory, no permission: the path names no readable file
        raise ApgError(token, f"{path}: cannot be read ({exc.strerror}); name a YAML file") from None
    built = _known_data(text)
    if built is not _UNUSUAL:
        return YamlDocument(path=path, data=built, text=text)
    with _yaml_errors(token, str(path)):
        root, data = _compose_and_construct(text)
    return YamlDocument(path=path, data=data, root=root)


@contextmanager
def _yaml_errors(token: str, source: str) -> Iterator[None]:
    """PyYAML's errors as ``token`` with ``source:line:col: $: invalid YAML: problem``."""
    try:
        yield
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise ApgError(token, f"{source}:{line}:{col}: $: invalid YAML: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ApgError(token, f"{source}:1:1: $: invalid YAML: {exc}") from None


def _compose_and_construct(text: str) -> tuple[yaml.Node | None, Any]:
    """One parse gives both the node tree (for positions) and the data built from it."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    return root, data


def _compose(text: str) -> yaml.Node | None:
    loader = _Loader(text)
    try:
        root: yaml.Node | None = loader.get_single_node()
    finally:
        loader.dispose()
    return root


# ----------------------------------------------------------------- data straight from events
# Composing a node tree and constructing from it runs PyYAML's Python resolver and constructor
# per node, most of a large load. Plain documents (no anchors, aliases, explicit tags, merge keys
# or complex keys: everything fixtures and configs hold) are built here from the parser's events
# with the same resolver table and scalar constructors, so the data is the same; anything else,
# invalid YAML included, goes the full way, which gives the data or the error as before.

_UNUSUAL: Any = object()
_NO_KEY: Any = object()
_STR = "tag:yaml.org,2002:str"
# Tags whose constructors need nothing but the scalar's text; any other resolved tag is unusual.
_SCALAR_TAGS = frozenset({"tag:yaml.org,2002:null", "tag:yaml.org,2002:bool",
                          "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                          "tag:yaml.org,2002:timestamp"})
_PLAIN = {first: tuple(resolvers)
          for first, resolvers in _Loader.yaml_implicit_resolvers.items()}
_FAST = not _Loader.yaml_path_resolvers and None not in _PLAIN


class _Unusual(Exception):
    """This document needs the full loader."""


def _resolved(loader: Any, value: str, resolvers: tuple[Any, ...]) -> Any:
    """What the resolver and constructor make of an untagged plain scalar."""
    for tag, regexp in resolvers:
        if regexp.match(value):
            if tag == _STR:
                return value
            if tag not in _SCALAR_TAGS:
                raise _Unusual(tag)
            return loader.yaml_constructors[tag](loader, yaml.ScalarNode(tag, value))
    return value


# Plain documents' data already built, by their whole text: a campaign reads the same module
# info files, fixture fragments and baseline content every attempt (tens of files, a few ms of
# CPU each attempt). Keyed by the text itself, never by a path or a file's times, so a file
# that changed is built anew whoever changed it; each caller gets its own copy.
_KNOWN_LIMIT = 8 << 20  # characters of text kept, oldest dropped first
_KNOWN_ONE = 256 << 10  # larger documents are always built
_known: dict[str, Any] = {}
_known_chars = 0
_known_lock = threading.Lock()


def _known_data(text: str) -> Any:
    """``_data_from_events(text)``, built once per text (a copy each call)."""
    global _known_chars
    with _known_lock:
        data = _known.get(text, _UNUSUAL)
    if data is not _UNUSUAL:
        return _copy(data)
    data = _data_from_events(text)
    if data is _UNUSUAL or len(text) > _KNOWN_ONE:
        return data
    with _known_lock:
        if text not in _known:
            while _known and _known_chars + len(text) > _KNOWN_LIMIT:
                _known_chars -= len(next(iter(_known)))
                del _known[next(iter(_known))]
            _known[text] = data
            _known_chars += len(text)
    return _copy(data)


def _copy(value: Any) -> Any:
    """A copy of plain data: mappings and lists anew, scalars (immutable) shared."""
    kind = type(value)
    if kind is dict:
        return {key: _copy(item) for key, item in value.items()}
    if kind is list:
        return [_copy(item) for item in value]
    return value


def _data_from_events(text: str) -> Any:
    """The document's data, or ``_UNUSUAL`` when only the full loader may build it."""
    if not _FAST:
        return _UNUSUAL
    loader = _Loader(text)
    try:
        return _build(loader)
    except (_Unusual, yaml.YAMLError):
        return _UNUSUAL
    finally:
        loader.dispose()


def _build(loader: Any) -> Any:
    """One pass over the events; written for speed, as it runs once per item of a large fixture."""
    get = loader.get_event
    scalar, mapping, sequence = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    closing = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    plain = _PLAIN
    seen: dict[str, Any] = {}  # plain scalars already resolved (to immutable values)
    get()  # StreamStartEvent
    if type(get()) is yaml.StreamEndEvent:
        return None
    # The open collection, whether it is a list, and the key awaiting its value (mappings).
    container: Any = []
    is_list, key = True, _NO_KEY
    stack: list[tuple[Any, bool]] = []
    while True:
        event = get()
        kind = type(event)
        if kind is scalar:
            if event.anchor is not None or event.tag is not None:
                raise _Unusual("anchor or tag")
            value = event.value
            if event.implicit[0]:
                resolvers = plain.get(value[:1])
                if resolvers is not None:
                    done = seen.get(value, _NO_KEY)
                    if done is _NO_KEY:
                        done = seen[value] = _resolved(loader, value, resolvers)
                    value = done
            if is_list:
                container.append(value)
            elif key is _NO_KEY:
                key = value
            else:
                container[key] = value
                key = _NO_KEY
        elif kind is mapping or kind is sequence:
            if event.anchor is not None or event.tag is not None:
                raise _Unusual("anchor or tag")
            value = {} if kind is mapping else []
            if is_list:
                container.append(value)
            elif key is _NO_KEY:
                raise _Unusual("a complex key")
            else:
                container[key] = value
                key = _NO_KEY
            stack.append((container, is_list))
            container, is_list = value, kind is sequence
        elif kind in closing:
            container, is_list = stack.pop()
        elif kind is yaml.DocumentEndEvent:
            break
        else:  # an alias
            raise _Unusual(kind.__name__)
    if type(get()) is not yaml.StreamEndEvent:
        raise _Unusual("several documents")
    return container[0]


def load_yaml(path: Path, token: str = "APG_YAML_INVALID") -> Any:
    """Parse one YAML file and return its data."""
    return load_document(path, token).data


def describe_kind(value: Any) -> str:
    """How an error message names a value's type: null, a mapping, a list, a boolean, a str..."""
    if value is None:
        return "null"
    return {dict: "a mapping", list: "a list", bool: "a boolean"}.get(
        type(value), f"a {type(value).__name__}")


def fail_at(doc: YamlDocument, token: str, parts: Sequence[PathPart], message: str) -> NoReturn:
    """Raise ``token`` with ``file:line:col: $.path: message``."""
    raise ApgError(token, f"{doc.where(parts)}: {message}", exit_code=1)


def require_mapping(doc: YamlDocument, token: str, parts: Sequence[PathPart],
                    value: Any) -> dict[str, Any]:
    """``value`` must be a mapping with string keys."""
    if not isinstance(value, dict):
        fail_at(doc, token, parts, f"must be a mapping, not {describe_kind(value)}")
    for key in value:
        if not isinstance(key, str):
            fail_at(doc, token, parts, f"keys must be strings; {key!r} is not")
    return value


def loads(text: str, token: str = "APG_YAML_INVALID", source: str = "<text>") -> Any:
    """Parse YAML text (no position tracking); invalid YAML is ``token`` naming ``source``."""
    with _yaml_errors(token, source):
        return yaml.load(text, Loader=_Loader)
