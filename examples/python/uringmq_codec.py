"""RecordBatch v1 encoder/decoder for uringmq, written from docs/FORMAT.md alone.

The broker stores and serves the bytes a producer sends, so a client needs this codec
on both sides: to build `PublishRequest.batch` and to read `FetchResponse.batches` and
`Delivery.batches`. It is pure Python (no dependencies) so that it can be copied into
any project; CRC32C by table is fast enough for examples and tests, not for bulk data.

    from uringmq_codec import Record, encode_batch, decode_batches
    data = encode_batch([Record(b"hello", key=b"k", headers={"trace": b"1"})])
    for batch in decode_batches(fetch_response.batches):
        for rec in batch.records: ...
"""
import struct
import time

MAGIC = 0x424D5155
HEADER_LEN = 64
VERSION = 1
# The broker refuses timestamps outside 0 .. 2^52 - 1 (exact in a JavaScript double).
MAX_TIMESTAMP = (1 << 52) - 1
# Idempotent producer ids are 1 .. 2^53 - 1; -1 or 0 is none.
MAX_PRODUCER_ID = (1 << 53) - 1

# magic, batchLength, baseOffset, crc: the part of the header the CRC does not cover,
# so that the broker can stamp baseOffset without recomputing the checksum.
_HEAD = struct.Struct("<IIqI")
# version, attributes, headerLength, recordCount, lastOffsetDelta, firstTimestamp,
# maxTimestamp, producerId, baseSequence, reserved: bytes 20..63, covered by the CRC.
_TAIL = struct.Struct("<BBHIIqqqiI")


# CRC32C (Castagnoli, reflected polynomial 0x82F63B78). Not zlib.crc32: that is the
# IEEE polynomial, and a batch with it is refused as CORRUPT_BATCH.
def _make_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _make_table()


