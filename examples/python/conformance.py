#!/usr/bin/python3
"""Cross-language conformance check: a Python client, built from the .proto and
docs/FORMAT.md alone, against a running uringmq broker.

usage: conformance.py HOST:PORT

Prints one line per check and exits 0 only if every check passes. Every wait is
bounded; topics get names unique to this run and are deleted at the end. Sends
`authorization: Bearer $URINGMQ_AUTH_TOKEN` when that variable is set. Stubs come
from $UMQ_STUBS or ./gen (see README.md).
"""
import os
import queue
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("UMQ_STUBS") or os.path.join(HERE, "gen"))
sys.path.insert(0, HERE)

import grpc  # noqa: E402
from uringmq.v1 import broker_pb2 as pb  # noqa: E402
from uringmq.v1 import broker_pb2_grpc as pbg  # noqa: E402
import uringmq_codec as C  # noqa: E402
from uringmq_codec import Record  # noqa: E402

if len(sys.argv) != 2:
    sys.exit(__doc__)
ADDR = sys.argv[1]
TOKEN = os.environ.get("URINGMQ_AUTH_TOKEN")
MD = (("authorization", "Bearer " + TOKEN),) if TOKEN else None
T = 10  # seconds, for every unary call
RUN = "%d-%d" % (time.time(), os.getpid())
TOPIC = "pyconf-" + RUN
NOW = int(time.time() * 1000)
PID = 1_000_000 + (int(time.time() * 1000) % 1_000_000_000)  # producer ids unique per run

channel = grpc.insecure_channel(ADDR, options=[("grpc.max_receive_message_length", 32 << 20)])
stub = pbg.BrokerStub(channel)
created = []                   # topics to delete at the end
expected = {0: {}, 1: {}}      # partition -> offset -> Record (timestamp None: broker's clock)


class CheckFailed(Exception):
    pass


def ensure(cond, what):
    if not cond:
        raise CheckFailed(what)


def rpc_error(fn):
    """Run fn, which must fail; return (grpc status name, uringmq-code trailer)."""
    try:
        got = fn()
    except grpc.RpcError as e:
        return e.code().name, dict(e.trailing_metadata() or ()).get("uringmq-code")
    raise CheckFailed("call succeeded: %s" % str(got).replace("\n", " "))


def expect_error(fn, status, code):
    got = rpc_error(fn)
    ensure(got == (status, code), "expected %s/%s, got %s/%s" % ((status, code) + got))


def remember(partition, base, records):
    for i, r in enumerate(records):
        expected[partition][base + i] = r


def publish(**kw):
    return stub.Publish(pb.PublishRequest(**kw), metadata=MD, timeout=T)


def end_offsets():
    d = stub.DescribeTopic(pb.DescribeTopicRequest(name=TOPIC), metadata=MD, timeout=T)
    return [p.end_offset for p in d.partitions]


def committed(group, want, within=5.0):
    """GetCommittedOffsets until it equals `want` (acks travel asynchronously)."""
    deadline = time.monotonic() + within
    while True:
        got = list(stub.GetCommittedOffsets(pb.GetCommittedOffsetsRequest(
            group=group, topic=TOPIC), metadata=MD, timeout=T).offsets)
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def fetch_all(partition, plain=False):
    """Everything in a partition, as decoded Batches (or ConsumedRecords if plain)."""
    out, offset = [], 0
    for _ in range(1000):
        r = stub.Fetch(pb.FetchRequest(topic=TOPIC, partition=partition, offset=offset,
                                       plain_records=plain), metadata=MD, timeout=T)
        if plain:
            out.extend(r.records)
            offset = r.records[-1].offset + 1 if r.records else r.end_offset
        else:
            batches = C.decode_batches(r.batches)
            out.extend(batches)
            offset = batches[-1].base_offset + batches[-1].count if batches else r.end_offset
        if offset >= r.end_offset:
            return out
    raise CheckFailed("fetch did not reach the end")


