/** The error of a configuration that cannot be used: its own module so that every reader of configuration can throw it. */

/**
 * A configuration problem. The message is one line naming what is at fault: the kubeconfig file, the
 * context, the cluster and its server, the user, and the field.
 */
export class ConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ConfigError";
  }
}
