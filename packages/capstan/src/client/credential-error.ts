/**
 * Credentials that could not be obtained: an exec plugin that failed or printed no usable
 * ExecCredential, an OIDC token that could not be refreshed, a token file that cannot be read, a
 * client certificate or key that is not usable. The message names the plugin, issuer or file and
 * what it did wrong. Unlike a `ConfigError` (the kubeconfig itself cannot be used), the
 * configuration may be right and the credential source broken for now.
 */
import { isInChain } from "./error-chain.ts";

/** The credentials a configuration names could not be obtained; see the module documentation. */
export class CredentialError extends Error {
  override readonly name = "CredentialError";
}

/** Whether `err` (or an error it wraps) is a {@link CredentialError}. */
export function isCredentialError(err: unknown): boolean {
  return isInChain(err, CredentialError, "CredentialError");
}