class Subscription:
    """A Subscribe stream: requests from a queue, responses read by a thread."""

    def __init__(self, **init):
        init.setdefault("topic", TOPIC)
        self._requests = queue.Queue()
        self._responses = queue.Queue()
        first = pb.SubscribeRequest(subscribe=pb.SubscribeInit(**init))
        self.call = stub.Subscribe(self._send(first), metadata=MD, timeout=60)
        threading.Thread(target=self._read, daemon=True).start()

    def _send(self, first):
        yield first
        while True:
            m = self._requests.get()
            if m is None:
                return
            yield m

    def _read(self):
        try:
            for m in self.call:
                self._responses.put(m)
            self._responses.put("stream ended")
        except grpc.RpcError as e:
            self._responses.put("stream failed: %s %s" % (e.code().name, e.details()))

    def send(self, **kw):
        self._requests.put(pb.SubscribeRequest(**kw))

    def ack(self, msgs):
        """Ack (partition, offset, ...) tuples, as ranges of consecutive offsets."""
        acks = pb.Acks()
        for p, o in sorted((m[0], m[1]) for m in msgs):
            last = acks.ranges[-1] if acks.ranges else None
            if last is not None and last.partition == p and last.to_offset == o:
                last.to_offset = o + 1
            else:
                acks.ranges.add(partition=p, from_offset=o, to_offset=o + 1)
        self.send(acks=acks)

    def collect(self, want, within):
        """(partition, offset, value, delivery_count) of messages delivered until
        `want` arrived or `within` seconds passed."""
        got = []
        deadline = time.monotonic() + within
        while len(got) < want:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                m = self._responses.get(timeout=left)
            except queue.Empty:
                break
            if isinstance(m, str):
                raise CheckFailed(m)
            if m.HasField("delivery"):
                d = m.delivery
                got += [(r.partition, r.offset, r.value, r.delivery_count) for r in d.records]
                for b in C.decode_batches(d.batches):
                    got += [(d.partition, r.offset, r.value, d.delivery_count)
                            for r in b.records if d.from_offset <= r.offset < d.to_offset]
        return got

    def close(self):
        self._requests.put(None)
        self.call.cancel()


def subscribe_all(group, **init):
    sub = Subscription(group=group, **{"from": pb.EARLIEST}, **init)
    total = sum(len(v) for v in expected.values())
    got = sub.collect(total, 10)
    if len(got) != total:
        sub.close()
        raise CheckFailed("delivered %d of %d" % (len(got), total))
    return sub, got


# ------------------------------------------------------------------ checks
def c_codec():
    C.selftest()


def c_admin():
    info = stub.CreateTopic(pb.CreateTopicRequest(name=TOPIC, partitions=2), metadata=MD, timeout=T)
    created.append(TOPIC)
    ensure([p.partition for p in info.partitions] == [0, 1], "2 partitions")
    names = stub.ListTopics(pb.ListTopicsRequest(), metadata=MD, timeout=T).names
    ensure(TOPIC in names, "listed")
    d = stub.DescribeTopic(pb.DescribeTopicRequest(name=TOPIC), metadata=MD, timeout=T)
    ensure(d.name == TOPIC and end_offsets() == [0, 0], "described, empty")
    # Retention: an absent field is no limit, a present one (0 included) a limit.
    ensure(not d.retention.HasField("max_bytes") and not d.retention.HasField("max_age_ms"),
           "no retention limit, no field: %s" % d.retention)
    expect_error(lambda: stub.CreateTopic(pb.CreateTopicRequest(name=TOPIC), metadata=MD, timeout=T),
                 "ALREADY_EXISTS", "TOPIC_EXISTS")
    name = TOPIC + "-ret"
    info = stub.CreateTopic(pb.CreateTopicRequest(name=name, retention=pb.Retention(max_bytes=0)),
                            metadata=MD, timeout=T)
    created.append(name)
    for r in (info.retention, stub.DescribeTopic(pb.DescribeTopicRequest(name=name), metadata=MD, timeout=T).retention):
        ensure(r.HasField("max_bytes") and r.max_bytes == 0 and not r.HasField("max_age_ms"),
               "a max_bytes limit of 0, no max_age_ms: %s" % r)


