/**
 * The few `Reflect` metadata functions tsyringe (a dependency of @peculiar/x509) checks for at load time.
 * The real polyfill (`reflect-metadata`) is not installed; x509 only needs metadata to be storable and
 * readable per target, which a WeakMap does. Import this module before @peculiar/x509.
 */
type Key = unknown;
const store = new WeakMap<object, Map<string | symbol | undefined, Map<Key, unknown>>>();

function table(target: object, prop: string | symbol | undefined, create: boolean): Map<Key, unknown> | undefined {
  let byProp = store.get(target);
  if (!byProp) {
    if (!create) return undefined;
    byProp = new Map();
    store.set(target, byProp);
  }
  let t = byProp.get(prop);
  if (!t && create) {
    t = new Map();
    byProp.set(prop, t);
  }
  return t;
}

const R = Reflect as unknown as Record<string, unknown>;
if (typeof R.getMetadata !== "function") {
  R.defineMetadata = (key: Key, value: unknown, target: object, prop?: string | symbol) => {
    table(target, prop, true)!.set(key, value);
  };
  R.getOwnMetadata = (key: Key, target: object, prop?: string | symbol) => table(target, prop, false)?.get(key);
  R.getMetadata = (key: Key, target: object, prop?: string | symbol): unknown => {
    for (let t: object | null = target; t; t = Object.getPrototypeOf(t) as object | null) {
      const m = table(t, prop, false);
      if (m?.has(key)) return m.get(key);
    }
    return undefined;
  };
  R.hasMetadata = (key: Key, target: object, prop?: string | symbol) =>
    (R.getMetadata as (k: Key, t: object, p?: string | symbol) => unknown)(key, target, prop) !== undefined;
  R.metadata = (key: Key, value: unknown) => (target: object, prop?: string | symbol) => {
    table(target, prop, true)!.set(key, value);
  };
}
