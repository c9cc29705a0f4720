/**
 * Serialized uringmq.v1.PublishRequest { sequence = 1, topic = 2, partition = 3,
 * batch = 4, sync = 8 } built around a RecordBatch in two steps, without protobufjs:
 *
 * - prepareBatch, when the app calls send/sendBatch: encodes (and checks) the
 *   records into a pooled buffer, leaving room in front for the request's fields;
 * - finishRequest, when the batch goes out: stamps the producer id and sequence
 *   (known only then), seals the CRC and writes the fields right before the batch.
 *
 * One allocation and no copy of the batch: protobufjs would copy it into its writer.
 * Field order on the wire does not matter to protobuf decoders.
 */
import type { BufferPool } from '../codec/buffer_pool';
import { GRPC_PREFIX_BYTES } from '../grpc/framing';
import { encodeBatch, encodeSent, sealBatch, stampProducer, uvarintSize, writeUvarint, type RecordInput } from '../codec/record_batch';

export interface PreparedBatch {
  /** The pooled buffer: [room for the fields][batch]. */
  readonly buf: Buffer;
  /** Where the batch starts and ends in buf. */
  readonly start: number;
  readonly end: number;
  readonly count: number;
}

/**
 * Most bytes the fields before the batch take (four tags, the topic, and varints:
 * seq ≤ 2^53; and `sync`, tag and value), and the gRPC prefix in front of them.
 */
function roomFor(topicBytes: number): number {
  return GRPC_PREFIX_BYTES + 4 + 8 + uvarintSize(topicBytes) + topicBytes + 5 + 5 + 2;
}

/** Encodes records for `topic` (shape errors name "<what>, record i"; `now`: the timestamp of records without one). */
export function prepareBatch(pool: BufferPool, topic: string, records: readonly RecordInput[], what?: string, now?: number): PreparedBatch {
  const room = roomFor(Buffer.byteLength(topic));
  let buf: Buffer | null = null;
  const batch = encodeBatch(records, {
    what,
    now,
    alloc: (size) => {
      buf = pool.acquire(room + size);
      return buf.subarray(room, room + size);
    },
  });
  return { buf: buf!, start: room, end: room + batch.length, count: records.length };
}

/**
 * prepareBatch for send()s' records (encodeSent): one whose bytes were detached since
 * its send() is taken out of `records`, and its sender out of `senders` and rejected;
 * null when none is left.
 */
export function prepareSent(pool: BufferPool, topic: string, records: RecordInput[], senders: { reject(e: Error): void }[]): PreparedBatch | null {
  const room = roomFor(Buffer.byteLength(topic));
  let buf: Buffer | null = null;
  const alloc = (size: number) => {
    buf = pool.acquire(room + size);
    return buf.subarray(room, room + size);
  };
  const batch = encodeSent(records, { alloc }, topic, senders);
  return batch && { buf: buf!, start: room, end: room + batch.length, count: records.length };
}

/**
 * The most bytes the request for `p` can take (the fields' room is their upper bound),
 * whatever its sequence number: what a size limit is checked against before sending.
 */
export function maxRequestBytes(p: PreparedBatch): number {
  return p.end - GRPC_PREFIX_BYTES;
}

/**
 * The request's bytes: a view of prepared.buf, valid until that goes back to the pool,
 * with at least GRPC_PREFIX_BYTES of it free in front.
 */
export function finishRequest(p: PreparedBatch, seq: number, topic: string, partition: number, producer: { producerId: number; baseSequence: number } | null, sync = false): Buffer {
  const batch = p.buf.subarray(p.start, p.end);
  if (producer) stampProducer(batch, producer.producerId, producer.baseSequence);
  sealBatch(batch);
  const topicBytes = Buffer.byteLength(topic);
  const head = 1 + uvarintSize(seq) + 1 + uvarintSize(topicBytes) + topicBytes + 1 + uvarintSize(partition) + (sync ? 2 : 0) + 1 + uvarintSize(batch.length);
  const from = p.start - head;
  const msg = p.buf;
  let pos = from;
  msg[pos++] = 0x08;
  pos = writeUvarint(msg, pos, seq);
  msg[pos++] = 0x12;
  pos = writeUvarint(msg, pos, topicBytes);
  pos += msg.write(topic, pos, 'utf8');
  msg[pos++] = 0x18;
  pos = writeUvarint(msg, pos, partition);
  if (sync) {
    msg[pos++] = 0x40; // field 8, varint
    msg[pos++] = 1;
  }
  msg[pos++] = 0x22;
  pos = writeUvarint(msg, pos, batch.length);
  if (pos !== p.start) throw new Error(`uringmq bug: PublishRequest fields end at ${pos}, batch starts at ${p.start}`);
  return msg.subarray(from, p.end);
}
