import { fileURLToPath } from "node:url";

/** The `capstan` command's entry script, to run with `process.execPath` (from `src/cli` and `dist/cli` alike). */
export const CAPSTAN_BIN = fileURLToPath(new URL("../../bin/capstan.js", import.meta.url));
