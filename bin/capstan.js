#!/usr/bin/env node
// Runs the CLI from TypeScript source through tsx, which also lets `capstan run` load an operator written in TypeScript.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
