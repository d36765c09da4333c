import { readFileSync } from "node:fs";

/**
 * `capstan start`: what `npm start` runs. Until the embedded API server and the example
 * operators land, it reports honestly which capabilities this checkout has.
 */
export async function run(_args: string[]): Promise<number> {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  process.stdout.write(
    `Capstan ${pkg.version} (Node ${process.version})\n` +
      "Kubernetes operators in TypeScript. This checkout has the package, its CLI and its checks;\n" +
      "the embedded API server, the runtime and the example operators are being built.\n",
  );
  return 0;
}
