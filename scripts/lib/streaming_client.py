#!/usr/bin/env python3
"""Many WebSocket streams on eunha, for scripts/benchmark_streaming.sh.

Steps:
  1. eunha's memory with no stream open;
  2. for each COUNT in --counts (cumulative): open streams up to COUNT (each
     a WebSocket on /api/v1/streaming?stream=public, the token in the query),
     wait until all are upgraded, let the loop settle, read memory again:
     (growth) / (streams opened) is what one idle stream costs;
  3. fan-out: with --listeners of them kept, POST --events statuses as fast
     as one connection can, and count the update events that reach the
     listeners; events per second is what reached them divided by the time
     from the first POST to the last event.
With --tokens FILE (one token a line), stream i uses token i (modulo the
file) and every --user-every'th stream is the token's `user` stream instead
of `public` (the poster's statuses reach it when the account follows the
poster). --cpu-cmd, run before the first POST and after the last event,
prints CPU figures (ticks) that go into the summary as cpu_before and
cpu_after.
Prints a JSON summary on stdout.
"""
import argparse
import resource
import json
import selectors
import socket
import struct
import subprocess
import time

from conn_bench import mem_kib, source


class Stream:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.upgraded = False
        self.updates = 0
        self.closed = False


def upgrade(args, i):
    token, stream = args.token, "public"
    if args.tokens:
        token = args.tokens[i % len(args.tokens)]
        if args.user_every and i % args.user_every == args.user_every - 1:
            stream = "user"
    return (f"GET /api/v1/streaming?stream={stream}&access_token={token} HTTP/1.1\r\n"
            f"Host: {args.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()


def open_streams(sel, streams, n, args):
    start = len(streams)
    for i in range(start, n):
        req = upgrade(args, i)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((source(i, args.per_address), 0))
        s.connect(("127.0.0.1", args.port))
        s.sendall(req)
        s.setblocking(False)
        st = Stream(s)
        streams.append(st)
        sel.register(s, selectors.EVENT_READ, st)
        if (i - start) % 200 == 199:
            pump(sel, 0)
    deadline = time.time() + 120
    while time.time() < deadline and not all(st.upgraded for st in streams):
        pump(sel, 0.2)
    return sum(1 for st in streams if st.upgraded)


def frames(st):
    """Complete server frames in st.buf: (opcode, payload)."""
    out = []
    b = st.buf
    while len(b) >= 2:
        op = b[0] & 0x0F
        n = b[1] & 0x7F
        off = 2
        if n == 126:
            if len(b) < 4:
                break
            n = struct.unpack(">H", b[2:4])[0]
            off = 4
        elif n == 127:
            if len(b) < 10:
                break
            n = struct.unpack(">Q", b[2:10])[0]
            off = 10
        if len(b) < off + n:
            break
        out.append((op, b[off:off + n]))
        b = b[off + n:]
    st.buf = b
    return out


def pump(sel, timeout):
    for key, _ in sel.select(timeout):
        st = key.data
        try:
            data = st.sock.recv(1 << 16)
        except BlockingIOError:
            continue
        except ConnectionResetError:
            data = b""
        if not data:
            st.closed = True
            sel.unregister(st.sock)
            continue
        st.buf += data
        if not st.upgraded:
            i = st.buf.find(b"\r\n\r\n")
            if i < 0:
                continue
            st.upgraded = st.buf.startswith(b"HTTP/1.1 101")
            st.buf = st.buf[i + 4:]
        for op, payload in frames(st):
            if op == 1 and (b'"event":"update"' in payload
                            or b'"event":"status.update"' in payload):
                st.updates += 1
            elif op == 9:  # answer pings, masked as a client must
                st.sock.send(bytes([0x8A, 0x80, 0, 0, 0, 0]))


def post(args, text, path="/api/v1/statuses", extra=None, method="POST"):
    body = json.dumps({"status": text, **(extra or {})}).encode() if text is not None else b"{}"
    return (f"{method} {path} HTTP/1.1\r\nHost: {args.host}\r\n"
            f"Authorization: Bearer {args.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def read_response(f):
    line = f.readline()
    length = 0
    while True:
        h = f.readline()
        if h in (b"\r\n", b""):
            break
        if h.lower().startswith(b"content-length:"):
            length = int(h.split(b":")[1])
    body = f.read(length)
    if not line.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"POST failed: {line!r}")
    return body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--counts", default="1000,10000")
    ap.add_argument("--listeners", type=int, default=1000)
    ap.add_argument("--events", type=int, default=100)
    ap.add_argument("--per-address", type=int, default=200)
    ap.add_argument("--tokens", default=None)
    ap.add_argument("--user-every", type=int, default=2)
    ap.add_argument("--cpu-cmd", default=None)
    ap.add_argument("--posts-at-once", action="store_true")
    # Each event a boost of a status posted before the streams open.
    ap.add_argument("--reblogs", action="store_true")
    # Each event a status with a poll, or a quote of a status posted before
    # the streams open.
    ap.add_argument("--polls", action="store_true")
    ap.add_argument("--quotes", action="store_true")
    # Each event an edit of a status posted before the streams open.
    ap.add_argument("--edits", action="store_true")
    args = ap.parse_args()
    if args.tokens:
        with open(args.tokens) as f:
            args.tokens = [t.strip() for t in f if t.strip()]

    originals = []
    if args.reblogs or args.quotes or args.edits:
        c = socket.create_connection(("127.0.0.1", args.port))
        c.settimeout(60)
        f = c.makefile("rb")
        for i in range(args.events):
            c.sendall(post(args, f"to boost or quote {i}"))
            originals.append(json.loads(read_response(f))["id"])
        c.close()

    sel = selectors.DefaultSelector()
    streams = []
    time.sleep(1)
    base_rss, base_priv = mem_kib(args.pid)
    result = {"baseline_rss_kib": base_rss, "baseline_private_kib": base_priv, "idle": []}
    for count in [int(c) for c in args.counts.split(",")]:
        t0 = time.time()
        up = open_streams(sel, streams, count, args)
        t1 = time.time()
        for _ in range(10):
            pump(sel, 0.2)
        rss, priv = mem_kib(args.pid)
        result["idle"].append({
            "streams": up, "open_seconds": round(t1 - t0, 2), "rss_kib": rss,
            "private_kib": priv,
            "rss_per_stream_kib": round((rss - base_rss) / max(up, 1), 2),
            "private_per_stream_kib": round((priv - base_priv) / max(up, 1), 2)})

    # Fan-out to the first LISTENERS streams: close the rest first.
    for st in streams[args.listeners:]:
        try:
            sel.unregister(st.sock)
        except (KeyError, ValueError):
            pass
        st.sock.close()
    streams = streams[:args.listeners]
    for _ in range(10):
        pump(sel, 0.2)
    for st in streams:
        st.updates = 0
    want = args.events * len(streams)
    cpu = lambda: (subprocess.run(args.cpu_cmd, shell=True, capture_output=True, text=True)
                   .stdout.split() if args.cpu_cmd else [])
    cpu_before = cpu()
    me = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.time()
    last = t0
    # One connection, a POST at a time; with --posts-at-once a connection
    # per status, all sent before any answer is read, so the fan-outs
    # overlap rather than wait on each POST.
    conns = []
    for i in range(args.events):
        if args.posts_at_once or not conns:
            c = socket.create_connection(("127.0.0.1", args.port))
            c.settimeout(60)
            conns.append((c, c.makefile("rb")))
        c, f = conns[-1]
        if args.reblogs:
            c.sendall(post(args, None, f"/api/v1/statuses/{originals[i]}/reblog"))
        elif args.edits:
            c.sendall(post(args, f"edited {i}", f"/api/v1/statuses/{originals[i]}", method="PUT"))
        elif args.quotes:
            c.sendall(post(args, f"fan-out {i}", extra={"quoted_status_id": originals[i]}))
        elif args.polls:
            c.sendall(post(args, f"fan-out {i}", extra={
                "poll": {"options": ["fig", "plum"], "expires_in": 3600}}))
        else:
            c.sendall(post(args, f"fan-out {i}"))
        if not args.posts_at_once:
            read_response(f)
            pump(sel, 0)
    for c, f in conns if args.posts_at_once else []:
        read_response(f)
        pump(sel, 0)
    deadline = time.time() + 120
    got = 0
    while time.time() < deadline:
        pump(sel, 0.2)
        n = sum(st.updates for st in streams)
        if n != got:
            got = n
            last = time.time()
        if got >= want or time.time() - last > 10:
            break
    cpu_after = cpu()
    me1 = resource.getrusage(resource.RUSAGE_SELF)
    got = sum(st.updates for st in streams)
    secs = max(last - t0, 1e-6)
    result["fanout"] = {
        "listeners": len(streams), "statuses": args.events, "events_expected": want,
        "events_received": got, "seconds": round(secs, 2),
        "events_per_second": round(got / secs, 1),
        "statuses_per_second": round(args.events / secs, 2),
        "user_streams": sum(1 for i in range(len(streams))
                            if args.tokens and args.user_every
                            and i % args.user_every == args.user_every - 1),
        "cpu_before": cpu_before, "cpu_after": cpu_after,
        # The client's own: on a small machine it may be what sets the pace.
        "streams_closed": sum(1 for st in streams if st.closed),
        "client_cpu_s": round(me1.ru_utime + me1.ru_stime - me.ru_utime - me.ru_stime, 2)}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
