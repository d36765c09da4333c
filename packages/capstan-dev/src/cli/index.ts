/**
 * The development commands of `capstan` (`apiserver`, `dev`), which the `capstan` package loads from
 * here when this package is installed. Each module is imported only when its command runs.
 */
export const devCommands = {
  apiserver: () => import("./apiserver.ts"),
  dev: () => import("./dev.ts"),
};
