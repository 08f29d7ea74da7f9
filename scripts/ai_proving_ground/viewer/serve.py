"""``apg view``: the pages on a local server (127.0.0.1 only), serving nothing but the pages.

A campaign directory also holds what agents wrote, links included; a plain file server would
follow a link planted there to any file of this machine. This one answers only the report's own
pages (report.html, report.md, attempts/NNNN.html), read as regular files inside the directory.
"""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ai_proving_ground.viewer.load import read_evidence

PAGE = re.compile(r"\A/(?:(report\.html|report\.md|results\.html)|(attempts/[0-9]{4,}\.html))\Z")
TYPES = {".html": "text/html; charset=utf-8", ".md": "text/markdown; charset=utf-8"}


def page_path(url_path: str, index: str) -> str | None:
    """The page a request names (``/`` is ``index``), or None for anything else."""
    path = unquote(urlsplit(url_path).path)
    if path == "/":
        path = f"/{index}"
    return path.lstrip("/") if PAGE.match(path) else None


def handler_for(root: Path, index: str) -> type[http.server.BaseHTTPRequestHandler]:
    class Pages(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            relative = page_path(self.path, index)
            evidence = read_evidence(root, root / relative) if relative else None
            if evidence is None or evidence.text is None or evidence.note:
                self.send_error(404, "not a page of this report")
                return
            body = evidence.text.encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", TYPES[Path(relative or "").suffix])
            self.send_header("Content-Length", str(len(body)))
            # The pages are self-contained: forbid anything they might be made to fetch.
            self.send_header("Content-Security-Policy", "default-src 'none'; style-src "
                             "'unsafe-inline'; img-src data:")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet: the command says where it serves, once

    return Pages


def serve(root: Path, index: str, port: int = 0,
          ready: Callable[[str], None] | None = None,
          stop: threading.Event | None = None) -> None:
    """Serve until interrupted (or ``stop`` is set); ``ready`` gets the URL once listening."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler_for(root, index))
    try:
        host, bound = server.server_address[:2]
        if ready is not None:
            ready(f"http://{host!s}:{bound}/")
        if stop is None:
            server.serve_forever()
            return
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        stop.wait()
        server.shutdown()
        thread.join()
    finally:
        server.server_close()
