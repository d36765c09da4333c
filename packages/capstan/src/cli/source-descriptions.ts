/**
 * Field descriptions from the TSDoc comments of an operator's source, for its CRDs: what
 * controller-gen does with the Go comments of a kubebuilder project's types.
 *
 * Expected flow: `const ts = await loadTypeScript(file)`; when it is there,
 * `describeCrd(crd, readDescriptions(ts, file))` for each CRD.
 *
 * Guarantees:
 * - Only the syntax is read (`ts.createSourceFile`, no program, no type checking): the operator
 *   module and the project files it imports by relative path, never node_modules. A TypeScript or
 *   JavaScript file is read as it is, so a compiled `dist/operator.js` (tsc keeps comments) works too.
 * - `defineResource` calls are matched to the operator's kinds by their `kind` and `group` literals
 *   (or consts holding them); a call whose kind is not spelled so is skipped, not guessed.
 * - Schemas are followed through `Type.Object` (also its properties spread from a const),
 *   `Type.Optional`/`Readonly`, `Type.Array` (items), `Type.Record` (values), `Type.Intersect`
 *   (merged objects), and through module-level consts, also imported ones (named, renamed, namespace
 *   imports and re-exports). The comment on a property wins over the one on the const it uses.
 * - The kind's own description is the comment on the `defineResource` declaration; `spec` and
 *   `status` take the comments on those options.
 *
 * Caveats:
 * - `typescript` is the project's (a devDependency of a `capstan new` project), imported only when
 *   `capstan generate` (or `capstan run` of a TypeScript source) asks: a production operator running
 *   compiled JavaScript never loads it.
 * - A schema built by a function of the project's own (`makeSchema()`) is not followed.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type * as TS from "typescript";
import type { KindDescriptions, SchemaDescriptions } from "../resources/crd-descriptions.ts";

type TypeScript = typeof TS;

/**
 * The `typescript` package as the operator's folder resolves it (the project's own), else as this
 * package does; `undefined` when neither has it.
 */
export async function loadTypeScript(operatorFile: string): Promise<TypeScript | undefined> {
  for (const from of [resolve(operatorFile), fileURLToPath(import.meta.url)]) {
    let path: string;
    try {
      path = createRequire(from).resolve("typescript");
    } catch {
      continue;
    }
    const mod = (await import(pathToFileURL(path).href)) as TypeScript & { default?: TypeScript };
    return mod.default ?? mod;
  }
  return undefined;
}

/** The descriptions of every kind defined in `entry` and the project files it imports. */
export function readDescriptions(ts: TypeScript, entry: string): KindDescriptions[] {
  return new SourceReader(ts).kinds(resolve(entry));
}

/** How deep consts, imports and nested schemas are followed: far beyond real schemas, short of a cycle's cost. */
const MAX_DEPTH = 64;

interface Located {
  node: TS.Expression;
  file: TS.SourceFile;
  /** The comment of the nearest const the expression came through. */
  doc?: string;
}

class SourceReader {
  private readonly files = new Map<string, TS.SourceFile | null>();
  /**
   * What is being expanded on the current path (schema nodes, `file#name` exports): a cycle in the
   * source (`const a = { ...a }`, two modules re-exporting each other) ends there instead of recursing.
   */
  private readonly expanding = new Set<TS.Node | string>();

  constructor(private readonly ts: TypeScript) {}

