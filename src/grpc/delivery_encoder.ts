/**
 * SubscribeResponse { delivery { partition, batches, from_offset, to_offset } },
 * serialized by hand straight from the bytes read off the log: one copy into the
 * message, done before call.write() returns, so the read buffer can go back to its
 * pool at once. protobufjs would serialize later (grpc-js queues writes) from a
 * buffer we could not reuse, into a fresh buffer of its own. Wire format as in
 * proto/uringmq/v1/broker.proto (checked against protobufjs in the tests).
 */
import { uvarintSize, writeUvarint } from '../codec/record_batch';

export function encodeDeliveryResponse(partition: number, batches: Buffer, from: number, to: number): Buffer {
  // proto3: fields at their default (0) are left out, as protobufjs does.
  const field = (v: number) => (v === 0 ? 0 : 1 + uvarintSize(v));
  const inner = field(partition) + 1 + uvarintSize(batches.length) + batches.length + field(from) + field(to);
  const out = Buffer.allocUnsafe(1 + uvarintSize(inner) + inner);
  let pos = 0;
  out[pos++] = 0x12; // SubscribeResponse.delivery = 2, length-delimited
  pos = writeUvarint(out, pos, inner);
  if (partition !== 0) {
    out[pos++] = 0x08; // Delivery.partition = 1, varint
    pos = writeUvarint(out, pos, partition);
  }
  out[pos++] = 0x12; // Delivery.batches = 2, length-delimited
  pos = writeUvarint(out, pos, batches.length);
  pos += batches.copy(out, pos);
  if (from !== 0) {
    out[pos++] = 0x18; // Delivery.from_offset = 3, varint
    pos = writeUvarint(out, pos, from);
  }
  if (to !== 0) {
    out[pos++] = 0x20; // Delivery.to_offset = 4, varint
    writeUvarint(out, pos, to);
  }
  return out;
}
