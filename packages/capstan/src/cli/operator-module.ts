/**
 * Loads an operator module for `capstan run`, `dev` and `generate`: the file's default export, or
 * its export named `operator`, must be an operator made with `operator()`.
 *
 * The module is imported through Node's loader. A TypeScript file (`.ts`, `.mts`, `.cts`) is loaded
 * through tsx, registered only then, and found from the operator's own folder first (a project's
 * devDependency), then beside capstan: Capstan itself is compiled JavaScript and needs no loader, so a
 * production image running `dist/operator.js` loads no compiler. Importing must only define the
 * operator: nothing runs until `start`.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Operator } from "../operator/index.ts";

/** What the commands use of an operator. Checked by shape: the module may load its own copy of capstan. */
export type LoadedOperator = Pick<Operator, "name" | "start" | "requirements" | "permissions" | "webhooks"> &
  Partial<Pick<Operator, "conversions">>;

/** An operator module that cannot be used, with a message saying what to change. */
export class OperatorModuleError extends Error {
  override readonly name = "OperatorModuleError";
}

/** Imports `file` (relative to `cwd`) and returns its operator. */
export async function loadOperator(file: string, cwd = process.cwd()): Promise<LoadedOperator> {
  const path = resolve(cwd, file);
  if (!existsSync(path)) throw new OperatorModuleError(`${file}: no such file`);
  let mod: Record<string, unknown>;
  if (/\.[mc]?tsx?$/.test(path)) await registerTypeScript(file, path);
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // Outside a `"type": "module"` package, .ts files load as CommonJS, and an ES module operator fails obscurely.
    const hint = /require\(\) ES Module|outside a module|ERR_REQUIRE_ESM/.test(message)
      ? ' (is it an ES module outside a package with "type": "module"? Add that to the nearest package.json, or name the file .mts)'
      : "";
    throw new OperatorModuleError(`${file}: cannot be loaded: ${message}${hint}`, { cause: err });
  }
  const candidate = mod.default ?? mod.operator;
  if (candidate === undefined) {
    throw new OperatorModuleError(
      `${file}: exports no operator; write \`export default operator({ name: "..." })\` (or export it as \`operator\`)`,
    );
  }
  if (!isOperator(candidate)) {
    const which = mod.default !== undefined ? "default export" : 'export "operator"';
    throw new OperatorModuleError(`${file}: the ${which} is not an operator made with operator({ name })`);
  }
  return candidate;
}

function isOperator(value: unknown): value is LoadedOperator {
  if (typeof value !== "object" || value === null) return false;
  const o = value as Record<string, unknown>;
  return (
    typeof o.name === "string" &&
    typeof o.start === "function" &&
    typeof o.requirements === "function" &&
    typeof o.permissions === "function" &&
    typeof o.webhooks === "function"
  );
}

let typeScriptRegistered = false;

/** Registers tsx's ESM loader once, so that `import()` of a TypeScript operator works. */
async function registerTypeScript(file: string, path: string): Promise<void> {
  if (typeScriptRegistered) return;
  let api: { register(): unknown };
  try {
    api = (await import(tsxApiSpecifier(path))) as { register(): unknown };
  } catch (err) {
    throw new OperatorModuleError(
      `${file}: is TypeScript, and loading it needs tsx, which is not installed (npm install --save-dev tsx); or run the compiled JavaScript`,
      { cause: err },
    );
  }
  api.register();
  typeScriptRegistered = true;
}

/**
 * tsx's ESM API as the operator's folder resolves it, else as this package does. Resolved by hand
 * from tsx's package.json: `require.resolve` would pick its CommonJS build, whose `register()` fails
 * when imported from ESM.
 */
function tsxApiSpecifier(path: string): string {
  try {
    const manifest = createRequire(path).resolve("tsx/package.json");
    const { exports } = JSON.parse(readFileSync(manifest, "utf8")) as {
      exports: Record<string, { import?: { default?: string } }>;
    };
    const entry = exports["./esm/api"]?.import?.default;
    if (entry) return pathToFileURL(join(dirname(manifest), entry)).href;
  } catch {
    // Not resolvable from the operator's folder.
  }
  return "tsx/esm/api";
}
