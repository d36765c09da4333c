import { commands, findCommand } from "./commands.ts";

/** Entry point of the `capstan` command: picks a subcommand and hands it the remaining arguments. */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(usage());
    return 0;
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
  return `Usage: capstan <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nRun "capstan <command> --help" for a command's options.\n`;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`capstan: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
