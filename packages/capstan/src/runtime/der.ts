/**
 * The few ASN.1 DER encodings an X.509 certificate is made of (ITU-T X.690), enough for
 * x509-certificate.ts to write certificates without a certificate library in the production
 * package. Encoding only: Node's `X509Certificate` reads certificates back.
 */

/** One encoded element (tag, length, value). */
export type Der = Buffer;

/** Tag, definite length (short form below 128 bytes, long form above), value. */
export function element(tag: number, value: Buffer): Der {
  const n = value.length;
  if (n < 0x80) return Buffer.concat([Buffer.from([tag, n]), value]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.concat([Buffer.from([tag, 0x80 | bytes.length, ...bytes]), value]);
}

export const sequence = (...items: Der[]): Der => element(0x30, Buffer.concat(items));
export const set = (...items: Der[]): Der => element(0x31, Buffer.concat(items));
export const octetString = (value: Buffer): Der => element(0x04, value);
export const utf8String = (text: string): Der => element(0x0c, Buffer.from(text, "utf8"));
export const boolean = (value: boolean): Der => element(0x01, Buffer.from([value ? 0xff : 0x00]));
/** A BIT STRING of whole bytes with `unusedBits` padding bits at the end of the last one. */
export const bitString = (value: Buffer, unusedBits = 0): Der =>
  element(0x03, Buffer.concat([Buffer.from([unusedBits]), value]));
/** `[n] EXPLICIT`: a constructed context-specific tag around an element. */
export const explicit = (n: number, inner: Der): Der => element(0xa0 | n, inner);
/** `[n] IMPLICIT` of a primitive type: the context-specific tag replaces the type's own. */
export const implicit = (n: number, value: Buffer): Der => element(0x80 | n, value);

/** A non-negative INTEGER from its big-endian magnitude (a 0x00 prefix keeps it positive). */
export function unsignedInteger(magnitude: Buffer): Der {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const trimmed = magnitude.subarray(start);
  const positive = (trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed;
  return element(0x02, positive.length === 0 ? Buffer.from([0]) : positive);
}

/** An OBJECT IDENTIFIER from its dotted form ("2.5.29.17"). */
export function objectIdentifier(dotted: string): Der {
  const arcs = dotted.split(".").map(Number);
  const [first, second, ...rest] = arcs;
  if (first === undefined || second === undefined || arcs.some((a) => !Number.isSafeInteger(a) || a < 0)) {
    throw new Error(`not an object identifier: ${dotted}`);
  }
  const bytes: number[] = [first * 40 + second];
  for (const arc of rest) {
    const base128: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) base128.unshift(0x80 | (v & 0x7f));
    bytes.push(...base128);
  }
  return element(0x06, Buffer.from(bytes));
}

/** X.509 `Time`: UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5), to the second. */
export function time(date: Date): Der {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  const year = date.getUTCFullYear();
  if (year >= 1950 && year < 2050) return element(0x17, Buffer.from(digits.slice(2), "ascii"));
  return element(0x18, Buffer.from(digits, "ascii"));
}
