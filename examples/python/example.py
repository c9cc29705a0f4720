#!/usr/bin/python3
"""uringmq from Python: publish a few messages, then consume them as a group member.

usage: example.py [HOST:PORT] [N]      (defaults: 127.0.0.1:50051, N = 5)

Publishes 5 messages to topic "py-example" (created if missing), then subscribes as a
member of group "py-example-group" and stops after handling N messages (or 30 s).
Set URINGMQ_AUTH_TOKEN for a broker started with --auth-token. Stubs are imported
from $UMQ_STUBS or ./gen (see README.md for the protoc command).
"""
import os
import queue
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("UMQ_STUBS") or os.path.join(HERE, "gen"))
sys.path.insert(0, HERE)

import grpc  # noqa: E402
from uringmq.v1 import broker_pb2 as pb  # noqa: E402
from uringmq.v1 import broker_pb2_grpc as pbg  # noqa: E402
from uringmq_codec import Record, decode_batches, encode_batch  # noqa: E402

TOPIC, GROUP = "py-example", "py-example-group"
TOKEN = os.environ.get("URINGMQ_AUTH_TOKEN")
# Every call carries the token when there is one; without it such a broker answers UNAUTHENTICATED.
MD = (("authorization", "Bearer " + TOKEN),) if TOKEN else None


def connect(address):
    # A fetch or a delivery carries at least one whole batch, up to the broker's max
    # message size (16 MiB by default): grpcio refuses anything over 4 MiB unless told.
    channel = grpc.insecure_channel(address, options=[("grpc.max_receive_message_length", 32 << 20)])
    return channel, pbg.BrokerStub(channel)


def ensure_topic(stub, name):
    try:
        stub.DescribeTopic(pb.DescribeTopicRequest(name=name), metadata=MD, timeout=10)
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.NOT_FOUND:
            raise
        try:
            stub.CreateTopic(pb.CreateTopicRequest(name=name, partitions=1), metadata=MD, timeout=10)
            print("created topic", name)
        except grpc.RpcError as e2:
            if e2.code() != grpc.StatusCode.ALREADY_EXISTS:  # someone else was quicker: fine
                raise


def publish(stub):
    # An idempotent producer has an id from 1 to 2^53-1 and numbers its records from 0.
    # A retry of the same bytes is answered `duplicate` with the original offsets, not
    # written twice, so retrying on UNAVAILABLE is safe.
    producer_id = random.randrange(1, 1 << 53)
    batch = encode_batch([Record(b"order %d" % i, key=b"customer-%d" % (i % 2),
                                 headers={"source": b"example.py"}) for i in range(3)],
                         producer_id=producer_id, base_sequence=0)
    for attempt in range(5):
        try:
            r = stub.Publish(pb.PublishRequest(topic=TOPIC, batch=batch), metadata=MD, timeout=10)
            break
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.UNAVAILABLE or attempt == 4:
                raise
            time.sleep(0.2 * (attempt + 1))
    print("batch of %d at partition %d offset %d%s" % (
        r.count, r.partition, r.base_offset, " (a retry, already written)" if r.duplicate else ""))
    # Plain records: the broker encodes them (timestamp 0 = the broker's clock).
    r = stub.Publish(pb.PublishRequest(topic=TOPIC, records=[
        pb.Record(key=b"customer-9", value=b"plain record", headers={"source": b"example.py"}),
        pb.Record(value=b"no key, no headers")]), metadata=MD, timeout=10)
    print("%d plain records at partition %d offset %d" % (r.count, r.partition, r.base_offset))


def messages(d):
    """(partition, offset, key, value, delivery_count) of one Delivery: its `records`, or
    those of its whole `batches` in [from_offset, to_offset) (the rest is not ours)."""
    for r in d.records:
        yield r.partition, r.offset, r.key if r.HasField("key") else None, r.value, r.delivery_count
    for b in decode_batches(d.batches):
        for r in b.records:
            if d.from_offset <= r.offset < d.to_offset:
                yield d.partition, r.offset, r.key, r.value, max(1, d.delivery_count)


def consume(stub, n, within=30, buffer=64):
    outgoing = queue.Queue()  # acks and credit, sent by gRPC's thread from requests()

    def requests():
        yield pb.SubscribeRequest(subscribe=pb.SubscribeInit(
            topic=TOPIC, group=GROUP, **{"from": pb.EARLIEST}, initial_credit=buffer,
            ack_deadline_ms=30_000))
        while True:
            try:
                m = outgoing.get(timeout=3)
            except queue.Empty:  # a member silent for 10 s leaves the group
                m = pb.SubscribeRequest(heartbeat=True)
            if m is None:
                return  # half-close: the broker takes what was sent, then ends the stream
            yield m

    handled = 0
    call = stub.Subscribe(requests(), metadata=MD, timeout=within)
    try:
        for resp in call:
            if resp.HasField("assignment"):  # sent first, and again on every rebalance
                a = resp.assignment
                print("member %s, generation %d, partitions %s" % (a.member_id, a.generation, list(a.partitions)))
                continue
            for partition, offset, key, value, count in messages(resp.delivery):
                if handled == n:
                    break  # not acked: the group gets it again after the ack deadline
                print("  %d/%d  p%d@%d key=%r value=%r delivery %d" % (
                    handled + 1, n, partition, offset, key, value, count))
                # The delivery's epoch: had a CommitOffset moved the partition since, this
                # ack is ignored rather than taken for the offset's next delivery.
                outgoing.put(pb.SubscribeRequest(acks=pb.Acks(ranges=[
                    pb.AckRange(partition=partition, from_offset=offset, to_offset=offset + 1,
                                epoch=resp.delivery.epoch)])))
                outgoing.put(pb.SubscribeRequest(credit=1))  # room for one more in our buffer
                handled += 1
                if handled == n:
                    outgoing.put(None)
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
            raise
        print("gave up after %d s" % within)
    return handled


def main():
    address = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    channel, stub = connect(address)
    with channel:
        ensure_topic(stub, TOPIC)
        publish(stub)
        handled = consume(stub, n)
        offsets = stub.GetCommittedOffsets(pb.GetCommittedOffsetsRequest(group=GROUP, topic=TOPIC),
                                           metadata=MD, timeout=10).offsets
        print("handled %d of %d; group %s committed %s" % (handled, n, GROUP, list(offsets)))
    return 0 if handled == n else 1


if __name__ == "__main__":
    sys.exit(main())