def crc32c(data, crc=0):
    """CRC32C of `data`; pass a previous result as `crc` to continue over more bytes."""
    crc ^= 0xFFFFFFFF
    table = _CRC_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _put_uvarint(out, n):
    if n < 0:
        raise ValueError("uvarint must be >= 0")
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _put_varint(out, n):
    # zigzag, so that small negative timestamp deltas stay short
    _put_uvarint(out, ((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF)


def _get_uvarint(buf, pos, end):
    result = 0
    for i in range(10):
        if pos >= end:
            raise ValueError("truncated uvarint")
        b = buf[pos]
        pos += 1
        if i == 9 and b > 1:
            raise ValueError("uvarint past 64 bits")
        result |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            return result, pos
    raise ValueError("uvarint longer than 10 bytes")


def _get_varint(buf, pos, end):
    u, pos = _get_uvarint(buf, pos, end)
    return (u >> 1) ^ -(u & 1), pos


def _take(buf, pos, n, end):
    if pos + n > end:
        raise ValueError("field runs past the end of its record")
    return bytes(buf[pos:pos + n]), pos + n


def _bytes(x):
    if isinstance(x, str):
        return x.encode()
    if isinstance(x, int):  # bytes(5) is five zero bytes, not data
        raise TypeError("a key, value or header must be bytes or str, not %s" % type(x).__name__)
    return bytes(x)


class Record:
    """One record. key None is a null key (distinct from b""); timestamp in ms.

    On encode, timestamp None means "now" (a RecordBatch's timestamps are the
    producer's: 0 would be stored as 0). On decode, `offset` is set.
    """
    __slots__ = ("value", "key", "headers", "timestamp", "offset")

    def __init__(self, value, key=None, headers=None, timestamp=None, offset=None):
        self.value = value
        self.key = key
        self.headers = headers or {}
        self.timestamp = timestamp
        self.offset = offset

    def __repr__(self):
        return "Record(offset=%r, timestamp=%r, key=%r, value=%r, headers=%r)" % (
            self.offset, self.timestamp, self.key, self.value, self.headers)


class Batch:
    """A decoded batch: header fields plus `records` (offsets already absolute)."""

    def __init__(self, base_offset, length, crc, first_timestamp, max_timestamp,
                 producer_id, base_sequence, records):
        self.base_offset = base_offset
        self.length = length
        self.crc = crc
        self.first_timestamp = first_timestamp
        self.max_timestamp = max_timestamp
        self.producer_id = producer_id
        self.base_sequence = base_sequence
        self.records = records

    @property
    def count(self):
        return len(self.records)

    def __repr__(self):
        return "Batch(base_offset=%d, count=%d, producer_id=%d, base_sequence=%d)" % (
            self.base_offset, self.count, self.producer_id, self.base_sequence)


def encode_batch(records, producer_id=-1, base_sequence=-1):
    """Encode `records` (a non-empty list of Record) as one RecordBatch.

    For an idempotent producer pass its id (> 0) and the sequence of the first record
    (the previous batch's base_sequence plus its record count, modulo 2^31); a retry
    must resend the same bytes. baseOffset is written as 0: the broker assigns it.
    """
    if not records:
        raise ValueError("a batch needs at least one record")
    if not -1 <= producer_id <= MAX_PRODUCER_ID:  # the broker refuses it: INVALID_ARGUMENT
        raise ValueError("producer id %d outside 1..2^53-1 (or -1, 0 for none)" % producer_id)
    now = int(time.time() * 1000)
    stamps = [now if r.timestamp is None else r.timestamp for r in records]
    for ts in stamps:
        if not 0 <= ts <= MAX_TIMESTAMP:
            raise ValueError("timestamp %d outside 0..2^52-1" % ts)
    first_ts = stamps[0]
    body = bytearray()
    for i, (r, ts) in enumerate(zip(records, stamps)):
        rec = bytearray(b"\x00")  # attributes
        _put_varint(rec, ts - first_ts)
        _put_uvarint(rec, i)  # offsetDelta
        if r.key is None:
            _put_uvarint(rec, 0)
        else:
            key = _bytes(r.key)
            _put_uvarint(rec, len(key) + 1)  # +1 so that 0 can mean "null key"
            rec += key
        value = _bytes(r.value)
        _put_uvarint(rec, len(value))
        rec += value
        _put_uvarint(rec, len(r.headers))
        for hk, hv in r.headers.items():
            hk, hv = _bytes(hk), _bytes(hv)
            _put_uvarint(rec, len(hk))
            rec += hk
            _put_uvarint(rec, len(hv))
            rec += hv
        _put_uvarint(body, len(rec))
        body += rec
    n = len(records)
    covered = _TAIL.pack(VERSION, 0, HEADER_LEN, n, n - 1, first_ts, max(stamps),
                         producer_id, base_sequence, 0) + bytes(body)
    return _HEAD.pack(MAGIC, HEADER_LEN + len(body), 0, crc32c(covered)) + covered


def decode_batch(buf, pos=0):
    """Decode the batch at buf[pos:], checking what the broker checks. Returns
    (Batch, position after it). Raises ValueError on anything malformed."""
    buf = memoryview(buf)
    if len(buf) - pos < HEADER_LEN:
        raise ValueError("truncated batch header")
    magic, length, base_offset, crc = _HEAD.unpack_from(buf, pos)
    if magic != MAGIC:
        raise ValueError("bad magic %#x" % magic)
    if length < HEADER_LEN or pos + length > len(buf):
        raise ValueError("batchLength %d does not fit the buffer" % length)
    (version, attributes, header_len, count, last_delta, first_ts, max_ts, producer_id,
     base_sequence, reserved) = _TAIL.unpack_from(buf, pos + 20)
    if version != VERSION or attributes != 0 or header_len != HEADER_LEN or reserved != 0:
        raise ValueError("unsupported header (version %d, attributes %d)" % (version, attributes))
    if count < 1 or last_delta != count - 1:
        raise ValueError("bad recordCount/lastOffsetDelta")
    end = pos + length
    if crc32c(buf[pos + 20:end]) != crc:
        raise ValueError("CRC32C mismatch")
    p = pos + HEADER_LEN
    records = []
    largest = -1
    for i in range(count):
        rec_len, p = _get_uvarint(buf, p, end)
        rec_end = p + rec_len
        if rec_end > end:
            raise ValueError("record %d runs past batchLength" % i)
        attrs, p = _take(buf, p, 1, rec_end)
        if attrs != b"\x00":
            raise ValueError("record attributes must be 0")
        ts_delta, p = _get_varint(buf, p, rec_end)
        offset_delta, p = _get_uvarint(buf, p, rec_end)
        if offset_delta != i:
            raise ValueError("offsetDelta %d at record %d" % (offset_delta, i))
        key_len, p = _get_uvarint(buf, p, rec_end)
        key = None
        if key_len:
            key, p = _take(buf, p, key_len - 1, rec_end)
        value_len, p = _get_uvarint(buf, p, rec_end)
        value, p = _take(buf, p, value_len, rec_end)
        n_headers, p = _get_uvarint(buf, p, rec_end)
        headers = {}
        for _ in range(n_headers):
            hk_len, p = _get_uvarint(buf, p, rec_end)
            hk, p = _take(buf, p, hk_len, rec_end)
            hv_len, p = _get_uvarint(buf, p, rec_end)
            # "replace": the broker stores header keys unchecked, and its decoders (and
            # FORMAT.md) turn bytes that are not UTF-8 into U+FFFD; a strict decode
            # would make the whole fetch fail on another producer's batch.
            headers[hk.decode("utf-8", "replace")], p = _take(buf, p, hv_len, rec_end)
        if p != rec_end:
            raise ValueError("record %d: fields do not fill its length" % i)
        if i == 0 and ts_delta != 0:
            raise ValueError("record 0 timestampDelta %d, not 0" % ts_delta)
        ts = first_ts + ts_delta
        if not 0 <= ts <= MAX_TIMESTAMP:
            raise ValueError("record %d timestamp %d outside 0..2^52-1" % (i, ts))
        largest = max(largest, ts)
        records.append(Record(value, key, headers, ts, base_offset + i))
    if p != end:
        raise ValueError("records do not end at batchLength")
    if max_ts != largest:
        raise ValueError("maxTimestamp %d, but the largest record timestamp is %d" % (max_ts, largest))
    return Batch(base_offset, length, crc, first_ts, max_ts, producer_id, base_sequence,
                 records), end


def decode_batches(buf):
    """Decode batches laid back to back (a FetchResponse's or a Delivery's `batches`).
    They are whole batches: the caller skips records outside the range it asked for."""
    batches = []
    pos = 0
    while pos < len(buf):
        batch, pos = decode_batch(buf, pos)
        batches.append(batch)
    return batches


# FORMAT.md's worked example: key "k", value "hi", timestamp 1700000000000.
_EXAMPLE = bytes.fromhex(
    "55514D42 4A000000 0000000000000000 62FCFC66"
    "01004000 01000000 00000000"
    "0068E5CF8B010000 0068E5CF8B010000"
    "FFFFFFFFFFFFFFFF FFFFFFFF 00000000"
    "09 00 00 00 026B 026869 00".replace(" ", ""))


def selftest():
    """Check the codec against FORMAT.md's check values; raises AssertionError."""
    assert crc32c(b"123456789") == 0xE3069283, "crc32c('123456789')"
    assert crc32c(bytes(32)) == 0x8A9136AA, "crc32c(32 zero bytes)"
    assert crc32c(_EXAMPLE[20:]) == 0x66FCFC62, "crc of the FORMAT.md example"
    assert encode_batch([Record(b"hi", b"k", timestamp=1700000000000)]) == _EXAMPLE, \
        "encoding of the FORMAT.md example"
    batch, end = decode_batch(_EXAMPLE)
    rec = batch.records[0]
    assert end == len(_EXAMPLE) and batch.count == 1 and batch.producer_id == -1
    assert (rec.key, rec.value, rec.headers, rec.timestamp, rec.offset) == \
        (b"k", b"hi", {}, 1700000000000, 0)
    for n in (0, -1, 1, -2, 63, -64, 64, 1 << 51, -(1 << 51)):
        out = bytearray()
        _put_varint(out, n)
        assert _get_varint(out, 0, len(out))[0] == n, "zigzag varint %d" % n
    recs = [Record(b"", None, {}, 5), Record(b"v" * 300, b"", {"h": b"\x00\xff", "": b""}, 3)]
    back = decode_batches(encode_batch(recs, producer_id=7, base_sequence=9))[0]
    assert (back.producer_id, back.base_sequence, back.max_timestamp) == (7, 9, 5)
    assert [(r.key, r.value, r.headers, r.timestamp) for r in back.records] == \
        [(r.key, r.value, r.headers, r.timestamp) for r in recs], "round trip"
    # A header key that is not UTF-8 (the broker stores it unchecked) reads as U+FFFD,
    # as in the broker's plain_records and the Node client: not an error for the batch.
    odd = decode_batch(encode_batch([Record(b"v", None, {b"\xffk\xc3": b"x"}, 1)]))[0]
    assert odd.records[0].headers == {"\ufffdk\ufffd": b"x"}, "header key not UTF-8"
    # Batches the broker refuses for their timestamps (FORMAT.md, "What the broker
    # checks"): the decoder refuses them too.
    two = encode_batch([Record(b"a", None, {}, 10), Record(b"b", None, {}, 12)])
    for what, patch in (("maxTimestamp not the largest", {40: 11}),
                        ("record 0 timestampDelta not 0", {66: 2, 40: 12}),  # record 0 at 11
                        ("timestamp past 2^52-1", {32: MAX_TIMESTAMP, 40: MAX_TIMESTAMP + 2}),
                        ("negative timestamp", {32: -20, 40: -18})):
        bad = bytearray(two)
        for at, v in patch.items():
            if at == 66:
                bad[at] = v
            else:
                struct.pack_into("<q", bad, at, v)
        struct.pack_into("<I", bad, 16, crc32c(bad[20:]))
        try:
            decode_batch(bad)
        except ValueError:
            continue
        raise AssertionError("decoded a batch with " + what)
    # What the broker or the Node encoder refuses, encode_batch refuses: an int is not
    # bytes (bytes(5) would be five zero bytes), nor a producer id past 2^53-1 or below -1.
    for what, kw in (("an int value", dict(records=[Record(5)])),
                     ("an int key", dict(records=[Record(b"v", 5)])),
                     ("an int header value", dict(records=[Record(b"v", None, {"h": 5})])),
                     ("producer id 2^53", dict(records=[Record(b"v")], producer_id=1 << 53)),
                     ("producer id -2", dict(records=[Record(b"v")], producer_id=-2))):
        try:
            encode_batch(**kw)
        except (TypeError, ValueError):
            continue
        raise AssertionError("encoded " + what)


if __name__ == "__main__":
    selftest()
    print("uringmq_codec selftest passed")
