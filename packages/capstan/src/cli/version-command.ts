/**
 * `capstan version` (and `capstan --version`, `-v`): the version of capstan and, when it is
 * installed, of capstan-dev, looked up where the development commands are loaded from
 * (dev-package.ts): the project in the working directory first, then beside this package.
 */
import { parseArgs } from "node:util";
import { parseCommandArgs } from "./command-args.ts";
import { devPackageVersion } from "./dev-package.ts";
import { CAPSTAN_VERSION } from "./version.ts";

const USAGE = `Usage: capstan version

Prints the version of capstan and, when it is installed, of capstan-dev (also: capstan --version, -v).
`;

/** `capstan version`. */
export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs("capstan version", USAGE, () => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: { help: { type: "boolean", short: "h" } },
    });
    if (values.help) return "help";
    if (positionals.length > 0) throw new Error(`unexpected arguments: ${positionals.join(" ")}`);
    return true;
  });
  if (!parsed.ok) return parsed.exitCode;
  process.stdout.write(versionText());
  return 0;
}

/** `capstan <version>` and, when installed, `capstan-dev <version>`, one per line. */
export function versionText(cwd = process.cwd()): string {
  const lines = [`capstan ${CAPSTAN_VERSION}`];
  const dev = devPackageVersion(cwd);
  if (dev !== undefined) {
    const differs =
      dev === CAPSTAN_VERSION ? "" : ` (not capstan's: npm install --save-dev capstan-dev@${CAPSTAN_VERSION})`;
    lines.push(`capstan-dev ${dev}${differs}`);
  }
  return `${lines.join("\n")}\n`;
}
