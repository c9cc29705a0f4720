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
import { type Shape, shape, walkMessage } from './wire';

/** Most AckRanges one SubscribeRequest's Acks may carry, and ReturnedRanges its Returned. */
export const MAX_ACK_RANGES = 65_536;

const varints = (n: number): Array<[number, number]> => Array.from({ length: n }, (_, i) => [i + 1, 0]);
const ACKS = shape('Acks', [[1, shape('AckRange', varints(4))]], { field: 1, what: 'its ranges' });
const RETURNED = shape('Returned', [[1, shape('ReturnedRange', varints(5))]], { field: 1, what: 'its ranges' });
const SUBSCRIBE_REQUEST = shape('SubscribeRequest', [
  // topic, group and dead_letter_topic are strings, flow a FlowSettings, the rest varints
  [1, shape('SubscribeInit', varints(12).map(([n]): [number, number | Shape] => [n, n === 11 ? shape('FlowSettings', varints(5)) : n === 1 || n === 2 || n === 8 ? 2 : 0]))],
  [2, ACKS],
  [3, shape('Nack', varints(5))],
  [4, 0],
  [5, 0],
  [
    6,
    shape('Feedback', [
      [1, 1],
      [2, 1],
    ]),
  ],
  [7, RETURNED],
]);

/**
 * Decodes `b` as pb.SubscribeRequest.decode does, and throws as it does on a malformed
 * one, or as walkMessage does (a large one malformed, or over a bound: nothing of it decoded).
 */
export function decodeSubscribeRequest(b: Uint8Array): uringmq.v1.SubscribeRequest {
  // Each range takes at least 2 bytes (its tag and its length), as does every other
  // field: a message this short is within every bound, and not walked (acks and credits
  // are small and frequent).
  if (b.length > 2 * MAX_ACK_RANGES) {
    // One of the oneof's fields is what a client sends, each of its messages' fields
    // once; protobuf lets a field come again (the last counts), but 8 million empty
    // `subscribe` fields in 16 MB, each an object to protobufjs, held the event loop
    // 2 s, and as many fields inside one SubscribeInit, Nack or AckRange 0.25 s:
    // walkMessage bounds them all. Past the bound, ranges are counted, not walked.
    let acks = 0;
    let returned = 0;
    walkMessage(b, 0, b.length, SUBSCRIBE_REQUEST, (parent) => {
      const n = parent === ACKS ? ++acks : ++returned;
      return n <= MAX_ACK_RANGES ? 'walk' : 'skip';
    });
    if (acks > MAX_ACK_RANGES)
      throw new Error(`an Acks message carries at most ${MAX_ACK_RANGES} ranges, this one ${acks}: send them in several messages (none of these was taken)`);
    if (returned > MAX_ACK_RANGES)
      throw new Error(`a Returned message carries at most ${MAX_ACK_RANGES} ranges, this one ${returned}: none was taken (all that was delivered to this member is redelivered, counted)`);
  }
  return pb.SubscribeRequest.decode(b);
}
