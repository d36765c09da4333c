/**
 * The framing of every record the persistent storage writes (log segments and snapshots):
 * `[u32 length][u32 crc32 of the payload][payload]`, little-endian, then the payload bytes.
 *
 * ## Guarantees
 * - `decodeRecords` returns every complete record whose checksum matches, in order, and the byte offset
 *   where the valid prefix ends; a torn or corrupt record stops decoding there (`tornAt`), so a reader can
 *   drop the tail a crash left half-written instead of failing.
 *
 * ## Assumptions
 * - Payloads are smaller than 4 GiB (request bodies are limited to 3 MiB).
 *
 * ## Caveats
 * - CRC-32 detects torn writes and bit rot, not tampering.
 */

/** Bytes of the record header: length and checksum. */
export const RECORD_HEADER_BYTES = 8;

/**
 * Why a hand-written CRC-32: `zlib.crc32` appeared only in Node 20.15/22.2 and this code supports every
 * Node 20; a table-driven CRC-32 costs about as much as copying the bytes.
 */
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3, as zlib computes it) of `bytes`. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Frames one payload (UTF-8 text) as a record. */
export function encodeRecord(payload: string): Buffer {
  const length = Buffer.byteLength(payload);
  const record = Buffer.allocUnsafe(RECORD_HEADER_BYTES + length);
  record.write(payload, RECORD_HEADER_BYTES, "utf8");
  record.writeUInt32LE(length, 0);
  record.writeUInt32LE(crc32(record.subarray(RECORD_HEADER_BYTES)), 4);
  return record;
}

export interface DecodedRecords {
  payloads: string[];
  /** Offset just after the last valid record (the file's length when nothing is torn). */
  validLength: number;
  /** Whether bytes after `validLength` were dropped (a torn or corrupt record). */
  torn: boolean;
}

/** Decodes the records of a file's content, stopping at the first torn or corrupt one. */
export function decodeRecords(content: Buffer): DecodedRecords {
  const payloads: string[] = [];
  let offset = 0;
  while (offset < content.length) {
    if (content.length - offset < RECORD_HEADER_BYTES) break;
    const length = content.readUInt32LE(offset);
    const expected = content.readUInt32LE(offset + 4);
    const end = offset + RECORD_HEADER_BYTES + length;
    if (end > content.length) break;
    const payload = content.subarray(offset + RECORD_HEADER_BYTES, end);
    if (crc32(payload) !== expected) break;
    payloads.push(payload.toString("utf8"));
    offset = end;
  }
  return { payloads, validLength: offset, torn: offset < content.length };
}
