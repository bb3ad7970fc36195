"""Pages for test_cards.c: a loopback web server that the preview-card job
fetches from. Usage: card_pages.py PORT DIR; writes DIR/ready once it
listens. Each path is one case (see PAGES and the handler)."""
import http.server
import os
import socketserver
import struct
import sys
import threading
import time
import zlib

PORT = int(sys.argv[1])
DIR = sys.argv[2]
BASE = "http://pages.test"


def png(w, h):
    """A small RGB PNG, enough for the image pipeline to decode."""
    raw = b"".join(b"\x00" + b"".join(bytes((x * 16 % 256, y * 16 % 256, 128))
                                      for x in range(w)) for y in range(h))

    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


PAGES = {
    "/og": """<!DOCTYPE html><html lang="en"><head><title>Fallback</title>
<meta property="og:title" content="An article">
<meta property="og:description" content="About things &amp; stuff">
<meta property="og:image" content="/img.png">
<meta property="og:site_name" content="Pages">
<meta name="author" content="Ann Author">
<meta property="article:published_time" content="2026-01-02T03:04:05+01:00">
</head><body><p>text</p></body></html>""",
    "/oembed": """<!DOCTYPE html><html><head><title>A video page</title>
<link rel="alternate" type="application/json+oembed" href="/oembed.json">
</head><body></body></html>""",
    "/noindex": """<!DOCTYPE html><html><head><title>Secret</title>
<meta name="robots" content="noindex, nofollow">
<meta property="og:title" content="Do not show">
</head><body></body></html>""",
    "/notitle": "<!DOCTYPE html><html><head></head><body>nothing</body></html>",
}

OEMBED = ('{"type":"video","version":"1.0","title":"A video","author_name":"Vid Maker",'
          '"author_url":"http://pages.test/maker","provider_name":"Vids",'
          '"provider_url":"http://pages.test/","width":480,"height":270,'
          '"html":"<iframe src=\\"http://pages.test/embed/1\\" width=\\"480\\" height=\\"270\\"'
          ' onload=\\"evil()\\" allowfullscreen></iframe><script>evil()</script>"}')


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, ctype, body):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?")[0]
        with open(os.path.join(DIR, "log"), "a") as f:
            f.write(path + "\n")
        if path in PAGES:
            self.send(200, "text/html; charset=utf-8", PAGES[path].encode())
        elif path == "/oembed.json":
            self.send(200, "application/json", OEMBED.encode())
        elif path == "/img.png":
            self.send(200, "image/png", png(32, 16))
        elif path == "/redirect":
            # To a private address other than the one [federation] hosts
            # maps pages.test to: the guard refuses it. The page server
            # listens there too, so a guard that let it pass shows in the log.
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.2:%d/og-private" % PORT)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/huge":
            self.send(200, "text/html", b"<html><head><title>Huge</title></head><body>"
                      + b"x" * (3 * 1024 * 1024))
        elif path == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"<html><head><title>Slow</title>")
            self.wfile.flush()
            time.sleep(60)
        else:
            self.send(404, "text/plain", b"not found")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server(("127.0.0.1", PORT), Handler)
other = Server(("127.0.0.2", PORT), Handler)
threading.Thread(target=other.serve_forever, daemon=True).start()
open(os.path.join(DIR, "ready"), "w").close()
srv.serve_forever()
