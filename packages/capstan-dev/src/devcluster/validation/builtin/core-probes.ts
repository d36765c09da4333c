/**
 * A container's probes and lifecycle hooks as kube-apiserver 1.32 validates them (core
 * `validateProbe`, `validateLivenessProbe`, `validateReadinessProbe`, `validateStartupProbe`,
 * `validateHandler`, `validateLifecycle`): exactly one handler each, non-negative timings (zero ones
 * were defaulted), a liveness or startup probe succeeding once, handler ports and schemes, and a sleep
 * hook shorter than the pod's termination grace period.
 */
import { type FieldError, type FieldPath, forbidden, invalid, notSupported, required } from "../field-errors.ts";
import type { PodValidationOptions } from "./core-pod-options.ts";
import type { Json } from "./kind-validation.ts";
import { isHTTPHeaderName, isValidPortName, isValidPortNum } from "./value-formats.ts";
import { list, num, obj, objects, present, str } from "./zero-values.ts";

const NEGATIVE = "must be greater than or equal to 0";
const MORE_THAN_ONE_HANDLER = "may not specify more than 1 handler type";
/** supportedHTTPSchemes, sorted. */
const HTTP_SCHEMES = ["HTTP", "HTTPS"];

/** ValidateNonnegativeField. */
export function validateNonnegative(value: number, path: FieldPath): FieldError[] {
  return value < 0 ? [invalid(path, value, NEGATIVE)] : [];
}

/** ValidatePortNumOrName: an IntOrString port (absent is the int 0). */
export function validatePortNumOrName(port: unknown, path: FieldPath): FieldError[] {
  if (typeof port === "string") return isValidPortName(port).map((msg) => invalid(path, port, msg));
  const n = num(port);
  return isValidPortNum(n).map((msg) => invalid(path, n, msg));
}

function validateHTTPGet(http: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (str(http["path"]) === "") errs.push(required(path.child("path")));
  errs.push(...validatePortNumOrName(http["port"], path.child("port")));
  const scheme = str(http["scheme"]);
  if (!HTTP_SCHEMES.includes(scheme)) errs.push(notSupported(path.child("scheme"), scheme, HTTP_SCHEMES));
  for (const header of objects(http["httpHeaders"])) {
    const name = str(header["name"]);
    for (const msg of isHTTPHeaderName(name)) errs.push(invalid(path.child("httpHeaders"), name, msg));
  }
  return errs;
}

function validateSleep(
  sleep: Json,
  gracePeriod: number | undefined,
  path: FieldPath,
  options: PodValidationOptions,
): FieldError[] {
  // A nil grace period is reported elsewhere; the sleep is then not checked.
  if (gracePeriod === undefined) return [];
  const seconds = num(sleep["seconds"]);
  if (options.allowPodLifecycleSleepActionZeroValue) {
    return seconds < 0 || seconds > gracePeriod
      ? [invalid(path, seconds, `must be non-negative and less than terminationGracePeriodSeconds (${gracePeriod})`)]
      : [];
  }
  return seconds <= 0 || seconds > gracePeriod
    ? [
        invalid(
          path,
          seconds,
          `must be greater than 0 and less than terminationGracePeriodSeconds (${gracePeriod}). Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.`,
        ),
      ]
    : [];
}

/** validateHandler: exactly one of exec, httpGet, tcpSocket, grpc (probes) or sleep (hooks). */
function validateHandler(
  handler: Json,
  kinds: readonly string[],
  gracePeriod: number | undefined,
  path: FieldPath,
  options: PodValidationOptions,
): FieldError[] {
  const errs: FieldError[] = [];
  let handlers = 0;
  for (const kind of kinds) {
    const action = obj(handler[kind]);
    if (action === undefined) continue;
    if (handlers > 0) {
      errs.push(forbidden(path.child(kind), MORE_THAN_ONE_HANDLER));
      continue;
    }
    handlers++;
    const at = path.child(kind);
    switch (kind) {
      case "exec":
        if (list(action["command"]).length === 0) errs.push(required(at.child("command")));
        break;
      case "httpGet":
        errs.push(...validateHTTPGet(action, at));
        break;
      case "tcpSocket":
        errs.push(...validatePortNumOrName(action["port"], at.child("port")));
        break;
      case "grpc":
        errs.push(...validatePortNumOrName(num(action["port"]), at.child("port")));
        break;
      case "sleep":
        errs.push(...validateSleep(action, gracePeriod, at, options));
        break;
    }
  }
  if (handlers === 0) errs.push(required(path, "must specify a handler type"));
  return errs;
}

const PROBE_HANDLERS = ["exec", "httpGet", "tcpSocket", "grpc"];
const LIFECYCLE_HANDLERS = ["exec", "httpGet", "tcpSocket", "sleep"];

/** validateProbe: its handler and timings. */
function validateProbe(
  probe: Json,
  gracePeriod: number | undefined,
  path: FieldPath,
  options: PodValidationOptions,
): FieldError[] {
  const errs = validateHandler(probe, PROBE_HANDLERS, gracePeriod, path, options);
  for (const key of [
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
  ]) {
    errs.push(...validateNonnegative(num(probe[key]), path.child(key)));
  }
  if (present(probe["terminationGracePeriodSeconds"]) && num(probe["terminationGracePeriodSeconds"]) <= 0) {
    errs.push(
      invalid(
        path.child("terminationGracePeriodSeconds"),
        num(probe["terminationGracePeriodSeconds"]),
        "must be greater than 0",
      ),
    );
  }
  return errs;
}

/** A container's three probes (liveness and startup succeed once; readiness has no grace period). */
export function validateProbes(
  container: Json,
  gracePeriod: number | undefined,
  path: FieldPath,
  options: PodValidationOptions,
): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of ["livenessProbe", "readinessProbe", "startupProbe"]) {
    const probe = obj(container[key]);
    if (probe === undefined) continue;
    const at = path.child(key);
    errs.push(...validateProbe(probe, gracePeriod, at, options));
    if (key === "readinessProbe") {
      if (present(probe["terminationGracePeriodSeconds"])) {
        errs.push(
          invalid(
            at.child("terminationGracePeriodSeconds"),
            num(probe["terminationGracePeriodSeconds"]),
            "must not be set for readinessProbes",
          ),
        );
      }
    } else if (num(probe["successThreshold"]) !== 1) {
      errs.push(invalid(at.child("successThreshold"), num(probe["successThreshold"]), "must be 1"));
    }
  }
  return errs;
}

/** validateLifecycle: the postStart and preStop hooks. */
export function validateLifecycle(
  lifecycle: Json,
  gracePeriod: number | undefined,
  path: FieldPath,
  options: PodValidationOptions,
): FieldError[] {
  const errs: FieldError[] = [];
  for (const hook of ["postStart", "preStop"]) {
    const handler = obj(lifecycle[hook]);
    if (handler !== undefined)
      errs.push(...validateHandler(handler, LIFECYCLE_HANDLERS, gracePeriod, path.child(hook), options));
  }
  return errs;
}