  kinds(entry: string): KindDescriptions[] {
    const out: KindDescriptions[] = [];
    const seen = new Set<string>();
    const queue = [entry];
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
      if (seen.has(path)) continue;
      seen.add(path);
      const file = this.file(path);
      if (file === undefined) continue;
      for (const statement of file.statements) {
        const specifier = this.moduleSpecifier(statement);
        const target = specifier === undefined ? undefined : this.resolveModule(path, specifier);
        if (target !== undefined) queue.push(target);
      }
      const visit = (node: TS.Node): void => {
        if (this.ts.isCallExpression(node) && calleeName(this.ts, node.expression) === "defineResource") {
          const kind = this.kindOf(node, file);
          if (kind !== undefined) out.push(kind);
        }
        this.ts.forEachChild(node, visit);
      };
      visit(file);
    }
    return out;
  }

  private kindOf(call: TS.CallExpression, file: TS.SourceFile): KindDescriptions | undefined {
    const [arg] = call.arguments;
    const options = arg === undefined ? undefined : this.objectLiteral({ node: arg, file }, 0);
    if (options === undefined) return undefined;
    const kind = this.stringOption(options, "kind");
    if (kind === undefined) return undefined;
    const group = this.stringOption(options, "group");
    const description = this.declarationDoc(call);
    const versions: Record<string, SchemaDescriptions> = {};
    const list = this.property(options, "versions");
    const listed = list === undefined ? undefined : this.resolve({ node: list.value, file: options.file }, 0);
    if (listed !== undefined && this.ts.isArrayLiteralExpression(listed.node)) {
      for (const element of listed.node.elements) {
        const version = this.objectLiteral({ node: element, file: listed.file }, 0);
        const name = version === undefined ? undefined : this.stringOption(version, "name");
        if (version !== undefined && name !== undefined) versions[name] = this.root(version, description);
      }
    } else {
      versions[this.stringOption(options, "version") ?? "*"] = this.root(options, description);
    }
    return { ...(group !== undefined ? { group } : {}), kind, versions };
  }

  /** The root schema's descriptions of one version: the kind's, then spec's and status's. */
  private root(version: ObjectLiteral, description: string | undefined): SchemaDescriptions {
    const properties: Record<string, SchemaDescriptions> = {};
    for (const name of ["spec", "status"]) {
      const found = this.property(version, name);
      if (found === undefined) continue;
      const tree = this.schema({ node: found.value, file: version.file }, 0) ?? {};
      const doc = this.doc(found.node);
      const described = doc !== undefined ? { ...tree, description: doc } : tree;
      if (!isEmpty(described)) properties[name] = described;
    }
    return {
      ...(description !== undefined ? { description } : {}),
      ...(Object.keys(properties).length > 0 ? { properties } : {}),
    };
  }

  /** The descriptions a TypeBox schema expression carries in comments. */
  private schema(at: Located, depth: number): SchemaDescriptions | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const found = this.resolve(at, depth);
    if (found === undefined || this.expanding.has(found.node)) return undefined;
    this.expanding.add(found.node);
    try {
      const tree = this.call(found, depth) ?? {};
      return found.doc !== undefined ? { ...tree, description: found.doc } : tree;
    } finally {
      this.expanding.delete(found.node);
    }
  }

  private call(found: Located, depth: number): SchemaDescriptions | undefined {
    const ts = this.ts;
    if (!ts.isCallExpression(found.node)) return undefined;
    const args = found.node.arguments;
    const arg = (i: number): Located | undefined => {
      const node = args[i];
      return node === undefined ? undefined : { node, file: found.file };
    };
    const first = arg(0);
    switch (calleeName(ts, found.node.expression)) {
      case "Object": {
        const properties = first === undefined ? undefined : this.properties(first, depth + 1);
        return properties === undefined ? undefined : { properties };
      }
      case "Optional":
      case "Readonly":
      case "ReadonlyOptional":
        return first === undefined ? undefined : this.schema(first, depth + 1);
      case "Array": {
        const items = first === undefined ? undefined : this.schema(first, depth + 1);
        return items === undefined || isEmpty(items) ? undefined : { items };
      }
      case "Record": {
        const values = arg(1);
        const additionalProperties = values === undefined ? undefined : this.schema(values, depth + 1);
        return additionalProperties === undefined || isEmpty(additionalProperties)
          ? undefined
          : { additionalProperties };
      }
      case "Intersect": {
        // Capstan merges Type.Intersect of objects into one object: so are their properties' comments.
        const list = first === undefined ? undefined : this.resolve(first, depth + 1);
        if (list === undefined || !ts.isArrayLiteralExpression(list.node)) return undefined;
        const properties: Record<string, SchemaDescriptions> = {};
        for (const element of list.node.elements) {
          Object.assign(properties, this.schema({ node: element, file: list.file }, depth + 1)?.properties);
        }
        return { properties };
      }
      default:
        return undefined;
    }
  }

  /** The comments of an object literal's properties (a `Type.Object` argument), spreads included. */
  private properties(at: Located, depth: number): Record<string, SchemaDescriptions> | undefined {
    const literal = this.objectLiteral(at, depth);
    if (literal === undefined || this.expanding.has(literal.node)) return undefined;
    this.expanding.add(literal.node);
    try {
      return this.literalProperties(literal, depth);
    } finally {
      this.expanding.delete(literal.node);
    }
  }

  private literalProperties(literal: ObjectLiteral, depth: number): Record<string, SchemaDescriptions> {
    const ts = this.ts;
    const out: Record<string, SchemaDescriptions> = {};
    for (const element of literal.node.properties) {
      if (ts.isSpreadAssignment(element)) {
        Object.assign(out, this.properties({ node: element.expression, file: literal.file }, depth + 1));
        continue;
      }
      const name = propertyName(ts, element.name);
      const value = ts.isPropertyAssignment(element)
        ? element.initializer
        : ts.isShorthandPropertyAssignment(element)
          ? element.name
          : undefined;
      if (name === undefined || value === undefined) continue;
      const tree = this.schema({ node: value, file: literal.file }, depth + 1) ?? {};
      const doc = this.doc(element);
      const described = doc !== undefined ? { ...tree, description: doc } : tree;
      if (!isEmpty(described)) out[name] = described;
    }
    return out;
  }

  /**
   * Follows an expression through parentheses, type assertions and module-level consts (imported
   * ones too) to what it is made of.
   */
  private resolve(at: Located, depth: number): Located | undefined {
    const ts = this.ts;
    let { node, file } = at;
    let doc = at.doc;
    for (let step = depth; step <= MAX_DEPTH; step++) {
      while (
        ts.isParenthesizedExpression(node) ||
        ts.isAsExpression(node) ||
        ts.isSatisfiesExpression(node) ||
        ts.isNonNullExpression(node) ||
        ts.isTypeAssertionExpression(node)
      ) {
        node = node.expression;
      }
      let declaration: { declaration: TS.VariableDeclaration; file: TS.SourceFile } | undefined;
      if (ts.isIdentifier(node)) {
        declaration = this.lookup(file, node.text, 0);
      } else if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
        // `schemas.Money` with `import * as schemas from "./schemas.ts"`.
        const module = this.namespaceImport(file, node.expression.text);
        if (module !== undefined) declaration = this.exported(module, node.name.text, 0);
      }
      if (declaration?.declaration.initializer === undefined)
        return { node, file, ...(doc !== undefined ? { doc } : {}) };
      doc ??= this.doc(declaration.declaration);
      node = declaration.declaration.initializer;
      file = declaration.file;
    }
    return undefined;
  }

  private objectLiteral(at: Located, depth: number): ObjectLiteral | undefined {
    const found = this.resolve(at, depth);
    return found !== undefined && this.ts.isObjectLiteralExpression(found.node)
      ? { node: found.node, file: found.file }
      : undefined;
  }

  private property(
    literal: ObjectLiteral,
    name: string,
  ): { node: TS.ObjectLiteralElementLike; value: TS.Expression } | undefined {
    const ts = this.ts;
    for (const element of literal.node.properties) {
      if (propertyName(ts, element.name) !== name) continue;
      if (ts.isPropertyAssignment(element)) return { node: element, value: element.initializer };
      if (ts.isShorthandPropertyAssignment(element)) return { node: element, value: element.name };
    }
    return undefined;
  }

  private stringOption(literal: ObjectLiteral, name: string): string | undefined {
    const found = this.property(literal, name);
    const value = found === undefined ? undefined : this.resolve({ node: found.value, file: literal.file }, 0);
    if (value === undefined) return undefined;
    return this.ts.isStringLiteralLike(value.node) ? value.node.text : undefined;
  }

  /** The comment on the declaration a `defineResource` call initialises (`export const X = defineResource(...)`). */
  private declarationDoc(call: TS.CallExpression): string | undefined {
    const ts = this.ts;
    let node: TS.Node = call;
    while (
      ts.isParenthesizedExpression(node.parent) ||
      ts.isAsExpression(node.parent) ||
      ts.isSatisfiesExpression(node.parent)
    ) {
      node = node.parent;
    }
    const parent = node.parent;
    if (ts.isVariableDeclaration(parent) || ts.isExportAssignment(parent) || ts.isPropertyAssignment(parent)) {
      return this.doc(parent);
    }
    return undefined;
  }

  /** The module-level const `name` of `file`, or the one it imports under that name. */
  private lookup(
    file: TS.SourceFile,
    name: string,
    depth: number,
  ): { declaration: TS.VariableDeclaration; file: TS.SourceFile } | undefined {
    const ts = this.ts;
    if (depth > MAX_DEPTH) return undefined;
    for (const statement of file.statements) {
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name) && declaration.name.text === name) return { declaration, file };
        }
      } else if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
        const bindings = statement.importClause?.namedBindings;
        if (bindings === undefined || !ts.isNamedImports(bindings)) continue;
        for (const element of bindings.elements) {
          if (element.name.text !== name) continue;
          const module = this.resolveModule(file.fileName, statement.moduleSpecifier.text);
          const target = module === undefined ? undefined : this.file(module);
          return target === undefined
            ? undefined
            : this.exported(target, (element.propertyName ?? element.name).text, depth + 1);
        }
      }
    }
    return undefined;
  }

  /** The const `file` exports as `name`: its own, renamed in an `export { }`, or re-exported. */
  private exported(
    file: TS.SourceFile,
    name: string,
    depth: number,
  ): { declaration: TS.VariableDeclaration; file: TS.SourceFile } | undefined {
    const key = `${file.fileName}#${name}`;
    if (depth > MAX_DEPTH || this.expanding.has(key)) return undefined;
    this.expanding.add(key);
    try {
      return this.exportedOnce(file, name, depth);
    } finally {
      this.expanding.delete(key);
    }
  }

  private exportedOnce(
    file: TS.SourceFile,
    name: string,
    depth: number,
  ): { declaration: TS.VariableDeclaration; file: TS.SourceFile } | undefined {
    const ts = this.ts;
    for (const statement of file.statements) {
      if (!ts.isExportDeclaration(statement)) continue;
      const from =
        statement.moduleSpecifier !== undefined && ts.isStringLiteral(statement.moduleSpecifier)
          ? this.resolveModule(file.fileName, statement.moduleSpecifier.text)
          : undefined;
      const clause = statement.exportClause;
      if (clause === undefined) {
        // `export * from "./other.ts"`
        const target = from === undefined ? undefined : this.file(from);
        const found = target === undefined ? undefined : this.exported(target, name, depth + 1);
        if (found !== undefined) return found;
        continue;
      }
      if (!ts.isNamedExports(clause)) continue;
      for (const element of clause.elements) {
        if (element.name.text !== name) continue;
        const local = (element.propertyName ?? element.name).text;
        if (statement.moduleSpecifier === undefined) return this.lookup(file, local, depth + 1);
        const target = from === undefined ? undefined : this.file(from);
        return target === undefined ? undefined : this.exported(target, local, depth + 1);
      }
    }
    return this.lookup(file, name, depth + 1);
  }

  private namespaceImport(file: TS.SourceFile, name: string): TS.SourceFile | undefined {
    const ts = this.ts;
    for (const statement of file.statements) {
      if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
      const bindings = statement.importClause?.namedBindings;
      if (bindings !== undefined && ts.isNamespaceImport(bindings) && bindings.name.text === name) {
        const module = this.resolveModule(file.fileName, statement.moduleSpecifier.text);
        return module === undefined ? undefined : this.file(module);
      }
    }
    return undefined;
  }

  private moduleSpecifier(statement: TS.Statement): string | undefined {
    const ts = this.ts;
    const specifier =
      ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement) ? statement.moduleSpecifier : undefined;
    return specifier !== undefined && ts.isStringLiteral(specifier) ? specifier.text : undefined;
  }

  /** A relative import's file in the project, as TypeScript's resolution finds it (`./x.js` is `./x.ts`). */
  private resolveModule(from: string, specifier: string): string | undefined {
    if (!specifier.startsWith("./") && !specifier.startsWith("../")) return undefined;
    const base = resolve(dirname(from), specifier);
    const stem = base.slice(0, base.length - extname(base).length);
    // An import names the compiled file; its source has the matching TypeScript extension.
    const source = { ".js": [".ts", ".tsx"], ".mjs": [".mts"], ".cjs": [".cts"], ".jsx": [".tsx"] }[extname(base)];
    const candidates = [
      ...(source ?? []).map((e) => stem + e),
      base,
      ...[".ts", ".tsx", ".mts", ".js", ".mjs"].map((e) => base + e),
      ...["index.ts", "index.js"].map((e) => resolve(base, e)),
    ];
    return candidates.find((c) => !c.includes("/node_modules/") && this.file(c) !== undefined);
  }

  private file(path: string): TS.SourceFile | undefined {
    const cached = this.files.get(path);
    if (cached !== undefined) return cached ?? undefined;
    let parsed: TS.SourceFile | null = null;
    if (/\.[mc]?[jt]sx?$/.test(path)) {
      try {
        const text = readFileSync(path, "utf8");
        parsed = this.ts.createSourceFile(path, text, this.ts.ScriptTarget.Latest, true);
      } catch {
        // Not a readable file: not a candidate.
      }
    }
    this.files.set(path, parsed);
    return parsed ?? undefined;
  }

  /** The text of the TSDoc comment closest above `node`, cleaned for a CRD; `undefined` without one. */
  private doc(node: TS.Node): string | undefined {
    const ts = this.ts;
    // A const's comment stands before its statement (`/** ... */ export const X = ...`).
    const target =
      ts.isVariableDeclaration(node) &&
      ts.isVariableDeclarationList(node.parent) &&
      node.parent.declarations.length === 1 &&
      ts.isVariableStatement(node.parent.parent)
        ? node.parent.parent
        : node;
    // Read from the comment ranges rather than the parser's JSDoc nodes: those miss a comment on the
    // same line as the object's brace (`Type.Object({ /** The text. */ text: Type.String() })`), which
    // the scanner counts as trailing the brace, not leading the property.
    const text = target.getSourceFile().text;
    const start = target.getFullStart();
    // A trailing one counts only on the property's own line: `a: x, /** About a. */` then `b: y` on
    // the next line documents nothing of b.
    const ranges = [
      ...(ts.getTrailingCommentRanges(text, start) ?? []).filter(
        (r) => !text.slice(r.end, target.getStart()).includes("\n"),
      ),
      ...(ts.getLeadingCommentRanges(text, start) ?? []),
    ];
    const last = ranges.findLast(
      (r) => r.kind === ts.SyntaxKind.MultiLineCommentTrivia && /^\/\*\*[^/]/.test(text.slice(r.pos, r.pos + 4)),
    );
    return last === undefined ? undefined : commentText(text.slice(last.pos, last.end));
  }
}

