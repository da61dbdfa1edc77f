"""The columnar path's pieces against their per-record counterparts: the embedded chunk
codec, message/batch conversion, per-partition last offsets and the header operations.
"""

from __future__ import annotations

import pytest

pa = pytest.importorskip("pyarrow")

from omconnect.columnar import WIRE_HEADERS_TYPE  # noqa: E402
from omconnect.columnar.transforms import append_header, drop_headers, has_header  # noqa: E402
from omconnect.runtime.columnar_stages import last_offsets  # noqa: E402
from omconnect.transport.embedded.codec import decode_chunk, encode_chunks  # noqa: E402
from omconnect.transport.embedded.columns import (  # noqa: E402
    decode_chunk_columns,
    encode_column_chunks,
)
from omconnect.transport.message_batches import batch_to_messages, messages_to_batch  # noqa: E402
from omconnect.transport.messages import Message  # noqa: E402

MESSAGES = [Message("t", b"k1", b"v", (("a", b"1"), ("a", None)), 5, 0, 10),
            Message("t", None, b"", (), 6, 0, 11),
            Message("t", b"k333", None, (("b", b""),), 7, 0, 12),
            Message("t", b"", b"x" * 5000, (), 8, 0, 13)]


def test_chunks_written_from_columns_are_the_bytes_of_chunks_written_from_messages():
    batch = messages_to_batch(MESSAGES)
    columns = encode_column_chunks(batch.column("key"), batch.column("value"),
                                   batch.column("timestamp").to_numpy(),
                                   batch.column("headers"))
    assert columns == encode_chunks(MESSAGES, [5, 6, 7, 8])


@pytest.mark.parametrize(("first", "limit"), [(0, None), (1, 2), (3, 5), (2, 1)])
def test_chunks_read_into_columns_hold_the_messages_read_one_by_one(first, limit):
    ((_, data),) = encode_chunks(MESSAGES, [5, 6, 7, 8])
    columns = decode_chunk_columns(data, topic="t", partition=0, base_offset=10, first=first,
                                   limit=limit)
    assert batch_to_messages(None, columns) == decode_chunk(
        data, topic="t", partition=0, base_offset=10, first=first, limit=limit)


def test_last_offsets_per_topic_and_partition_of_a_mixed_batch():
    messages = [Message("a", None, b"", (), None, 0, 5), Message("a", None, b"", (), None, 1, 9),
                Message("b", None, b"", (), None, 0, 3), Message("a", None, b"", (), None, 0, 6)]
    assert last_offsets(messages_to_batch(messages)) == {("a", 0): 6, ("a", 1): 9,
                                                         ("b", 0): 3}
    one = messages_to_batch([Message("ab", None, b"", (), None, 2, o) for o in range(4)])
    assert last_offsets(one.slice(1, 2)) == {("ab", 2): 2}
    lookalike = messages_to_batch([Message("ab", None, b"", (), None, 0, 1),
                                   Message("a", None, b"", (), None, 0, 2),
                                   Message("b", None, b"", (), None, 0, 3)])
    assert last_offsets(lookalike) == {("ab", 0): 1, ("a", 0): 2, ("b", 0): 3}


def test_header_columns_change_as_headers_change_record_by_record():
    batch = pa.RecordBatch.from_arrays([
        pa.array(["x", "y", "x"]),
        pa.array([[{"key": "a", "value": b"1"}], None,
                  [{"key": "b", "value": None}, {"key": "a", "value": b"2"}]],
                 WIRE_HEADERS_TYPE)], names=["topic", "headers"])
    added = append_header(batch, "h", lambda topic: topic.encode())
    assert added.column("headers").to_pylist() == [
        [{"key": "a", "value": b"1"}, {"key": "h", "value": b"x"}],
        [{"key": "h", "value": b"y"}],
        [{"key": "b", "value": None}, {"key": "a", "value": b"2"}, {"key": "h", "value": b"x"}]]
    dropped = drop_headers(batch, ["a"])
    assert [row or [] for row in dropped.column("headers").to_pylist()] == [
        [], [], [{"key": "b", "value": None}]]
    assert has_header(batch, "b").to_pylist() == [False, False, True]
