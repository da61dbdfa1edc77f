from omconnect.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches


def make(cls, options=None):
    predicate = cls()
    predicate.configure(options or {})
    return predicate


def test_topic_name_matches_the_whole_name(sink_record):
    predicate = make(TopicNameMatches, {"pattern": r"orders-\d+"})
    assert predicate.test(sink_record("v", topic="orders-7"))
    assert not predicate.test(sink_record("v", topic="orders-7-eu"))
    assert not predicate.test(sink_record("v", topic="x-orders-7"))
    assert predicate.test(sink_record("v", topic="orders-7"))  # cached answer is the same


def test_has_header_key(sink_record):
    predicate = make(HasHeaderKey, {"name": "trace"})
    assert predicate.test(sink_record("v", headers=[("a", 1), ("trace", None)]))
    assert not predicate.test(sink_record("v", headers=[("Trace", 1)]))


def test_record_is_tombstone(sink_record):
    predicate = make(RecordIsTombstone)
    assert predicate.test(sink_record(None, key="k"))
    assert not predicate.test(sink_record("", key="k"))
