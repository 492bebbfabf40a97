# A destination's receiver: checks the Standard Webhooks signature of each POST on its raw body,
# and its timestamp, before reading it; drops repeats by webhook-id; then applies the change.
import base64
import hashlib
import hmac
import json
import os
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

SECRET = os.environ["PREQUAL_DESTINATION_SECRET"]  # the whsec_ secret `destinations add` printed
HOST = os.environ.get("HOST", "127.0.0.1")  # behind your HTTPS proxy
PORT = int(os.environ.get("PORT", "8000"))
TOLERANCE = 5 * 60  # seconds, either way


def verify(secret, headers, body):
    """The JSON of a body signed with `secret`; ValueError when the signature or time is wrong."""
    webhook_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not (webhook_id and timestamp and signatures):
        raise ValueError("not signed: a Standard Webhooks header is missing")
    if abs(time.time() - int(timestamp)) > TOLERANCE:
        raise ValueError("signed more than five minutes away from now")
    if secret.startswith("whsec_"):
        key = base64.b64decode(secret[len("whsec_"):])
    else:
        key = secret.encode()  # a secret given without whsec_ is used as its bytes
    signed = webhook_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())
    # "v1,<base64>" for each secret that signs, space-separated (two while one is rotated).
    for signature in signatures.split(" "):
        version, _, value = signature.partition(",")
        if version == "v1" and hmac.compare_digest(value.encode(), expected):
            return json.loads(body)
    raise ValueError("no signature matches the secret")


applied = set()  # the webhook-ids applied: keep them in your database, beside what they changed


def apply(change):
    # Your system's work: upsert change["row"], or delete the candidate on an "erase".
    print("applied", change["seq"], change["entity"], change["id"], change["op"])


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            change = verify(SECRET, self.headers, body)
        except ValueError as error:
            self.send_error(401, str(error))
            return
        if self.headers["webhook-id"] not in applied:  # a retry of what was applied: drop it
            apply(change)
            applied.add(self.headers["webhook-id"])
        self.send_response(204)
        self.end_headers()


server = HTTPServer((HOST, PORT), Receiver)
print("receiving changes on port", server.server_port)
server.serve_forever()
