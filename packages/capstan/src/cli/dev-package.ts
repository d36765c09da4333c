/**
 * The development commands (`apiserver`, `dev`) live in the `capstan-dev` package, which a production
 * image does not install. They are loaded from the project in the working directory first (where
 * `npm install --save-dev capstan-dev` puts it), then from beside this package.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { CAPSTAN_VERSION } from "./version.ts";

type CommandModule = { run(args: string[]): Promise<number> };
interface DevCli {
  devCommands: Record<string, () => Promise<CommandModule>>;
}

/** The command `name` of capstan-dev, or an error saying how to install it. */
export async function loadDevCommand(name: string): Promise<CommandModule> {
  const cli = await loadDevCli(name);
  const load = cli.devCommands[name];
  if (!load)
    throw new Error(`the installed capstan-dev has no "${name}" command; install capstan-dev@${CAPSTAN_VERSION}`);
  return load();
}

async function loadDevCli(name: string): Promise<DevCli> {
  const specifier = "capstan-dev/cli";
  let href: string | undefined;
  try {
    href = pathToFileURL(createRequire(join(process.cwd(), "package.json")).resolve(specifier)).href;
  } catch {
    // Not in the project: try beside this package (a global install, or this checkout).
  }
  try {
    return (await import(href ?? specifier)) as DevCli;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (href === undefined && (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND")) {
      throw new Error(
        `"capstan ${name}" is a development command, in the capstan-dev package: npm install --save-dev capstan-dev@${CAPSTAN_VERSION}`,
      );
    }
    throw err;
  }
}
