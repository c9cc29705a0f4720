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
import { MAX_FIELDS, shape, walkMessage } from './wire';

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
 * Most fields a PublishRequest may have besides its records, a record besides its
 * headers, and a header (a client sends each field once: 7, 3 and 2 at most). protobuf
 * lets a field come again (the last one counts), but 8 million empty `topic` fields in
 * 16 MB cost the event loop 4.2 s (the walk below kept each one's place), and 8 million
 * empty keys in one header 60 ms.
 */
export const MAX_OTHER_FIELDS = MAX_FIELDS;

const HEADER = shape('header', [
  [1, 2],
  [2, 2],
]);
const RECORD = shape(
  'record',
  [
    [1, 2],
    [2, 2],
    [3, HEADER],
    [4, 0],
  ],
  { field: 3, what: 'its headers' },
);
const PUBLISH_REQUEST = shape(
  'PublishRequest',
  [
    [1, 0],
    [2, 2],
    [3, 0],
    [4, 2],
    [5, RECORD],
    [6, 0],
    [7, 0],
    [8, 0],
  ],
  { field: 5, what: 'the records' },
);

/**
 * Decodes `b` as pb.PublishRequest.decode does, except that more than MAX_PLAIN_RECORDS
 * plain records (or MAX_PLAIN_HEADERS headers) are counted, not decoded, and a request
 * that walkMessage refuses (malformed, or a message of it with more than
 * MAX_OTHER_FIELDS fields) throws, undecoded.
 */
export function decodePublishRequest(b: Uint8Array): DecodedPublishRequest {
  // Each record and each header takes at least 2 bytes (its tag and its length), as
  // does every other field: a request this short is within every bound, and is not
  // walked (the hot path: one request per batch).
  if (b.length <= 2 * MAX_PLAIN_RECORDS) return pb.PublishRequest.decode(b);
  const over = overBound(b);
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
 * Counts the records and their headers (past either bound, the records are only
 * counted: the request is refused). Null when they are within the bounds.
 */
function overBound(b: Uint8Array): { count: number; headers: number; rest: Array<[number, number]> } | null {
  let count = 0;
  let headers = 0;
  const rest: Array<[number, number]> = [];
  walkMessage(
    b,
    0,
    b.length,
    PUBLISH_REQUEST,
    (parent) => {
      if (parent === PUBLISH_REQUEST) return ++count <= MAX_PLAIN_RECORDS && headers <= MAX_PLAIN_HEADERS ? 'walk' : 'skip';
      return ++headers <= MAX_PLAIN_HEADERS ? 'walk' : 'stop';
    },
    (start, end) => {
      rest.push([start, end]);
    },
  );
  return count > MAX_PLAIN_RECORDS || headers > MAX_PLAIN_HEADERS ? { count, headers, rest } : null;
}
