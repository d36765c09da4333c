/**
 * The logging surface the runtime needs: a structural subset of pino's logger, so the manager can
 * pass its pino child loggers and tests can pass nothing.
 */

/** A pino-compatible logger: `(fields, message)`. */
export interface RuntimeLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** Drops everything; the default when no logger is given. */
export const silentLogger: RuntimeLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
