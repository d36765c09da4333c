import { join } from "node:path";
import { PACKAGE_ROOT } from "./package-root.ts";

/** The `capstan` command's entry script, to run with `process.execPath`. */
export const CAPSTAN_BIN = join(PACKAGE_ROOT, "bin", "capstan.js");
