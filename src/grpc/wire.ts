/**
 * A walk over the fields of protobuf bytes, without decoding them: what the bounds on
 * plain records (publish_request.ts) and on ack ranges (subscribe_request.ts) count
 * before protobufjs builds an object per element.
 */

/**
 * Calls `onField(tag, start, end, valueStart)` for each field of b[from, to): the field
 * spans [start, end), and a length-delimited one's contents start at valueStart (for
 * the others, valueStart is where their value starts). Returns false when the walk meets
 * what it does not expect (a group, a truncated varint, a field running past `to`) or
 * onField returns false: the caller then leaves it to protobufjs to say what is wrong.
 */
export function walkFields(b: Uint8Array, from: number, to: number, onField: (tag: number, start: number, end: number, valueStart: number) => boolean): boolean {
  let pos = from;
  // A tag's or a length's value (floating point past 2^53: a length that large runs past the end anyway); -1: truncated or over 10 bytes.
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (pos >= to) return -1;
      const byte = b[pos++]!;
      v += (byte & 0x7f) * mul;
      if (byte < 0x80) return v;
      mul *= 128;
    }
    return -1;
  };
  while (pos < to) {
    const start = pos;
    const tag = varint();
    if (tag < 0 || tag > 0xffffffff) return false;
    let valueStart = pos;
    switch (tag & 7) {
      case 0:
        if (varint() < 0) return false;
        break;
      case 1:
        pos += 8;
        break;
      case 2: {
        const len = varint();
        if (len < 0) return false;
        valueStart = pos;
        pos += len;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        return false;
    }
    if (pos > to || !onField(tag, start, pos, valueStart)) return false;
  }
  return true;
}
