# An independent verifier of Standard Webhooks Ed25519 ("v1a") signatures, written against the
# specification with the Python `cryptography` library rather than against our signer.
# stdin: {"publicKeys": ["<PEM>", ...], "messages": [{"id", "timestamp", "body", "signature"}, ...]}
# stdout: [[bool per publicKey: does some v1a signature in the header verify with it], ...]
import base64
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key


def verifies(key, message):
    signed = f"{message['id']}.{message['timestamp']}.{message['body']}".encode()
    for part in message["signature"].split(" "):
        version, _, sig = part.partition(",")
        if version != "v1a":
            continue
        try:
            key.verify(base64.b64decode(sig, validate=True), signed)
            return True
        except (InvalidSignature, ValueError):
            pass
    return False


request = json.load(sys.stdin)
keys = [load_pem_public_key(pem.encode()) for pem in request["publicKeys"]]
for key in keys:
    assert isinstance(key, Ed25519PublicKey), "not an Ed25519 key"
json.dump([[verifies(key, m) for key in keys] for m in request["messages"]], sys.stdout)
