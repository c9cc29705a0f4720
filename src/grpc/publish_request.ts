/**
 * The server's decoding of a PublishRequest, with a bound on its plain records.
 *
 * Each plain record costs the server's event loop about 0.8 µs to decode from protobuf
 * and as much again to encode into a RecordBatch: a 12 MB request of a million 8-byte
 * values held it 1.7 s, every other client of the broker waiting (2026-12-05). A request carries at most MAX_PLAIN_RECORDS of them; one with more is
 * counted on the wire, before protobufjs builds an object per record, and refused alone
 * (INVALID_ARGUMENT; on a PublishStream the stream goes on). Batches a client encodes
 * itself (docs/FORMAT.md) are checked in the core, off this thread, and have no such bound.
 */
import { pb, type uringmq } from './proto';
import { walkFields } from './wire';

/** Most plain records (PublishRequest.records) one PublishRequest may carry. */
export const MAX_PLAIN_RECORDS = 10_000;

/** A decoded PublishRequest; `plainRecordsOver` set: it carried that many plain records (over the bound), left out of `records`. */
export type DecodedPublishRequest = uringmq.v1.PublishRequest & { plainRecordsOver?: number };

const RECORDS_TAG = (5 << 3) | 2; // field 5, length-delimited

/**
 * Decodes `b` as pb.PublishRequest.decode does (and throws as it does on a malformed
 * one), except that more than MAX_PLAIN_RECORDS plain records are counted, not decoded.
 */
export function decodePublishRequest(b: Uint8Array): DecodedPublishRequest {
  // Each record takes at least 2 bytes (its tag and its length): a request this short
  // cannot be over the bound, and is not walked (the hot path: one request per batch).
  const over = b.length > 2 * MAX_PLAIN_RECORDS ? overBound(b) : null;
  if (over === null) return pb.PublishRequest.decode(b);
  // The other fields (a few dozen bytes: sequence, topic, partition ...), without the
  // records, so the refusal can name its sequence and topic.
  const rest = Buffer.concat(over.rest.map(([s, e]) => b.subarray(s, e)));
  const req = pb.PublishRequest.decode(rest) as DecodedPublishRequest;
  req.plainRecordsOver = over.count;
  return req;
}

/**
 * Counts the records among the top-level fields. Null when they are within the bound,
 * or when the walk meets something it does not expect (a group, a field running past
 * the end): protobufjs then decodes the whole and says what is wrong.
 */
function overBound(b: Uint8Array): { count: number; rest: Array<[number, number]> } | null {
  let count = 0;
  const rest: Array<[number, number]> = [];
  const ok = walkFields(b, 0, b.length, (tag, start, end) => {
    if (tag === RECORDS_TAG) count++;
    else rest.push([start, end]);
    return true;
  });
  return ok && count > MAX_PLAIN_RECORDS ? { count, rest } : null;
}
