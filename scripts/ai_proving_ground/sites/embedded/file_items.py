"""What Drupal's field items fill in on save for references, files and images.

A reference given by id carries its target's UUID too (the probe reports both), a file entity
made from a URI gets its file name (``File::preCreate``), and an image item without dimensions
gets the image's, read from the file (``ImageItem::preSave``). The dimensions come from the
image's header: PNG, GIF, JPEG and WebP, the formats core's image field accepts by default.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from ai_proving_ground.sites.base import EntityRecord

FILE_TARGET = {"file": "file", "image": "file"}


class EntityReader(Protocol):
    """Read access to entities by serial id, as reference items need it."""

    def entity_by_id(self, entity_type: str, entity_id: int) -> EntityRecord | None: ...


def reference_target(item: Mapping[str, Any], field_type: str, storage: Mapping[str, Any],
                     entities: EntityReader) -> EntityRecord | None:
    """The entity an item's ``target_id`` names, if it exists."""
    target_type = FILE_TARGET.get(field_type) or (storage.get("settings") or {}).get(
        "target_type", "node")
    try:
        target_id = int(str(item.get("target_id")))
    except ValueError:
        return None
    return entities.entity_by_id(str(target_type), target_id)


def complete_reference(item: dict[str, Any], field_type: str, storage: Mapping[str, Any],
                       entities: EntityReader, public: Path | None) -> None:
    """An item given by ``target_id`` as Drupal reads it back: an image's size filled in, and
    the target's UUID after the stored properties (a missing target saves, without one)."""
    target = reference_target(item, field_type, storage, entities)
    if field_type == "image":
        with_image_size(item, target, public)
    if target is not None and "target_uuid" not in item:
        item["target_uuid"] = target.uuid


def with_image_size(item: dict[str, Any], target: EntityRecord | None,
                    public: Path | None) -> None:
    """Fill ``width`` and ``height`` from the image file, as Drupal does when they are empty."""
    if (item.get("width") and item.get("height")) or target is None or public is None:
        return
    uri = str(((target.fields.get("uri") or [{}])[0]).get("value", ""))
    size = image_size(public_path(uri, public)) if uri.startswith("public://") else None
    if size is not None:
        item["width"], item["height"] = size


def public_path(uri: str, public: Path) -> Path | None:
    """The file a ``public://`` URI names, or None when it would leave the public directory."""
    # Lazy for start-up time: fsutil pulls in tempfile, which config:get must not load.
    from ai_proving_ground.fsutil import is_within

    root = public.resolve()
    path = root.joinpath(*PurePosixPath(uri.removeprefix("public://")).parts).resolve()
    return path if is_within(path, root) else None


def image_size(path: Path | None) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, JPEG or WebP header; None if unreadable or another kind."""
    if path is None:
        return None
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return struct.unpack("<HH", head[6:10])
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp_size(head)
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(head)
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a" and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(head) >= 30:
        return (int.from_bytes(head[24:27], "little") + 1,
                int.from_bytes(head[27:30], "little") + 1)
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    """The frame header's size: walk the markers to the first SOFn (not DHT, JPG or DAC)."""
    offset = 2
    while offset + 9 <= len(head):
        if head[offset] != 0xFF:
            return None
        marker = head[offset + 1]
        length = struct.unpack(">H", head[offset + 2:offset + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", head[offset + 5:offset + 9])
            return width, height
        offset += 2 + length
    return None


def file_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """A file entity's values with the file name its URI gives, when none is set."""
    filled = dict(values)
    if not filled.get("filename") and filled.get("uri"):
        uri = filled["uri"]
        first = uri[0] if isinstance(uri, list) and uri else uri
        raw = first.get("value") if isinstance(first, dict) else first
        filled["filename"] = PurePosixPath(str(raw)).name
    return filled
