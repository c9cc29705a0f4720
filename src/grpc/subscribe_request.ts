/**
 * The server's decoding of a SubscribeRequest, with a bound on the ranges of its acks.
 *
 * protobufjs builds an object per AckRange, and the server checks and applies each on
 * its event loop: one Acks message of a million ranges (7.7 MB, within the default
 * maxMessageBytes) held it about a second, every other client of the broker waiting
 * (2026-12-05, a reviewer). The client library sends at most 4096 ranges a message.
 * A message with more than MAX_ACK_RANGES is counted on the wire, before protobufjs
 * decodes it, and refused: the Subscribe call ends with INVALID_ARGUMENT, none of its
 * acks taken (what they named is redelivered, as after any failed call). A Returned
 * message (sent once, at close) has the same bound on its ranges: one of a million
 * held the event loop about 2 s (2026-12-06, a reviewer).
 */
import { pb, type uringmq } from './proto';
import { walkFields } from './wire';

/** Most AckRanges one SubscribeRequest's Acks may carry, and ReturnedRanges its Returned. */
export const MAX_ACK_RANGES = 65_536;

/** Most top-level fields a SubscribeRequest (a oneof: one field) may have. */
const MAX_FIELDS = 64;

const ACKS_TAG = (2 << 3) | 2; // SubscribeRequest.acks: field 2, length-delimited
const RETURNED_TAG = (7 << 3) | 2; // SubscribeRequest.returned: field 7, length-delimited
const RANGES_TAG = (1 << 3) | 2; // Acks.ranges and Returned.ranges: field 1, length-delimited

/** Decodes `b` as pb.SubscribeRequest.decode does, and throws as it does on a malformed one, or on one over the bound. */
export function decodeSubscribeRequest(b: Uint8Array): uringmq.v1.SubscribeRequest {
  // Each range takes at least 2 bytes (its tag and its length): a message this short is
  // within the bound, and not walked (acks and credits are small and frequent).
  if (b.length > 2 * MAX_ACK_RANGES) {
    const { acks, returned, fields } = countRanges(b);
    // One of the oneof's fields is what a client sends; protobuf lets it come again (the
    // last counts), but 8 million empty `subscribe` fields in 16 MB, each an object to
    // protobufjs, held the event loop 2 s.
    if (fields > MAX_FIELDS) throw new Error(`a SubscribeRequest of more than ${MAX_FIELDS} fields: a client sends one`);
    if (acks > MAX_ACK_RANGES)
      throw new Error(`an Acks message carries at most ${MAX_ACK_RANGES} ranges, this one ${acks}: send them in several messages (none of these was taken)`);
    if (returned > MAX_ACK_RANGES)
      throw new Error(`a Returned message carries at most ${MAX_ACK_RANGES} ranges, this one ${returned}: none was taken (all that was delivered to this member is redelivered, counted)`);
  }
  return pb.SubscribeRequest.decode(b);
}

/** The ranges in b's acks and returned fields, each summed; 0 when the walk meets what it does not expect (protobufjs then says what is wrong). */
function countRanges(b: Uint8Array): { acks: number; returned: number; fields: number } {
  let acks = 0;
  let returned = 0;
  let fields = 0;
  const ok = walkFields(b, 0, b.length, (tag, _start, end, valueStart) => {
    if (++fields > MAX_FIELDS) return false;
    if (tag === ACKS_TAG) return walkFields(b, valueStart, end, (t) => (t === RANGES_TAG && acks++, true));
    if (tag === RETURNED_TAG) return walkFields(b, valueStart, end, (t) => (t === RANGES_TAG && returned++, true));
    return true;
  });
  return ok || fields > MAX_FIELDS ? { acks, returned, fields } : { acks: 0, returned: 0, fields: 0 };
}
