#!/usr/bin/python3
"""A test SMTP server for tests/integration/auth/test_mail.c.

Usage: smtp_sink.py PORT DIR

Listens on 127.0.0.1:PORT with Debian's python3-aiosmtpd and writes each
message it receives to DIR/NNNN.json (written whole, then renamed), with
the envelope, the raw headers, the decoded subject and the decoded plain
text and HTML parts, so the C test reads JSON instead of parsing MIME.
Writes DIR/ready once it listens. Runs until killed.
"""
import email
import email.header
import email.policy
import json
import os
import sys
import time

from aiosmtpd.controller import Controller


class Sink:
    def __init__(self, out):
        self.out = out
        self.n = 0

    async def handle_DATA(self, server, session, envelope):
        raw = envelope.original_content or envelope.content
        msg = email.message_from_bytes(raw, policy=email.policy.default)
        parts = {}
        for part in msg.walk():
            ctype = part.get_content_type()
            if ctype in ("text/plain", "text/html") and ctype not in parts:
                parts[ctype] = part.get_content()
        raw_headers = {}
        for k, v in email.message_from_bytes(raw, policy=email.policy.compat32).items():
            raw_headers[k.lower()] = v
        subject = str(email.header.make_header(email.header.decode_header(msg.get("Subject", ""))))
        doc = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "headers": raw_headers,
            "from": str(msg.get("From", "")),
            "subject": subject,
            "text": parts.get("text/plain", ""),
            "html": parts.get("text/html", ""),
            "crlf": b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b""),
        }
        self.n += 1
        tmp = os.path.join(self.out, "tmp-%04d" % self.n)
        with open(tmp, "w") as f:
            json.dump(doc, f)
        os.rename(tmp, os.path.join(self.out, "%04d.json" % self.n))
        return "250 OK"


def main():
    port, out = int(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    c = Controller(Sink(out), hostname="127.0.0.1", port=port)
    c.start()
    with open(os.path.join(out, "ready"), "w") as f:
        f.write("ok\n")
    try:
        while True:
            time.sleep(3600)
    finally:
        c.stop()


if __name__ == "__main__":
    main()
