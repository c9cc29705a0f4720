/**
 * A walk over the fields of protobuf bytes, without decoding them: what the bounds on
 * plain records (publish_request.ts) and on ack ranges (subscribe_request.ts) count
 * before protobufjs builds an object per element.
 */

/** Where the last readVarint() ended (a module variable, not a closure: see walkFields). */
let varintEnd = 0;

/** A tag's or a length's value at b[pos] (floating point past 2^53: a length that large runs past the end anyway); -1: truncated or over 10 bytes. */
function readVarint(b: Uint8Array, pos: number, to: number): number {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= to) return -1;
    const byte = b[pos++]!;
    v += (byte & 0x7f) * mul;
    if (byte < 0x80) {
      varintEnd = pos;
      return v;
    }
    mul *= 128;
  }
  return -1;
}

/**
 * Calls `onField(tag, start, end, valueStart)` for each field of b[from, to): the field
 * spans [start, end), and a length-delimited one's contents start at valueStart (for
 * the others, valueStart is where their value starts). Returns null once all are
 * walked; '' when onField returned false; else what is malformed there (a group, which
 * no uringmq message has, a truncated varint, a field running past `to`).
 *
 * Re-entrant (onField may walk a field's contents) and allocation-free: with a closure
 * per call, a walk per record of 8 million empty records took 2.4 s; 0.1 s so.
 */
export function walkFields(b: Uint8Array, from: number, to: number, onField: (tag: number, start: number, end: number, valueStart: number) => boolean): string | null {
  let pos = from;
  while (pos < to) {
    const start = pos;
    const tag = readVarint(b, pos, to);
    if (tag < 0 || tag > 0xffffffff) return `a truncated tag at byte ${start}`;
    pos = varintEnd;
    let valueStart = pos;
    switch (tag & 7) {
      case 0:
        if (readVarint(b, pos, to) < 0) return `a truncated varint at byte ${pos}`;
        pos = varintEnd;
        break;
      case 1:
        pos += 8;
        break;
      case 2: {
        const len = readVarint(b, pos, to);
        if (len < 0) return `a truncated length at byte ${pos}`;
        valueStart = pos = varintEnd;
        pos += len;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        return `wire type ${tag & 7} (field ${tag >>> 3}) at byte ${start}: groups are not part of any uringmq message`;
    }
    if (pos > to) return `field ${tag >>> 3} at byte ${start} runs past the end of its message`;
    if (!onField(tag, start, pos, valueStart)) return '';
  }
  return null;
}

/** Most fields a message may have besides its one repeated field (a client sends each of the others once). */
export const MAX_FIELDS = 64;

/** What a request message may hold: each known field's wire type, or (length-delimited) the shape of the message it is. */
export interface Shape {
  readonly name: string;
  readonly fields: ReadonlyMap<number, number | Shape>;
  /** The one field that may come many times (records, headers, ranges): given to onRepeated, not counted against MAX_FIELDS. */
  readonly repeated?: { readonly field: number; readonly what: string };
}

/** Malformed bytes, or over a bound: refused before protobufjs decodes them. */
export class WireError extends Error {}

/**
 * What to do with one occurrence of a repeated field: 'walk' its contents, 'skip' them
 * (over a bound already: the request is refused, and only counted on), or 'stop' walking
 * the message it is in.
 */
export type RepeatedStep = 'walk' | 'skip' | 'stop';

/**
 * Walks b[from, to) as a `shape` and every message in it, so that what protobufjs then
 * decodes is bounded: each message has at most MAX_FIELDS fields besides its repeated
 * one (whose occurrences go to onRepeated), and each known field has the wire type of
 * its declaration. protobufjs reads a field by its number whatever its wire type (a
 * varint `key` was read as a length, skipping into bytes this walk took for another
 * field), and reads to the end before it reports a truncation or skips a group (8
 * million empty records and a group behind them held the event loop 15 s): either is
 * refused here. `onOther` gets the other top-level fields' spans. Throws WireError.
 */
export function walkMessage(
  b: Uint8Array,
  from: number,
  to: number,
  shape: Shape,
  onRepeated: (parent: Shape) => RepeatedStep,
  onOther?: (start: number, end: number) => void,
): void {
  let others = 0;
  let stopped = false;
  const why = walkFields(b, from, to, (tag, start, end, valueStart) => {
    const no = tag >>> 3;
    const known = shape.fields.get(no);
    if (known !== undefined) {
      const want = typeof known === 'number' ? known : 2;
      if ((tag & 7) !== want) throw new WireError(`malformed ${shape.name}: field ${no} has wire type ${tag & 7}, not ${want}`);
    }
    if (no === shape.repeated?.field) {
      const step = onRepeated(shape);
      if (step === 'stop') return !(stopped = true);
      if (step === 'walk' && typeof known === 'object') walkMessage(b, valueStart, end, known, onRepeated);
      return true;
    }
    if (++others > MAX_FIELDS) throw new WireError(`a${/^[AEIOU]/.test(shape.name) ? 'n' : ''} ${shape.name} with more than ${MAX_FIELDS} fields${shape.repeated ? ` besides ${shape.repeated.what}` : ''}`);
    onOther?.(start, end);
    if (typeof known === 'object') walkMessage(b, valueStart, end, known, onRepeated);
    return true;
  });
  if (why !== null && !stopped) throw new WireError(`malformed ${shape.name}: ${why}`);
}

/** A Shape from [field number, wire type or message] pairs. */
export function shape(name: string, fields: Array<[number, number | Shape]>, repeated?: { field: number; what: string }): Shape {
  return { name, fields: new Map(fields), repeated };
}
