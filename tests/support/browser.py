"""Headless Chromium for tests of the pages: Debian's ``chromium`` (CI installs it), started as
this machine's closed network needs (no background connections, no sandbox as root)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="needs chromium (Debian's chromium package; .ci/run installs it)")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars")


def chromium(profile: Path, *args: str) -> str:
    assert CHROMIUM is not None
    done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def dump_dom(profile: Path, url: str) -> str:
    """The DOM after the page loaded (scripts, had there been any, run)."""
    return chromium(profile, "--virtual-time-budget=2000", "--dump-dom", url)


def screenshot(profile: Path, url: str, target: Path, size: str = "1200,1600") -> Path:
    chromium(profile, f"--window-size={size}", f"--screenshot={target}", url)
    return target


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and each row's RGB(A) bytes of an 8-bit, non-interlaced PNG (what Chromium
    writes); a few lines of the PNG spec, so the test needs no imaging library."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, offset = {}, 8
    idat = b""
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IDAT":
            idat += body
        else:
            chunks[kind] = body
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[x] = (line[x] + best) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, [bytes(r) for r in rows] if channels == 3 else [
        b"".join(r[i:i + 3] for i in range(0, len(r), 4)) for r in rows]


def count_near(path: Path, rgb: tuple[int, int, int], tolerance: int = 40) -> int:
    """How many pixels of a screenshot are within ``tolerance`` of ``rgb`` on every channel."""
    _, _, rows = png_pixels(path)
    found = 0
    for row in rows:
        for i in range(0, len(row), 3):
            if all(abs(row[i + c] - rgb[c]) <= tolerance for c in range(3)):
                found += 1
    return found
