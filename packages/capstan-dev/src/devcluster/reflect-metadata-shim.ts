/**
 * The small part of the Reflect Metadata API that tsyringe (a dependency of @peculiar/x509) checks for
 * at load time and uses for its decorators. Installed only when no polyfill is present, so the package
 * needs no `reflect-metadata` dependency of its own.
 */
type Target = object;
type MetadataMap = Map<unknown, unknown>;

const store = new WeakMap<Target, Map<PropertyKey | undefined, MetadataMap>>();

function mapFor(target: Target, property: PropertyKey | undefined, create: boolean): MetadataMap | undefined {
  let byProperty = store.get(target);
  if (!byProperty) {
    if (!create) return undefined;
    byProperty = new Map();
    store.set(target, byProperty);
  }
  let map = byProperty.get(property);
  if (!map && create) {
    map = new Map();
    byProperty.set(property, map);
  }
  return map;
}

function getOwnMetadata(key: unknown, target: Target, property?: PropertyKey): unknown {
  return mapFor(target, property, false)?.get(key);
}

function getMetadata(key: unknown, target: Target, property?: PropertyKey): unknown {
  for (let t: Target | null = target; t !== null; t = Object.getPrototypeOf(t) as Target | null) {
    const map = mapFor(t, property, false);
    if (map?.has(key)) return map.get(key);
  }
  return undefined;
}

function defineMetadata(key: unknown, value: unknown, target: Target, property?: PropertyKey): void {
  mapFor(target, property, true)!.set(key, value);
}

const reflect = Reflect as unknown as Record<string, unknown>;
if (typeof reflect["getMetadata"] !== "function") {
  reflect["getMetadata"] = getMetadata;
  reflect["getOwnMetadata"] = getOwnMetadata;
  reflect["defineMetadata"] = defineMetadata;
  reflect["hasMetadata"] = (key: unknown, target: Target, property?: PropertyKey) =>
    getMetadata(key, target, property) !== undefined;
  reflect["hasOwnMetadata"] = (key: unknown, target: Target, property?: PropertyKey) =>
    mapFor(target, property, false)?.has(key) ?? false;
  reflect["metadata"] =
    (key: unknown, value: unknown) =>
    (target: Target, property?: PropertyKey): void =>
      defineMetadata(key, value, target, property);
}
