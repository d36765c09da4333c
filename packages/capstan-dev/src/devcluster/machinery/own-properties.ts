/**
 * Reads and writes of object keys that come from request data. Kubernetes objects may hold any key
 * (`__proto__`, `constructor`, `toString` are valid ConfigMap data keys and CRD map keys), and in
 * JavaScript such keys are special: `obj[key]` finds Object.prototype's members when `obj` lacks
 * them, and `obj["__proto__"] = v` replaces the prototype instead of adding a key (the value is lost,
 * and a merge that then recurses into it writes into Object.prototype for the whole process).
 *
 * Use these where the key is user data and the object is not known to own it; a key taken from
 * `Object.keys(obj)` / `Object.entries(obj)` of the same object needs neither (reading or assigning an
 * own property never reaches the prototype). JSON.parse, the `yaml` package, spread and
 * structuredClone all keep an own `__proto__` key as a plain property.
 */

/** `obj[key]` when `obj` has its own `key`, else undefined (never a member of Object.prototype). */
export function ownValue<T>(obj: { readonly [key: string]: T }, key: string): T | undefined {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** `obj[key] = value` as an own, enumerable data property, also for `__proto__`. */
export function setOwn<T>(obj: { [key: string]: T }, key: string, value: T): void {
  if (key === "__proto__") {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else obj[key] = value;
}
