// Copies what tsc does not emit (the dashboard's static page) into the packages' dist folders.
import { cpSync } from "node:fs";

const assets = [["packages/capstan-dev/src/dashboard/page", "packages/capstan-dev/dist/dashboard/page"]];
for (const [from, to] of assets) cpSync(from, to, { recursive: true });
