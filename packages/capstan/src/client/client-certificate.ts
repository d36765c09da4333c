/**
 * Checks a TLS client certificate and key pair before it is used, as client-go's `tls.X509KeyPair` does
 * when it builds a transport, and names the certificate's subject for messages.
 *
 * Why check up front: a key that does not belong to the certificate, or a file that holds no PEM at all,
 * otherwise surfaces as an opaque TLS handshake failure on the first request, far from the kubeconfig
 * line at fault.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { CredentialError } from "./credential-error.ts";

/**
 * The subject's common name (`CN=admin`), or the whole subject on one line when it has no CN. Throws an
 * Error saying what is wrong when `cert` is not a PEM certificate, `key` not a PEM private key, or the key
 * does not match the certificate.
 */
export function describeClientCertificate(cert: string, key: string): string {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw new CredentialError(`the client certificate is not a PEM certificate (${(err as Error).message})`, {
      cause: err,
    });
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new CredentialError(`the client key is not a PEM private key (${(err as Error).message})`, { cause: err });
  }
  if (!x509.checkPrivateKey(privateKey))
    throw new CredentialError("the client key does not match the client certificate");
  const lines = x509.subject.split("\n");
  return lines.find((l) => l.startsWith("CN=")) ?? lines.join(", ");
}
