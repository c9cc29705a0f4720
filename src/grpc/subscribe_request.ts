/**
 * The server's decoding of a SubscribeRequest, with a bound on the ranges of its acks.
 *
 * protobufjs builds an object per AckRange, and the server checks and applies each on
 * its event loop: one Acks message of a million ranges (7.7 MB, within the default
 * maxMessageBytes) held it about a second, every other client of the broker waiting
 * (2026-12-05, a reviewer). The client library sends at most 4096 ranges a message.
 * A message with more than MAX_ACK_RANGES is counted on the wire, before protobufjs
 * decodes it, and refused: the Subscribe call ends with INVALID_ARGUMENT, none of its
 * acks taken (what they named is redelivered, as after any failed call).
 */
import { pb, type uringmq } from './proto';
import { walkFields } from './wire';

/** Most AckRanges one SubscribeRequest's Acks may carry. */
export const MAX_ACK_RANGES = 65_536;

const ACKS_TAG = (2 << 3) | 2; // SubscribeRequest.acks: field 2, length-delimited
const RANGES_TAG = (1 << 3) | 2; // Acks.ranges: field 1, length-delimited

/** Decodes `b` as pb.SubscribeRequest.decode does, and throws as it does on a malformed one, or on one over the bound. */
export function decodeSubscribeRequest(b: Uint8Array): uringmq.v1.SubscribeRequest {
  // Each range takes at least 2 bytes (its tag and its length): a message this short is
  // within the bound, and not walked (acks and credits are small and frequent).
  if (b.length > 2 * MAX_ACK_RANGES) {
    const n = countAckRanges(b);
    if (n > MAX_ACK_RANGES)
      throw new Error(`an Acks message carries at most ${MAX_ACK_RANGES} ranges, this one ${n}: send them in several messages (none of these was taken)`);
  }
  return pb.SubscribeRequest.decode(b);
}

/** The AckRanges in b's acks fields, all of them summed; 0 when the walk meets what it does not expect (protobufjs then says what is wrong). */
function countAckRanges(b: Uint8Array): number {
  let count = 0;
  const countRanges = (t: number): boolean => {
    if (t === RANGES_TAG) count++;
    return true;
  };
  const ok = walkFields(b, 0, b.length, (tag, _start, end, valueStart) => tag !== ACKS_TAG || walkFields(b, valueStart, end, countRanges));
  return ok ? count : 0;
}