interface ObjectLiteral {
  node: TS.ObjectLiteralExpression;
  file: TS.SourceFile;
}

function calleeName(ts: TypeScript, callee: TS.Expression): string | undefined {
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return undefined;
}

function propertyName(ts: TypeScript, name: TS.PropertyName | undefined): string | undefined {
  if (name === undefined) return undefined;
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  if (ts.isNoSubstitutionTemplateLiteral(name)) return name.text;
  return undefined;
}

function isEmpty(tree: SchemaDescriptions): boolean {
  return (
    tree.description === undefined &&
    (tree.properties === undefined || Object.keys(tree.properties).length === 0) &&
    tree.items === undefined &&
    tree.additionalProperties === undefined
  );
}

/**
 * A `/** ... *\/` comment as a CRD description, cleaned as controller-gen cleans Go comments (it keeps
 * the text and drops `+kubebuilder` markers, lines starting with TODO and everything after a `---`
 * line): the text and `@remarks` are kept, `@deprecated` becomes a "Deprecated:" paragraph (the
 * Kubernetes convention), other block tags (`@example`, `@default`, `@see`, ...) are dropped with
 * their content, and inline `{@link X}` becomes `X`. Line breaks are kept.
 */
export function commentText(comment: string): string | undefined {
  const lines = comment
    .replace(/^\/\*\*/, "")
    .replace(/\*\/$/, "")
    .split(/\r?\n/)
    .map((line) => line.replace(/^\s*\* ?/, "").trimEnd());
  const out: string[] = [];
  let keep = true;
  let fenced = false;
  for (const raw of lines) {
    let line = raw;
    if (!fenced) {
      const tag = /^\s*@(\w+)\s?(.*)$/.exec(line);
      if (tag !== null) {
        const [, name, rest = ""] = tag;
        keep = name === "remarks" || name === "deprecated";
        if (!keep) continue;
        line = name === "deprecated" ? `Deprecated: ${rest}`.trimEnd() : rest;
        if (name === "deprecated" && out.length > 0 && out.at(-1) !== "") out.push("");
        if (line === "") continue;
      } else if (line.startsWith("---")) {
        break;
      } else if (line.trimStart().startsWith("TODO")) {
        continue;
      }
    }
    if (!keep) continue;
    if (line.trimStart().startsWith("```")) fenced = !fenced;
    out.push(inlineTags(line));
  }
  const text = out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return text === "" ? undefined : text;
}

/** `{@link Target | text}` -> text, `{@link Target}` -> Target; other inline tags are dropped. */
function inlineTags(line: string): string {
  return line.replace(/\{@(\w+)\s*([^}]*)\}/g, (_all, tag: string, body: string) => {
    if (!tag.startsWith("link")) return "";
    const text = body.trim();
    const pipe = text.indexOf("|");
    if (pipe >= 0) return text.slice(pipe + 1).trim();
    const space = text.search(/\s/);
    return space < 0 ? text : text.slice(space + 1).trim();
  });
}
