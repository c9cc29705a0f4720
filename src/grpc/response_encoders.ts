/**
 * The two responses the broker sends per batch, serialized by hand (and the rare
 * others by protobufjs, with the same room for the transport's framing in front): protobufjs's
 * Writer builds a list of operations, a Long per 64-bit field and its own buffer for
 * each message, and at 10k acks/s and as many deliveries that was a tenth of the
 * server's garbage. Wire format as in proto/uringmq/v1/broker.proto; proto3 fields
 * at their default (0, false) are left out, as protobufjs does, and the tests check
 * both byte for byte against protobufjs.
 */
import { uvarintSize, writeUvarint } from '../codec/record_batch';
import { pb, type uringmq } from './proto';

/** A uint64 as protobufjs's decoder gives it (a Long) or as a caller writes it. */
type Uint64 = NonNullable<uringmq.v1.PublishResponse.$Properties['sequence']>;

/**
 * SubscribeResponse { delivery { partition, batches, from_offset, to_offset, delivery_count } } after
 * `headroom` spare bytes, straight from the bytes read off the log: one copy into the
 * message, done before it is handed to the transport, so the read buffer can go back
 * to its pool at once. protobufjs would serialize later (grpc-js queues writes) from
 * a buffer we could not reuse, into a fresh buffer of its own.
 */
export function encodeDeliveryResponse(headroom: number, partition: number, batches: Buffer, from: number, to: number, deliveryCount = 1, epoch = 0): Buffer {
  const count = deliveryCount > 1 ? deliveryCount : 0; // a first delivery leaves it out
  const inner = fieldSize(partition) + 1 + uvarintSize(batches.length) + batches.length + fieldSize(from) + fieldSize(to) + fieldSize(count) + fieldSize(epoch);
  const out = Buffer.allocUnsafe(headroom + 1 + uvarintSize(inner) + inner);
  let pos = headroom;
  out[pos++] = 0x12; // SubscribeResponse.delivery = 2, length-delimited
  pos = writeUvarint(out, pos, inner);
  pos = putField(out, pos, 0x08, partition); // Delivery.partition = 1, varint
  out[pos++] = 0x12; // Delivery.batches = 2, length-delimited
  pos = writeUvarint(out, pos, batches.length);
  pos += batches.copy(out, pos);
  pos = putField(out, pos, 0x18, from); // Delivery.from_offset = 3, varint
  pos = putField(out, pos, 0x20, to); // Delivery.to_offset = 4, varint
  pos = putField(out, pos, 0x30, count); // Delivery.delivery_count = 6, varint
  putField(out, pos, 0x38, epoch); // Delivery.epoch = 7, varint
  return out;
}

/** Any other SubscribeResponse (an assignment, plain records, redeliveries), by protobufjs, after `headroom` spare bytes. */
export function encodeSubscribeResponse(headroom: number, res: uringmq.v1.SubscribeResponse.$Properties): Buffer {
  return withHeadroom(headroom, pb.SubscribeResponse.encode(res).finish());
}

/** `msg` after `headroom` spare bytes, in a buffer of its own. */
function withHeadroom(headroom: number, msg: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(headroom + msg.length);
  out.set(msg, headroom);
  return out;
}

/** Bytes of a varint field holding v: none at its default, 0 (proto3 leaves it out). */
function fieldSize(v: number): number {
  return v === 0 ? 0 : 1 + uvarintSize(v);
}

/** Writes a varint field (its one-byte tag, then v) unless v is 0; returns the position after it. */
function putField(out: Buffer, pos: number, tag: number, v: number): number {
  if (v === 0) return pos;
  out[pos++] = tag;
  return writeUvarint(out, pos, v);
}

/** A request's sequence (uint64: a Long from protobufjs's decoder) as a number, or -1 past 2^53. */
function sequenceNumber(seq: Uint64 | null | undefined): number {
  if (seq === null || seq === undefined) return 0;
  if (typeof seq === 'number') return seq;
  const high = seq.high >>> 0;
  return high < 0x20_0000 ? high * 0x1_0000_0000 + (seq.low >>> 0) : -1;
}

/**
 * PublishResponse { sequence, partition, base_offset, count, duplicate } for an
 * appended batch, after `prefix` bytes left for the caller (the gRPC message prefix
 * on the server's direct path). Null when a value is outside what this encoder
 * writes (a negative base offset, a sequence past 2^53): protobufjs then.
 */
function encodePublishAck(prefix: number, sequence: number, partition: number, baseOffset: number, count: number, duplicate: boolean): Buffer | null {
  if (sequence < 0 || baseOffset < 0 || !Number.isSafeInteger(sequence) || !Number.isSafeInteger(baseOffset)) return null;
  const out = Buffer.allocUnsafe(prefix + fieldSize(sequence) + fieldSize(partition) + fieldSize(baseOffset) + fieldSize(count) + fieldSize(duplicate ? 1 : 0));
  let pos = putField(out, prefix, 0x08, sequence); // sequence = 1
  pos = putField(out, pos, 0x10, partition); // partition = 2
  pos = putField(out, pos, 0x18, baseOffset); // base_offset = 3
  pos = putField(out, pos, 0x20, count); // count = 4
  putField(out, pos, 0x28, duplicate ? 1 : 0); // duplicate = 5 (bool: a varint)
  return out;
}

/**
 * A PublishStream answer, serialized after `headroom` spare bytes (the transport's
 * framing goes there): the ack of an appended batch by hand, anything else (an error,
 * a value the hand encoder does not write) with protobufjs.
 */
export function publishAnswer(headroom: number, sequence: Uint64, r: { partition: number; baseOffset: number; count: number; duplicate: boolean } | uringmq.v1.IError): Buffer {
  if ('baseOffset' in r) {
    const fast = encodePublishAck(headroom, sequenceNumber(sequence), r.partition, r.baseOffset, r.count, r.duplicate);
    if (fast) return fast;
  }
  const res: uringmq.v1.PublishResponse.$Properties =
    'baseOffset' in r ? { sequence, partition: r.partition, base_offset: r.baseOffset, count: r.count, duplicate: r.duplicate } : { sequence, error: r };
  return withHeadroom(headroom, pb.PublishResponse.encode(res).finish());
}
