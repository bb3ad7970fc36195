#!/usr/bin/env python3
"""Holds many idle keep-alive connections open on eunha and measures it.

Run by scripts/benchmark_idle_connections.sh; see there. Steps:
  1. eunha's memory with no client connection (after one warm-up request);
  2. COUNT connections opened, each asks one request as soon as it is open
     and waits for its whole answer (at most INFLIGHT at a time, so the
     tenant's database pool is not the thing measured), then stays open and
     idle;
  3. eunha's memory again: the difference divided by COUNT is what one idle
     keep-alive connection costs;
  4. EXTRA more connections that send nothing: each should get the fixed 503
     and be closed, since the cap is COUNT;
  5. a few of the held connections ask again, to show they still work.
Connections come from many loopback source addresses (PER_ADDRESS each), so
the per-address cap is exercised as it would be by many clients.
Prints a JSON summary on stdout.
"""
import argparse
import json
import selectors
import socket
import time

from conn_bench import mem_kib, source


def metric(port, token, name):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(("GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
               f"Authorization: Bearer {token}\r\n\r\n").encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    for line in data.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def whole_response(buf):
    """Status code once buf holds one whole response, else None."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = buf[:end].decode("latin-1")
    length = 0
    for line in head.split("\r\n")[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v)
    if len(buf) < end + 4 + length:
        return None
    return int(head.split()[1])


def run_requests(conns, request, inflight, timeout=300):
    """Sends request on each socket that conns yields (a list, or a
    generator that opens them) and reads each answer, INFLIGHT at a time;
    returns ({status: count}, [sockets]). A socket is opened only when its
    request can go at once: one that waited silent past the header deadline
    would be closed, as it should be. Sockets stay open."""
    sel = selectors.DefaultSelector()
    it = iter(conns)
    more = True
    statuses = {}
    bufs = {}
    opened = []
    deadline = time.time() + timeout
    active = 0
    while (more or active) and time.time() < deadline:
        while more and active < inflight:
            s = next(it, None)
            if s is None:
                more = False
                break
            opened.append(s)
            s.sendall(request)
            bufs[s] = b""
            sel.register(s, selectors.EVENT_READ)
            active += 1
        for key, _ in sel.select(timeout=1):
            s = key.fileobj
            try:
                b = s.recv(65536)
            except OSError:
                b = b""
            if not b:
                statuses["closed"] = statuses.get("closed", 0) + 1
                sel.unregister(s)
                active -= 1
                continue
            bufs[s] += b
            st = whole_response(bufs[s])
            if st is not None:
                statuses[st] = statuses.get(st, 0) + 1
                sel.unregister(s)
                active -= 1
    sel.close()
    if more or active:
        statuses["unanswered"] = active
    return statuses, opened


def dial(port, src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--admin-port", type=int, required=True)
    ap.add_argument("--admin-token-file", required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--extra", type=int, default=500)
    ap.add_argument("--per-address", type=int, default=200)
    ap.add_argument("--inflight", type=int, default=32)
    a = ap.parse_args()
    request = (f"GET /api/v1/instance HTTP/1.1\r\nHost: {a.host}\r\n"
               "Connection: keep-alive\r\n\r\n").encode()
    with open(a.admin_token_file) as f:
        token = f.read().strip()
    out = {"count": a.count, "extra": a.extra, "per_address": a.per_address}

    warm = dial(a.port, "127.0.0.1")
    out["warmup"] = run_requests([warm], request, 1)[0]
    warm.close()
    time.sleep(1)
    out["before_kib"] = mem_kib(a.pid)

    t0 = time.time()
    dials = (dial(a.port, source(i, a.per_address)) for i in range(a.count))
    out["held_statuses"], held = run_requests(dials, request, a.inflight)
    out["open_s"] = round(time.time() - t0, 2)
    time.sleep(2)
    out["open_metric"] = metric(a.admin_port, token, "eunha_http_connections")
    out["after_kib"] = mem_kib(a.pid)
    rss0, priv0 = out["before_kib"]
    rss1, priv1 = out["after_kib"]
    out["rss_per_conn_bytes"] = round((rss1 - rss0) * 1024 / a.count)
    out["private_per_conn_bytes"] = round((priv1 - priv0) * 1024 / a.count)

    # Past the cap: nothing is sent, so the answer is the fixed 503.
    refused = {}
    t0 = time.time()
    for i in range(a.extra):
        try:
            s = dial(a.port, source(a.count + i, a.per_address))
        except OSError as e:
            refused["connect " + e.strerror] = refused.get("connect " + e.strerror, 0) + 1
            continue
        s.settimeout(10)
        data = b""
        try:
            while True:
                b = s.recv(4096)
                if not b:
                    break
                data += b
        except OSError as e:
            refused[e.strerror or "error"] = refused.get(e.strerror or "error", 0) + 1
        s.close()
        if data.startswith(b"HTTP/1.1 503") and b'{"error":"' in data:
            refused["503 json"] = refused.get("503 json", 0) + 1
        elif data:
            refused["other answer"] = refused.get("other answer", 0) + 1
        else:
            refused["closed, no answer"] = refused.get("closed, no answer", 0) + 1
    out["refusal_s"] = round(time.time() - t0, 2)
    out["refused"] = refused
    out["refused_metric"] = metric(a.admin_port, token,
                                   'eunha_http_connections_refused_total{cap="total"}')
    # The held connections still work.
    out["held_again"] = run_requests(held[:100], request, a.inflight)[0]
    out["after_refusals_kib"] = mem_kib(a.pid)
    for s in held:
        s.close()
    time.sleep(2)
    out["open_metric_after_close"] = metric(a.admin_port, token, "eunha_http_connections")
    out["after_close_kib"] = mem_kib(a.pid)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
