/**
 * `capstan/internal`: what capstan-dev (the embedded API server, `capstan-dev/testing`, the dashboard and
 * the development commands) shares with this package beyond the public API. Not for operator authors:
 * it may change in any release.
 */

export { CAPSTAN_BIN } from "./cli/bin-path.ts";
export { parseCommandArgs } from "./cli/command-args.ts";
export { LOG_FORMATS, LOG_LEVELS, prettyLine } from "./cli/log-output.ts";
export { sleep } from "./client/retry.ts";
export { apiVersionOf } from "./client/types.ts";
export { registerWebhookConfigurations, removeWebhookConfigurations } from "./operator/webhook-registration.ts";
export {
  type CertificateAuthority,
  createCertificateAuthority,
  issueServingCertificate,
} from "./runtime/certificate-authority.ts";
