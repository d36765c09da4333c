/**
 * The development commands (`apiserver`, `dev`) live in the `capstan-dev` package, which a production
 * image does not install. They are loaded from the project in the working directory first (where
 * `npm install --save-dev capstan-dev` puts it), then from beside this package.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { CAPSTAN_VERSION } from "./version.ts";

type CommandModule = { run(args: string[]): Promise<number> };
interface DevCli {
  devCommands: Record<string, () => Promise<CommandModule>>;
}

/** A command that cannot run here (capstan-dev is not installed, or lacks it), with a message saying what to install. */
export class CommandUnavailableError extends Error {
  override readonly name = "CommandUnavailableError";
}

/** The command `name` of capstan-dev; a {@link CommandUnavailableError} saying how to install it. */
export async function loadDevCommand(name: string): Promise<CommandModule> {
  const path = resolveDevPackage("capstan-dev/cli");
  if (path === undefined) {
    throw new CommandUnavailableError(
      `"capstan ${name}" is a development command, in the capstan-dev package: npm install --save-dev capstan-dev@${CAPSTAN_VERSION}`,
    );
  }
  // Anything failing inside capstan-dev's own modules is a bug, and keeps its stack.
  const cli = (await import(pathToFileURL(path).href)) as DevCli;
  const load = cli.devCommands[name];
  if (!load) {
    throw new CommandUnavailableError(
      `the installed capstan-dev has no "${name}" command; install capstan-dev@${CAPSTAN_VERSION}`,
    );
  }
  return load();
}

/** The version of the capstan-dev the development commands would load, or undefined when there is none. */
export function devPackageVersion(cwd = process.cwd()): string | undefined {
  const manifest = resolveDevPackage("capstan-dev/package.json", cwd);
  return manifest === undefined
    ? undefined
    : (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

/** Where `specifier` (in capstan-dev) resolves from the project in `cwd`, else from beside this package. */
function resolveDevPackage(specifier: string, cwd = process.cwd()): string | undefined {
  for (const from of [join(cwd, "package.json"), import.meta.url]) {
    try {
      return createRequire(from).resolve(specifier);
    } catch {
      // Not installed there: try the next place.
    }
  }
  return undefined;
}