def c_delete():
    name = TOPIC + "-del"
    stub.CreateTopic(pb.CreateTopicRequest(name=name), metadata=MD, timeout=T)
    created.append(name)
    stub.DeleteTopic(pb.DeleteTopicRequest(name=name), metadata=MD, timeout=T)
    created.remove(name)
    ensure(name not in stub.ListTopics(pb.ListTopicsRequest(), metadata=MD, timeout=T).names,
           "not listed after delete")
    expect_error(lambda: stub.DescribeTopic(pb.DescribeTopicRequest(name=name), metadata=MD, timeout=T),
                 "NOT_FOUND", "TOPIC_NOT_FOUND")


def c_publish_batch():
    recs = [Record(b"v0", b"k0", {"h1": b"x", "bin": b"\x00\x01\xff"}, NOW),
            Record(b"", None, {}, NOW - 5),                       # null key, earlier timestamp
            Record(b"v2" * 100, b"", {"": b""}, NOW + 1000)]      # empty key, empty header
    r = publish(sequence=7, topic=TOPIC, partition=0, batch=C.encode_batch(recs))
    ensure((r.sequence, r.partition, r.base_offset, r.count, r.duplicate) == (7, 0, 0, 3, False),
           "answer %s" % r)
    remember(0, r.base_offset, recs)


def c_publish_records():
    r = publish(sequence=8, topic=TOPIC, partition=0, records=[
        pb.Record(key=b"pk", value=b"plain-1", headers={"a": b"1"}, timestamp=NOW + 1),
        pb.Record(value=b"plain-2")])                          # no key; timestamp 0: broker's clock
    ensure((r.sequence, r.base_offset, r.count) == (8, 3, 2), "answer %s" % r)
    remember(0, 3, [Record(b"plain-1", b"pk", {"a": b"1"}, NOW + 1), Record(b"plain-2")])


def c_sync():
    ensure(pb.PublishRequest.DESCRIPTOR.fields_by_name["sync"].number == 8, "field 8")
    r = publish(topic=TOPIC, partition=0, sync=True, records=[pb.Record(value=b"synced", timestamp=NOW)])
    ensure((r.base_offset, r.count) == (5, 1) and not r.HasField("error"), "answer %s" % r)
    remember(0, 5, [Record(b"synced", None, {}, NOW)])


def c_stream():
    batches = {100 + i: (i % 2, [Record(b"s%d-%d" % (i, j), b"key%d" % i, {"i": b"%d" % i}, NOW + i)
                                 for j in range(2)]) for i in range(8)}
    requests = [pb.PublishRequest(sequence=s, topic=TOPIC, partition=p, batch=C.encode_batch(recs))
                for s, (p, recs) in batches.items()]
    call = stub.PublishStream(iter(requests), metadata=MD, timeout=15)  # all sent without waiting
    answers = {}
    for resp in call:
        ensure(not resp.HasField("error"), "error %s" % resp.error)
        ensure(resp.sequence not in answers, "sequence %d answered twice" % resp.sequence)
        answers[resp.sequence] = resp
    limit = int(dict(call.initial_metadata()).get("uringmq-max-message-bytes", "0"))
    ensure(limit >= 4 << 20, "uringmq-max-message-bytes %d" % limit)
    ensure(sorted(answers) == sorted(batches), "one answer per request")
    starts = {0: 6, 1: 0}
    for part in (0, 1):
        mine = sorted((a.base_offset, s) for s, a in answers.items() if a.partition == part)
        ensure([b for b, _ in mine] == list(range(starts[part], starts[part] + 2 * len(mine), 2)),
               "partition %d offsets %s" % (part, mine))
        ensure(all(batches[s][0] == part and answers[s].count == 2 for _, s in mine), "partitions")
        for base, s in mine:
            remember(part, base, batches[s][1])


IDEM = [Record(b"idem-a", b"ik", {}, NOW), Record(b"idem-b", b"ik", {}, NOW)]
IDEM_BATCH = C.encode_batch(IDEM, producer_id=PID, base_sequence=0)


