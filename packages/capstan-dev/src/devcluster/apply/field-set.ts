/**
 * A set of field paths (structured-merge-diff `fieldpath.Set`): the unit of ownership in server-side
 * apply. Stored as a tree: at each level, `members` are paths that end here and `children` are the
 * subtrees below a path element. A path can be both a member and have children (the `.` key of fieldsV1).
 *
 * Guarantees:
 * - Sets are immutable values: every operation returns a new set.
 * - Iteration and serialization order are structured-merge-diff's (sorted path elements; members
 *   before children when iterating; members and children interleaved by element when serializing).
 * - `difference` and `intersection` drop children that become empty; `union` keeps what it is given.
 */
import {
  comparePathElements,
  type Path,
  type PathElement,
  PathElementSyntaxError,
  parsePathElement,
  serializePathElement,
  UNKNOWN_PATH_ELEMENT,
} from "./path-element.ts";

export interface Child {
  readonly pe: PathElement;
  readonly set: FieldSet;
}

/** fieldsV1 as JSON: `{"f:data":{"f:a":{}},".":{}}`. */
export type FieldsV1 = { [key: string]: FieldsV1 };

/** Thrown when a fieldsV1 document cannot be read. */
export class FieldsV1Error extends Error {}

export class FieldSet {
  /** Keyed by serialized path element, for O(1) lookups; sorted on output. */
  private readonly members: ReadonlyMap<string, PathElement>;
  private readonly children: ReadonlyMap<string, Child>;

  /** Internal: build sets with {@link FieldSet.of}, {@link FieldSetBuilder} or the set operations. */
  constructor(members: ReadonlyMap<string, PathElement>, children: ReadonlyMap<string, Child>) {
    this.members = members;
    this.children = children;
  }

  static empty(): FieldSet {
    return EMPTY;
  }

  /** A set of the given paths. */
  static of(...paths: Path[]): FieldSet {
    const b = new FieldSetBuilder();
    for (const p of paths) b.insert(p);
    return b.build();
  }

  isEmpty(): boolean {
    if (this.members.size > 0) return false;
    for (const c of this.children.values()) if (!c.set.isEmpty()) return false;
    return true;
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    let s: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) {
      const c = s.children.get(serializePathElement(path[i]!));
      if (!c) return false;
      s = c.set;
    }
    return s.members.has(serializePathElement(path[path.length - 1]!));
  }

  /** The subtree below one element (`WithPrefix`), empty when there is none. */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(serializePathElement(pe))?.set ?? EMPTY;
  }

  /** Whether `pe` is a member at this level. */
  hasMember(pe: PathElement): boolean {
    return this.members.has(serializePathElement(pe));
  }

  /** Child path elements at this level (sorted). */
  childElements(): PathElement[] {
    return sorted([...this.children.values()].map((c) => c.pe));
  }

  union(other: FieldSet): FieldSet {
    if (other === EMPTY) return this;
    if (this === EMPTY) return other;
    const members = new Map(this.members);
    for (const [k, pe] of other.members) members.set(k, pe);
    const children = new Map(this.children);
    for (const [k, c] of other.children) {
      const mine = children.get(k);
      children.set(k, mine ? { pe: mine.pe, set: mine.set.union(c.set) } : c);
    }
    return new FieldSet(members, children);
  }

  intersection(other: FieldSet): FieldSet {
    const members = new Map<string, PathElement>();
    for (const [k, pe] of this.members) if (other.members.has(k)) members.set(k, pe);
    const children = new Map<string, Child>();
    for (const [k, c] of this.children) {
      const theirs = other.children.get(k);
      if (!theirs) continue;
      const res = c.set.intersection(theirs.set);
      if (!res.isEmpty()) children.set(k, { pe: c.pe, set: res });
    }
    return new FieldSet(members, children);
  }

  difference(other: FieldSet): FieldSet {
    if (other === EMPTY) return this;
    const members = new Map<string, PathElement>();
    for (const [k, pe] of this.members) if (!other.members.has(k)) members.set(k, pe);
    const children = new Map<string, Child>();
    for (const [k, c] of this.children) {
      const theirs = other.children.get(k);
      if (!theirs) {
        children.set(k, c);
        continue;
      }
      const diff = c.set.difference(theirs.set);
      if (!diff.isEmpty()) children.set(k, { pe: c.pe, set: diff });
    }
    return new FieldSet(members, children);
  }

  /** Like difference, but a member of `other` also removes everything below it (exclude filters). */
  recursiveDifference(other: FieldSet): FieldSet {
    if (other === EMPTY) return this;
    const members = new Map<string, PathElement>();
    for (const [k, pe] of this.members) if (!other.members.has(k)) members.set(k, pe);
    const children = new Map<string, Child>();
    for (const [k, c] of this.children) {
      if (other.members.has(k)) continue;
      const theirs = other.children.get(k);
      if (!theirs) {
        children.set(k, c);
        continue;
      }
      const diff = c.set.recursiveDifference(theirs.set);
      if (!diff.isEmpty()) children.set(k, { pe: c.pe, set: diff });
    }
    return new FieldSet(members, children);
  }

  equals(other: FieldSet): boolean {
    return JSON.stringify(this.toFieldsV1()) === JSON.stringify(other.toFieldsV1());
  }

  /** Every path, members of a level before its children's paths (fieldpath.Set.Iterate). */
  paths(): Path[] {
    const out: Path[] = [];
    this.iterate([], out);
    return out;
  }

  private iterate(prefix: PathElement[], out: Path[]): void {
    for (const pe of sorted([...this.members.values()])) out.push([...prefix, pe]);
    for (const c of sortedChildren(this.children)) c.set.iterate([...prefix, c.pe], out);
  }

  /** Rebuilds each child subtree through `fn` (used for schema-aware walks). */
  mapLevel(extraMembers: (pe: PathElement) => boolean, child: (pe: PathElement, set: FieldSet) => FieldSet): FieldSet {
    const members = new Map(this.members);
    const children = new Map<string, Child>();
    for (const [k, c] of this.children) {
      if (extraMembers(c.pe)) members.set(k, c.pe);
      children.set(k, { pe: c.pe, set: child(c.pe, c.set) });
    }
    return new FieldSet(members, children);
  }

  /** The fieldsV1 JSON document of this set, keys in the order the real server writes them. */
  toFieldsV1(): FieldsV1 {
    return this.emit(false);
  }

  private emit(includeSelf: boolean): FieldsV1 {
    const out: FieldsV1 = {};
    if (includeSelf && (this.members.size > 0 || this.children.size > 0)) out["."] = {};
    const keys = new Set([...this.members.keys(), ...this.children.keys()]);
    const entries = [...keys].map((k) => ({ k, pe: (this.members.get(k) ?? this.children.get(k)!.pe) as PathElement }));
    entries.sort((a, b) => comparePathElements(a.pe, b.pe));
    for (const { k, pe } of entries) {
      const child = this.children.get(k);
      if (!child) out[serializePathElement(pe)] = {};
      else out[serializePathElement(pe)] = child.set.emit(this.members.has(k));
    }
    return out;
  }

  /** Reads a fieldsV1 document (FieldsToSet); unknown element types are skipped as the real server does. */
  static fromFieldsV1(doc: unknown): FieldSet {
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
      throw new FieldsV1Error("ReadMapCB: expect { or n, but found " + JSON.stringify(doc)?.slice(0, 1));
    }
    return readLevel(doc as Record<string, unknown>).children ?? EMPTY;
  }
}

