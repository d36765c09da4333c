/**
 * How much of an error the `capstan` command shows. Errors Capstan anticipated (a kubeconfig or
 * operator module that cannot be used, a server that cannot be reached, refused credentials or
 * permissions, lost leadership) carry a message that says what to change, and their stack is
 * Capstan's internals: they are shown by their message alone, their stack only at debug level.
 * Anything else is a bug, in Capstan or in the operator's code, and keeps its stack.
 *
 * Errors are recognised by name, not `instanceof`: the operator module may load its own copy of
 * capstan (operator-module.ts), whose classes are not this copy's.
 */
import { inspect } from "node:util";
import pino from "pino";

/** Names of the error classes whose message is the whole story (client/config.ts, client/connection-error.ts, client/credential-error.ts, runtime/manager.ts, runtime/sharding.ts, cli/dev-package.ts). */
const ANTICIPATED_NAMES = new Set([
  "ConfigError",
  "ConnectionError",
  "CredentialError",
  "LeadershipLostError",
  "ShardMembershipLostError",
  "CommandUnavailableError",
]);

/** Causes are followed this deep at most (a cycle of causes must not hang the logger). */
const MAX_CAUSE_DEPTH = 8;

/** Whether `err` (or an error it wraps as its cause) is one Capstan anticipated; see the module documentation. */
export function isAnticipated(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && e instanceof Error; depth++, e = e.cause) {
    if (ANTICIPATED_NAMES.has(e.name)) return true;
    if (e.name === "ApiError" && isAuthFailure(e)) return true;
    // The module could not be used: anticipated, unless the module's own code threw while loading,
    // where the stack points at the operator's line at fault.
    if (e.name === "OperatorModuleError") return !thrownByModuleCode(e.cause);
  }
  return false;
}

/** 401 Unauthorized or 403 Forbidden: credentials refused, or permissions missing. */
function isAuthFailure(err: Error): boolean {
  const { code, reason } = err as Error & { code?: unknown; reason?: unknown };
  return reason === "Unauthorized" || reason === "Forbidden" || code === 401 || code === 403;
}

/**
 * Whether the import of an operator module failed in the module's own statements: an exception
 * without a Node error code (`ERR_MODULE_NOT_FOUND`, ...) that is not a syntax error (those name
 * their file and line in the message).
 */
function thrownByModuleCode(cause: unknown): boolean {
  if (!(cause instanceof Error)) return cause !== undefined;
  if (cause instanceof SyntaxError || cause.name === "TransformError") return false;
  return typeof (cause as NodeJS.ErrnoException).code !== "string";
}

/**
 * pino's `err` serializer for the command's loggers: pino's standard one, without the stack for an
 * anticipated error unless `stacks` (debug level). Its message is then the error's own: pino's
 * appends every cause's message, which the anticipated errors' messages already contain.
 */
export function errorSerializer(stacks: boolean): (err: unknown) => unknown {
  return (err) => {
    if (!(err instanceof Error)) return err;
    const serialized = pino.stdSerializers.err(err);
    if (stacks || !isAnticipated(err)) return serialized;
    const { stack: _stack, ...rest } = serialized;
    return { ...rest, message: err.message };
  };
}

/** The line(s) `capstan` prints for an error no command handled: the message, or the stack of a bug. */
export function errorReport(err: unknown): string {
  if (!(err instanceof Error)) return `capstan: ${String(err)}\n`;
  if (isAnticipated(err)) return `capstan: ${err.message}\n`;
  return `capstan: ${inspect(err)}\n`;
}
