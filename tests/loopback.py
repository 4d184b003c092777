"""A configurable HTTP file server on 127.0.0.1 for download tests.

Serves a directory; can honour Range requests or not, cut the first transfers of a path
after some bytes, stall before answering, send HTML with status 200, and counts requests.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections import Counter
from pathlib import Path


class Behaviour:
    def __init__(self):
        self.ranges = True            # honour "Range: bytes=N-"
        self.cut_after: dict[str, int] = {}   # path -> bytes sent before the connection drops
        self.cuts_left: dict[str, int] = {}   # path -> how many transfers to cut
        self.stall_s = 0.0            # sleep before the body
        self.html: set[str] = set()   # paths answered with an HTML page and status 200
        self.delay_s = 0.0            # slow every body (to make fetches overlap)
        self.requests: Counter = Counter()
        self.ranges_seen: list[str] = []


def serve(root: Path, behaviour: Behaviour):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802 - http.server's naming
            rel = self.path.lstrip("/")
            behaviour.requests[rel] += 1
            if rel in behaviour.html:
                body = b"<!DOCTYPE html><html><body>Service unavailable</body></html>"
                self._send(200, body, "text/html; charset=utf-8")
                return
            path = root / rel
            if not path.is_file():
                self._send(404, b"not found", "text/plain")
                return
            data = path.read_bytes()
            start = 0
            rng = self.headers.get("Range")
            if rng and behaviour.ranges:
                behaviour.ranges_seen.append(rng)
                start = int(rng.split("=")[1].split("-")[0])
                if start >= len(data):
                    self._send(416, b"", "text/plain")
                    return
            if behaviour.stall_s:
                time.sleep(behaviour.stall_s)
            body = data[start:]
            self.send_response(206 if start else 200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.end_headers()
            if behaviour.cuts_left.get(rel, 0) > 0:
                behaviour.cuts_left[rel] -= 1
                self.wfile.write(body[: behaviour.cut_after[rel]])
                self.wfile.flush()
                self.close_connection = True
                return
            step = 1 << 16
            for i in range(0, len(body), step):
                if behaviour.delay_s:
                    time.sleep(behaviour.delay_s)
                self.wfile.write(body[i:i + step])

        def _send(self, code, body, ctype):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