def c_idempotent():
    r1 = publish(sequence=1, topic=TOPIC, partition=1, batch=IDEM_BATCH)
    r2 = publish(sequence=2, topic=TOPIC, partition=1, batch=IDEM_BATCH)
    ensure(not r1.duplicate and r1.base_offset == 8 and r1.count == 2, "first %s" % r1)
    ensure(r2.duplicate and (r2.base_offset, r2.count) == (r1.base_offset, 2), "retry %s" % r2)
    remember(1, r1.base_offset, IDEM)
    nxt = [Record(b"idem-c", b"ik", {}, NOW)]
    r3 = publish(topic=TOPIC, partition=1, batch=C.encode_batch(nxt, producer_id=PID, base_sequence=2))
    ensure(not r3.duplicate and r3.base_offset == r1.base_offset + 2, "next %s" % r3)
    remember(1, r3.base_offset, nxt)


def c_gap():
    gap = C.encode_batch([Record(b"gap", None, {}, NOW)], producer_id=PID, base_sequence=10)
    expect_error(lambda: publish(topic=TOPIC, partition=1, batch=gap),
                 "FAILED_PRECONDITION", "OUT_OF_ORDER_SEQUENCE")


def c_idempotent_records():
    req = dict(topic=TOPIC, partition=1, producer_id=PID + 1, base_sequence=0,
               records=[pb.Record(key=b"pk", value=b"idem-plain", timestamp=NOW)])
    r1, r2 = publish(**req), publish(**req)
    ensure(not r1.duplicate and r1.base_offset == 11, "first %s" % r1)
    ensure(r2.duplicate and r2.base_offset == r1.base_offset, "retry %s" % r2)
    remember(1, r1.base_offset, [Record(b"idem-plain", b"pk", {}, NOW)])


def c_producer_mismatch():
    expect_error(lambda: publish(topic=TOPIC, partition=1, batch=IDEM_BATCH, producer_id=PID + 7),
                 "INVALID_ARGUMENT", "INVALID_ARGUMENT")
    # the header's own values are accepted: this is a retry of the first batch again
    r = publish(topic=TOPIC, partition=1, batch=IDEM_BATCH, producer_id=PID, base_sequence=0)
    ensure(r.duplicate and r.base_offset == 8, "same values %s" % r)


def c_fetch():
    for part in (0, 1):
        recs = [r for b in fetch_all(part) for r in b.records]
        exp = expected[part]
        ensure([r.offset for r in recs] == sorted(exp), "partition %d offsets" % part)
        for r in recs:
            e = exp[r.offset]
            where = "partition %d offset %d" % (part, r.offset)
            ensure(r.key == e.key and r.value == e.value, where + ": key/value")
            ensure(r.headers == e.headers, where + ": headers")
            if e.timestamp is None:
                ensure(abs(r.timestamp - NOW) < 60_000, where + ": broker timestamp")
            else:
                ensure(r.timestamp == e.timestamp, where + ": timestamp %d" % r.timestamp)
        plain = fetch_all(part, plain=True)
        ensure([(x.offset, x.key if x.HasField("key") else None, x.value, dict(x.headers), x.timestamp)
                for x in plain] == [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in recs],
               "partition %d: plain_records differ from the decoded batches" % part)
    ids = [(b.producer_id, b.base_sequence) for b in fetch_all(1) if b.producer_id > 0]
    ensure(ids == [(PID, 0), (PID, 2), (PID + 1, 0)], "producer ids kept: %s" % ids)


def c_subscribe_ack():
    group = "g-ack-" + RUN
    sub, got = subscribe_all(group, ack_deadline_ms=60_000)
    try:
        ensure(sorted((p, o) for p, o, _, _ in got) ==
               sorted((p, o) for p in expected for o in expected[p]), "delivered set")
        ensure(all(m[2] == expected[m[0]][m[1]].value for m in got), "values")
        ends = end_offsets()
        sub.send(heartbeat=True)
        sub.ack([m for m in got if m[0] == 0 and m[1] < 3])
        ensure(committed(group, [3, 0])[0] == 3, "partition 0 committed 3 after acking [0,3)")
        sub.ack([m for m in got if not (m[0] == 0 and m[1] < 3)])
        ensure(committed(group, ends) == ends, "committed %s, want %s" % (committed(group, ends, 0), ends))
        ensure(sub.collect(1, 0.3) == [], "nothing more delivered")
    finally:
        sub.close()