const EMPTY = new FieldSet(new Map(), new Map());

function sorted(pes: PathElement[]): PathElement[] {
  return pes.sort(comparePathElements);
}

function sortedChildren(children: ReadonlyMap<string, Child>): Child[] {
  return [...children.values()].sort((a, b) => comparePathElements(a.pe, b.pe));
}

function readLevel(doc: Record<string, unknown>): { children: FieldSet | undefined; isMember: boolean } {
  let isMember = false;
  const b = new FieldSetBuilder();
  let any = false;
  for (const [key, value] of Object.entries(doc)) {
    if (key === ".") {
      isMember = true;
      continue;
    }
    let pe: PathElement | typeof UNKNOWN_PATH_ELEMENT;
    try {
      pe = parsePathElement(key);
    } catch (err) {
      if (err instanceof PathElementSyntaxError) throw new FieldsV1Error(`parsing key as path element: ${err.message}`);
      throw err;
    }
    if (pe === UNKNOWN_PATH_ELEMENT) continue;
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new FieldsV1Error(`ReadMapCB: expect { or n, but found ${JSON.stringify(value)?.slice(0, 1)}`);
    }
    const sub = readLevel(value as Record<string, unknown>);
    if (sub.isMember) {
      b.insertMember(pe);
      any = true;
    }
    if (sub.children) {
      b.insertChild(pe, sub.children);
      any = true;
    }
  }
  // An empty object is a leaf: the path that leads here is a member.
  return { children: any ? b.build() : undefined, isMember: isMember || !any };
}

/** Mutable construction of a set (inserting many paths), then frozen with build(). */
export class FieldSetBuilder {
  private readonly members = new Map<string, PathElement>();
  private readonly children = new Map<string, { pe: PathElement; builder: FieldSetBuilder; fixed?: FieldSet }>();

  insert(path: Path): void {
    if (path.length === 0) return;
    let b: FieldSetBuilder = this;
    for (let i = 0; i < path.length - 1; i++) b = b.descend(path[i]!);
    b.insertMember(path[path.length - 1]!);
  }

  insertMember(pe: PathElement): void {
    this.members.set(serializePathElement(pe), pe);
  }

  insertChild(pe: PathElement, set: FieldSet): void {
    const k = serializePathElement(pe);
    const existing = this.children.get(k);
    if (existing) existing.fixed = (existing.fixed ?? FieldSet.empty()).union(set);
    else this.children.set(k, { pe, builder: new FieldSetBuilder(), fixed: set });
  }

  private descend(pe: PathElement): FieldSetBuilder {
    const k = serializePathElement(pe);
    let c = this.children.get(k);
    if (!c) {
      c = { pe, builder: new FieldSetBuilder() };
      this.children.set(k, c);
    }
    return c.builder;
  }

  build(): FieldSet {
    const children = new Map<string, Child>();
    for (const [k, c] of this.children) {
      let set = c.builder.build();
      if (c.fixed) set = set.union(c.fixed);
      children.set(k, { pe: c.pe, set });
    }
    return new FieldSet(new Map(this.members), children);
  }
}
