/**
 * An immutable field path rendered as apimachinery's `field.Path.String()` renders it:
 * children joined by dots, indexes and map keys in brackets with no quoting
 * (`spec.containers[0].env[HOME]`).
 */
export class FieldPath {
  private constructor(
    private readonly parent: FieldPath | undefined,
    private readonly name: string,
    private readonly bracket: string | undefined,
  ) {}

  /** A root path made of one or more child names. */
  static of(name: string, ...more: string[]): FieldPath {
    let p = new FieldPath(undefined, name, undefined);
    for (const m of more) p = p.child(m);
    return p;
  }

  /** `parent.name` (several names nest in order). */
  child(name: string, ...more: string[]): FieldPath {
    let p = new FieldPath(this, name, undefined);
    for (const m of more) p = p.child(m);
    return p;
  }

  /** `parent[i]`. */
  index(i: number): FieldPath {
    return new FieldPath(this, "", String(i));
  }

  /** `parent[key]`: the key is written as is, as Go does. */
  key(key: string): FieldPath {
    return new FieldPath(this, "", key);
  }

  /** The rendered path. */
  toString(): string {
    const parts: FieldPath[] = [];
    for (let p: FieldPath | undefined = this; p !== undefined; p = p.parent) parts.push(p);
    let out = "";
    for (let i = parts.length - 1; i >= 0; i--) {
      const p = parts[i]!;
      if (p.bracket !== undefined) {
        out += "[" + p.bracket + "]";
      } else if (p.name.length > 0) {
        if (p.parent !== undefined) out += ".";
        out += p.name;
      }
    }
    return out;
  }
}

/** Starts a path: `fieldPath("spec").child("x").index(0).key("k")` renders `spec.x[0][k]`. */
export function fieldPath(name: string, ...more: string[]): FieldPath {
  return FieldPath.of(name, ...more);
}

/** A path given either as a builder or as an already rendered string. */
export type PathLike = FieldPath | string;

/** Renders a path argument. */
export function renderPath(path: PathLike): string {
  return typeof path === "string" ? path : path.toString();
}
