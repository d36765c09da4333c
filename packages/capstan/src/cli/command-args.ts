/**
 * What every `capstan` subcommand does with its arguments first: parse them, print the usage for
 * `--help` (exit 0) or with the reason for bad arguments (exit 2, on stderr).
 */

/** The outcome of {@link parseCommandArgs}: the parsed arguments, or the exit code to return. */
export type ParsedArgs<T> = { ok: true; value: T } | { ok: false; exitCode: number };

/** Runs `parse` (which returns "help" for --help and throws on bad input) for `command`. */
export function parseCommandArgs<T>(command: string, usage: string, parse: () => T | "help"): ParsedArgs<T> {
  let parsed: T | "help";
  try {
    parsed = parse();
  } catch (err) {
    process.stderr.write(`${command}: ${argumentProblem(err as Error)}\n\n${usage}`);
    return { ok: false, exitCode: 2 };
  }
  if (parsed === "help") {
    process.stdout.write(usage);
    return { ok: false, exitCode: 0 };
  }
  return { ok: true, value: parsed };
}

/**
 * The error's message, shortened for an unknown option: node:util's parseArgs adds a hint about
 * positionals starting with "-" that does not help with a mistyped flag.
 */
function argumentProblem(err: Error): string {
  if ((err as NodeJS.ErrnoException).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const option = /'([^']+)'/.exec(err.message)?.[1];
    if (option !== undefined) return `unknown option "${option}"`;
  }
  return err.message;
}