def c_delete_group():
    group = "g-ack-" + RUN
    req = pb.DeleteGroupRequest(group=group, topic=TOPIC)
    deadline = time.monotonic() + 5.0
    while True:
        try:
            stub.DeleteGroup(req, metadata=MD, timeout=T)
            break
        except grpc.RpcError as e:
            # The closed Subscribe stream's member leaves the group asynchronously.
            if e.code() != grpc.StatusCode.FAILED_PRECONDITION or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    ensure(committed(group, [-1, -1], 0) == [-1, -1], "offsets left after DeleteGroup")
    expect_error(lambda: stub.DeleteGroup(req, metadata=MD, timeout=T), "NOT_FOUND", "GROUP_NOT_FOUND")


REDELIVERY = {}


def c_redelivery():
    group = "g-redeliver-" + RUN
    t0 = time.monotonic()  # before the first delivery, so the deadline is at least 1 s after it
    sub, got = subscribe_all(group, ack_deadline_ms=1000, plain_records=True)
    REDELIVERY.update(sub=sub, group=group)
    ensure(all(m[3] == 1 for m in got), "delivery_count 1 at first")
    sub.ack([m for m in got if (m[0], m[1]) != (0, 1)])
    again = sub.collect(1, 6)
    waited = time.monotonic() - t0
    again += sub.collect(10, 0.3)
    ensure([(p, o, c) for p, o, _, c in again] == [(0, 1, 2)],
           "redelivered %s" % [(p, o, c) for p, o, _, c in again])
    ensure(waited >= 0.95, "redelivered %.2f s after subscribing, before the deadline" % waited)


def c_nack():
    sub, group = REDELIVERY["sub"], REDELIVERY["group"]
    try:
        sub.send(nack=pb.Nack(partition=0, offset=1))
        again = sub.collect(1, 3)
        ensure([(p, o, c) for p, o, _, c in again] == [(0, 1, 3)],
               "after nack %s" % [(p, o, c) for p, o, _, c in again])
        sub.ack(again)
        ends = end_offsets()
        ensure(committed(group, ends) == ends, "all committed after acking it")
    finally:
        sub.close()


def c_credit():
    sub = Subscription(group="g-credit-" + RUN, **{"from": pb.EARLIEST}, plain_records=True,
                       initial_credit=2, ack_deadline_ms=60_000)
    try:
        first = sub.collect(2, 5) + sub.collect(100, 1.0)
        ensure(len(first) == 2, "initial_credit=2 gave %d" % len(first))
        sub.send(credit=3)
        more = sub.collect(3, 5) + sub.collect(100, 1.0)
        ensure(len(more) == 3, "credit=3 without acks gave %d more" % len(more))
    finally:
        sub.close()


SNAPSHOT = []
GOOD = C.encode_batch([Record(b"good", b"k", {}, NOW)])


def snapshot():
    return [(b.base_offset, b.crc) for part in (0, 1) for b in fetch_all(part)]


def c_bad_crc():
    SNAPSHOT.append(snapshot())
    bad = bytearray(GOOD)
    bad[-2] ^= 0x01  # a flipped value bit
    expect_error(lambda: publish(topic=TOPIC, partition=0, batch=bytes(bad)),
                 "INVALID_ARGUMENT", "CORRUPT_BATCH")


def c_truncated():
    expect_error(lambda: publish(topic=TOPIC, partition=0, batch=GOOD[:-3]),
                 "INVALID_ARGUMENT", "CORRUPT_BATCH")


def c_unknown_topic():
    expect_error(lambda: publish(topic="pyconf-none-" + RUN, partition=0, batch=GOOD),
                 "NOT_FOUND", "TOPIC_NOT_FOUND")


def c_bad_name():
    expect_error(lambda: publish(topic="bad/name!", partition=0, batch=GOOD),
                 "INVALID_ARGUMENT", "INVALID_TOPIC_NAME")


