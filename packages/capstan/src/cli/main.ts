/**
 * Entry point of the `capstan` command: picks a subcommand and hands it the remaining arguments.
 *
 * Guarantees: `--help` prints the usage with the version (exit 0); `--version`/`-v` is `capstan
 * version`; an unknown command or option exits 2 with one line naming it and the usage, on stderr.
 * An error no command handled is printed by its message when it is anticipated (anticipated-errors.ts),
 * with its stack otherwise (a bug), and exits 1.
 */
import { errorReport } from "./anticipated-errors.ts";
import { commands, findCommand } from "./commands.ts";
import { CAPSTAN_VERSION } from "./version.ts";

/** Node's exit code when the event loop emptied while a top-level await (this module's) was pending. */
const UNSETTLED_AWAIT_EXIT_CODE = 13;

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    process.stdout.write(`${usage()}\ncapstan ${CAPSTAN_VERSION}\n`);
    return 0;
  }
  const name = first === "--version" || first === "-v" ? "version" : first;
  if (name.startsWith("-")) {
    process.stderr.write(`capstan: unknown option "${name}"\n\n${usage()}`);
    return 2;
  }
  const command = findCommand(name);
  if (!command) {
    process.stderr.write(`capstan: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  return command.run(rest);
}

function usage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    "Usage: capstan <command> [options]",
    "",
    "Commands:",
    ...lines,
    "",
    "Options:",
    "  -h, --help     Print this help",
    "  -v, --version  Print the versions of capstan and capstan-dev",
    "",
    'Run "capstan <command> --help" for a command\'s options.',
    "",
  ].join("\n");
}

// A command that awaits something nothing will ever settle would end in a silent exit code 13.
let settled = false;
process.once("exit", (code) => {
  if (!settled && (code === UNSETTLED_AWAIT_EXIT_CODE || process.exitCode === UNSETTLED_AWAIT_EXIT_CODE)) {
    process.stderr.write(
      "capstan: stopped unfinished, waiting on something nothing could settle any more (exit code 13): a bug in Capstan, or a top-level await in the operator module that never settles\n",
    );
  }
});

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(errorReport(err));
  process.exitCode = 1;
} finally {
  settled = true;
}
