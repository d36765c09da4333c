/**
 * A seeded pseudo-random generator for fault injection: the same seed gives the same sequence, so a
 * test that fails under "10% of requests fail" can be replayed exactly.
 */

/**
 * mulberry32: 32 bits of state, uniform enough for picking which requests fail, and cheap enough to
 * call on every request. Not for anything security-related.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
