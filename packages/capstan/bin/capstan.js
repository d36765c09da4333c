#!/usr/bin/env node
// The `capstan` command, compiled. An operator written in TypeScript is loaded through tsx, registered
// only when such a file is run (see dist/cli/operator-module.js).
await import("../dist/cli/main.js");
