"""What the many-connection clients (idle_connections.py, streaming_client.py)
share: eunha's memory and the loopback source address of the i-th connection.
Imported from beside them (a script's own directory is on sys.path); the
benchmarks run python3 -B so the import leaves no __pycache__ in the tree."""


def mem_kib(pid):
    """(rss, private) in KiB from /proc/PID/smaps_rollup: private is
    Private_Clean + Private_Dirty, which shared library pages do not swell."""
    rss = priv = 0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k == "Rss":
                rss = int(v.split()[0])
            elif k in ("Private_Clean", "Private_Dirty"):
                priv += int(v.split()[0])
    return rss, priv


def source(i, per_address):
    """The loopback address connection i binds to, per_address to each, so
    eunha's per-address cap is met as many clients would meet it."""
    n = i // per_address
    return f"127.{1 + n // 250}.{n % 250}.{1 + (n // 62500)}"
