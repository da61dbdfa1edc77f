"""Where omconnect's names live in JetStream: streams, subjects, buckets and keys.

With ``nats.prefix`` ``omc`` (the default):

====================================  ==============================================
omconnect                             JetStream
====================================  ==============================================
partition ``p`` of topic ``t``        stream ``omc_<t>_<p>``, subject ``omc.<t>.<p>``
the topics and their partition counts  key/value bucket ``omc-topics``, a key per topic
a group's membership and owners       bucket ``omc-groups``, a key per group
a group's committed positions         bucket ``omc-positions``, key ``<t>.<p>.<group>``
key/value store ``ns``                bucket ``omc-kv-<ns>``, a key per key
====================================  ==============================================

Stream names, subject tokens, bucket names and keys allow fewer characters than
omconnect's names, so every name is written with :func:`encode_token`: ASCII letters,
digits and ``-`` stay, every other character becomes ``_`` and the two hex digits of each
of its UTF-8 bytes (``orders.eu`` is ``orders_2eeu``), and the empty string is ``_``. The
encoding is reversible (:func:`decode_token`) and keeps prefixes (the encoding of a
prefix is a prefix of the encoding), so a topic or key comes back exactly from a listing.
"""

from __future__ import annotations

import re

__all__ = ["Names", "decode_token", "encode_token"]

_SAFE = re.compile(r"[A-Za-z0-9-]")
_ESCAPED = re.compile(r"_([0-9a-f]{2})")
_UNSAFE = re.compile(r"[^A-Za-z0-9-]")


def encode_token(name: str) -> str:
    """``name`` as a token every JetStream name accepts (see the module docstring)."""
    if not name:
        return "_"
    return _UNSAFE.sub(lambda m: "".join(f"_{b:02x}" for b in m.group().encode()), name)


def decode_token(token: str) -> str:
    """The name :func:`encode_token` turned into ``token``.

    Raises:
        ValueError: ``token`` is not an encoded name.

    """
    if token == "_":
        return ""
    raw = bytearray()
    index = 0
    while index < len(token):
        char = token[index]
        if char == "_":
            match = _ESCAPED.match(token, index)
            if match is None:
                raise ValueError(f"not an encoded name: {token!r}")
            raw.append(int(match.group(1), 16))
            index = match.end()
        elif _SAFE.match(char):
            raw += char.encode()
            index += 1
        else:
            raise ValueError(f"not an encoded name: {token!r}")
    return raw.decode()


class Names:
    """The JetStream names of one transport (``nats.prefix``).

    Args:
        prefix: ``nats.prefix``: letters, digits and ``-``.

    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.topics_bucket = f"{prefix}-topics"
        self.groups_bucket = f"{prefix}-groups"
        self.positions_bucket = f"{prefix}-positions"
        self._stream_prefix = f"{prefix}_"
        self._subject_prefix = f"{prefix}."

    def stream(self, topic: str, partition: int) -> str:
        """The stream that holds a partition."""
        return f"{self._stream_prefix}{encode_token(topic)}_{partition}"

    def subject(self, topic: str, partition: int) -> str:
        """The subject messages of a partition are published to."""
        return f"{self._subject_prefix}{encode_token(topic)}.{partition}"

    def kv_bucket(self, namespace: str) -> str:
        """The bucket of a key/value store."""
        return f"{self.prefix}-kv-{encode_token(namespace)}"

    @staticmethod
    def position_key(group: str, topic: str, partition: int) -> str:
        """The key of a group's committed position of a partition."""
        return f"{encode_token(topic)}.{partition}.{encode_token(group)}"

    @staticmethod
    def topic_positions(topic: str) -> str:
        """The keys of every position of a topic, as a subject filter tail."""
        return f"{encode_token(topic)}.>"
