/**
 * The server's decoding of a PublishRequest, with a bound on its plain records and
 * on their headers.
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

/**
 * Most headers (Record.headers entries) its plain records may carry in all: each is
 * an object protobufjs builds and a header the server encodes, about 1 µs of the event
 * loop. Without it, 10,000 records of 250 two-letter headers each (14 MB) held it 2.3 s.
 */
export const MAX_PLAIN_HEADERS = 100_000;

/**
 * A decoded PublishRequest. `plainRecordsOver` set: it carried that many plain records
 * (over the bound); `plainHeadersOver` set: its records carried more than
 * MAX_PLAIN_HEADERS headers (counted up to there). Either way `records` is left out.
 */
export type DecodedPublishRequest = uringmq.v1.PublishRequest & { plainRecordsOver?: number; plainHeadersOver?: number };

/**
 * Most fields a PublishRequest may have besides its records, and a record besides its
 * headers (a client sends each field once: 7 and 3 at most). protobuf lets a field
 * come again (the last one counts), but 8 million empty `topic` fields in 16 MB cost
 * the event loop 4.2 s (the walk below kept each one's place).
 */
export const MAX_OTHER_FIELDS = 64;

const RECORDS_TAG = (5 << 3) | 2; // field 5, length-delimited
const HEADERS_TAG = (3 << 3) | 2; // Record.headers: field 3, length-delimited (one map entry each)

/**
 * Decodes `b` as pb.PublishRequest.decode does (and throws as it does on a malformed
 * one), except that more than MAX_PLAIN_RECORDS plain records are counted, not decoded,
 * and a request with more than MAX_OTHER_FIELDS fields besides its records (or a record
 * with as many besides its headers) throws, undecoded.
 */
export function decodePublishRequest(b: Uint8Array): DecodedPublishRequest {
  // Each record and each header takes at least 2 bytes (its tag and its length): a
  // request this short cannot be over either bound, and is not walked (the hot path:
  // one request per batch).
  const over = b.length > 2 * MAX_PLAIN_RECORDS ? overBound(b) : null;
  if (over === null) return pb.PublishRequest.decode(b);
  // The other fields (a few dozen bytes: sequence, topic, partition ...), without the
  // records, so the refusal can name its sequence and topic.
  const rest = Buffer.concat(over.rest.map(([s, e]) => b.subarray(s, e)));
  const req = pb.PublishRequest.decode(rest) as DecodedPublishRequest;
  if (over.count > MAX_PLAIN_RECORDS) req.plainRecordsOver = over.count;
  else req.plainHeadersOver = over.headers;
  return req;
}

/**
 * Counts the records among the top-level fields. Null when they are within the bound,
 * or when the walk meets something it does not expect (a group, a field running past
 * the end): protobufjs then decodes the whole and says what is wrong.
 */
function overBound(b: Uint8Array): { count: number; headers: number; rest: Array<[number, number]> } | null {
  let count = 0;
  let headers = 0;
  /** Fields of the record being walked that are not headers. */
  let recordFields = 0;
  const countHeader = (tag: number) => {
    if (tag === HEADERS_TAG) headers++;
    else if (++recordFields > MAX_OTHER_FIELDS) throw new Error(`a record with more than ${MAX_OTHER_FIELDS} fields besides its headers (record ${count - 1})`);
    return true;
  };
  const rest: Array<[number, number]> = [];
  const ok = walkFields(b, 0, b.length, (tag, start, end, valueStart) => {
    if (tag === RECORDS_TAG) {
      count++;
      recordFields = 0;
      // Past the bound, the other records' headers are not walked (a record that does
      // not walk is protobufjs's to report, unless the request is refused anyway).
      if (headers <= MAX_PLAIN_HEADERS) walkFields(b, valueStart, end, countHeader);
    } else if (rest.push([start, end]) > MAX_OTHER_FIELDS) throw new Error(`more than ${MAX_OTHER_FIELDS} fields besides the records`);
    return true;
  });
  return ok && (count > MAX_PLAIN_RECORDS || headers > MAX_PLAIN_HEADERS) ? { count, headers, rest } : null;
}