def c_unchanged():
    ensure(SNAPSHOT and snapshot() == SNAPSHOT[0], "log changed")


def c_stream_error():
    bad = bytearray(GOOD)
    bad[16] ^= 0xFF
    reqs = [pb.PublishRequest(sequence=1, topic=TOPIC, partition=0, batch=bytes(bad)),
            pb.PublishRequest(sequence=2, topic=TOPIC, partition=0, batch=GOOD)]
    answers = {r.sequence: r for r in stub.PublishStream(iter(reqs), metadata=MD, timeout=15)}
    ensure(answers[1].error.code == "CORRUPT_BATCH", "bad batch: %s" % answers[1])
    ensure(not answers[2].HasField("error") and answers[2].base_offset == len(expected[0]),
           "good batch: %s" % answers[2])


def c_cleanup():
    for name in list(created):
        stub.DeleteTopic(pb.DeleteTopicRequest(name=name), metadata=MD, timeout=T)
        created.remove(name)
    left = [n for n in stub.ListTopics(pb.ListTopicsRequest(), metadata=MD, timeout=T).names
            if n.startswith(TOPIC)]
    ensure(not left, "left behind: %s" % left)


CHECKS = [
    ("codec selftest (FORMAT.md check values)", c_codec),
    ("CreateTopic / ListTopics / DescribeTopic, ALREADY_EXISTS, retention 0 vs none", c_admin),
    ("DeleteTopic, then NOT_FOUND", c_delete),
    ("Publish a RecordBatch", c_publish_batch),
    ("Publish plain records", c_publish_records),
    ("Publish with sync=true (field 8)", c_sync),
    ("PublishStream: 8 batches in flight, answers matched by sequence", c_stream),
    ("idempotent batch retried: duplicate with original offsets", c_idempotent),
    ("sequence gap: FAILED_PRECONDITION / OUT_OF_ORDER_SEQUENCE", c_gap),
    ("idempotent plain records retried: duplicate", c_idempotent_records),
    ("batch with another producer_id than its header: INVALID_ARGUMENT", c_producer_mismatch),
    ("Fetch + decode: keys, null key, headers, timestamps, plain_records", c_fetch),
    ("Subscribe + ack: committed offsets advance", c_subscribe_ack),
    ("DeleteGroup: offsets gone, then NOT_FOUND / GROUP_NOT_FOUND", c_delete_group),
    ("redelivery after a 1000 ms ack deadline, delivery_count 2", c_redelivery),
    ("nack: redelivered at once, delivery_count 3", c_nack),
    ("credit: initial_credit=2 gives 2, then credit=3 gives 3 more", c_credit),
    ("bad CRC: INVALID_ARGUMENT / CORRUPT_BATCH", c_bad_crc),
    ("truncated batch: INVALID_ARGUMENT / CORRUPT_BATCH", c_truncated),
    ("unknown topic: NOT_FOUND / TOPIC_NOT_FOUND", c_unknown_topic),
    ("invalid topic name: INVALID_ARGUMENT / INVALID_TOPIC_NAME", c_bad_name),
    ("log unchanged after the refused publishes", c_unchanged),
    ("PublishStream: a refused batch does not end the stream", c_stream_error),
    ("DeleteTopic of this run's topics", c_cleanup),
]


def main():
    failed = 0
    for i, (name, fn) in enumerate(CHECKS, 1):
        try:
            fn()
            print("ok   %2d %s" % (i, name), flush=True)
        except Exception as e:  # noqa: BLE001 - a check fails on anything, and the run goes on
            failed += 1
            why = e if isinstance(e, CheckFailed) else "%s: %s" % (type(e).__name__, e)
            print("FAIL %2d %s: %s" % (i, name, str(why).replace("\n", " ")[:300]), flush=True)
    for name in created:  # when the cleanup check itself failed part way
        try:
            stub.DeleteTopic(pb.DeleteTopicRequest(name=name), metadata=MD, timeout=T)
        except grpc.RpcError:
            pass
    channel.close()
    print("conformance: %d/%d checks passed against %s" % (len(CHECKS) - failed, len(CHECKS), ADDR))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
