"""Ed25519 signatures over bundle digests.

The signature covers the bundle digest only, which in turn covers every file
through the manifest, so signing never needs the files and verifying is one
check after the digests.  The signed message is domain-separated
(``fumarole-bundle-signature-v1`` + newline + digest) so that a fumarole
signature cannot be replayed as a signature over anything else.  Keys are PEM
files as ``openssl genpkey -algorithm ed25519`` writes them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from pathlib import Path
from typing import Mapping, Sequence

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.bundles import archive_errors

ALGORITHM = "ed25519"
_CONTEXT = b"fumarole-bundle-signature-v1\n"


def _read_pem(path: Path):
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FumaroleError([archive_errors.key_unreadable(path, exc.strerror)]) from None
    for loader in (lambda d: serialization.load_pem_private_key(d, password=None),
                   serialization.load_pem_public_key):
        try:
            return loader(data)
        except (ValueError, TypeError):
            continue
    raise FumaroleError([archive_errors.not_a_pem_key(path)])


def load_private_key(path: Path) -> Ed25519PrivateKey:
    key = _read_pem(path)
    if not isinstance(key, Ed25519PrivateKey):
        raise FumaroleError([archive_errors.not_an_ed25519_private_key(path)])
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """A public key, or the public half of a private key file."""
    key = _read_pem(path)
    if isinstance(key, Ed25519PrivateKey):
        return key.public_key()
    if not isinstance(key, Ed25519PublicKey):
        raise FumaroleError([archive_errors.not_an_ed25519_key(path)])
    return key


def key_id(key: Ed25519PublicKey) -> str:
    """A short, stable name for a public key: the first 16 hex digits of sha256(raw key)."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def sign_digest(key: Ed25519PrivateKey, digest: str) -> dict:
    signature = key.sign(_CONTEXT + digest.encode())
    return {"algorithm": ALGORITHM, "keyId": key_id(key.public_key()), "digest": digest,
            "signature": base64.b64encode(signature).decode()}


def verify_signature(signature: Mapping | None, digest: str, trusted: Sequence[Ed25519PublicKey],
                     source: str) -> str:
    """The key id that signed ``digest``; raise unless one of the trusted keys did."""
    if signature is None:
        raise FumaroleError([archive_errors.not_signed(source)])
    if signature.get("algorithm") != ALGORITHM or signature.get("digest") != digest:
        raise FumaroleError([archive_errors.not_a_signature_of_this_digest(source)])
    try:
        raw = base64.b64decode(str(signature.get("signature", "")), validate=True)
    except (binascii.Error, ValueError):
        raise FumaroleError([archive_errors.signature_not_base64(source)]) from None
    for key in trusted:
        try:
            key.verify(raw, _CONTEXT + digest.encode())
        except InvalidSignature:
            continue
        return key_id(key)
    raise FumaroleError([archive_errors.signature_not_trusted(source, signature.get("keyId", "?"))])
