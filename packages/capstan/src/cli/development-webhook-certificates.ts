/**
 * The webhook server's certificate when `capstan run` is given none: outside a pod, with
 * `--managed-webhooks-url` and no `--managed-webhooks-ca` (or with webhooks and no certificate at
 * all), it makes a serving certificate for the URL's host signed by a development CA, and the
 * operator registers that CA in its webhook configurations and CRD conversions. One command then
 * takes an operator from written to called by a real API server (Kopf makes a self-signed
 * certificate for the same case).
 *
 * ## Expected flow
 * {@link webhookCertificateSource} decides, from the flags and where the process runs, whether the
 * server reads its certificate directory (as it always did) or gets a development certificate;
 * {@link developmentWebhookCertificates} then loads or makes the CA in `.capstan/webhook-ca/` of the
 * working directory and signs a fresh serving certificate for the hosts.
 *
 * ## Guarantees
 * - In a pod nothing is made: the certificate directory (cert-manager's Secret, the generated
 *   manifests) is read, and a missing certificate stays an error. Replicas that each made a CA
 *   would overwrite each other's `caBundle`, and the CA would die with the container.
 * - The CA is kept on disk, so a restart registers the same `caBundle`: the configurations and
 *   CRDs registered by the last run keep working while the operator restarts (with a CA per run,
 *   every conversion of the kind would fail from the moment the old process stops until the new
 *   one has re-registered the CRD), re-registering changes nothing, and `ca.crt` can be given to
 *   other tools (curl --cacert, a hand-written configuration). The serving certificate is made
 *   anew at every start, for the hosts of that run, and kept in memory only.
 * - The key is readable by its owner only (mode 0600 in a 0700 directory). A CA that is
 *   damaged, not a CA, or expires within {@link CA_RENEW_BEFORE_MS} is replaced by a new one,
 *   which the operator registers in place of the old one at start.
 * - Two runs starting at once in one directory end up with one CA: the directory appears whole
 *   (written aside, then renamed), and the run that loses the race reads the winner's.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, join, resolve } from "node:path";
import {
  type CertificateAuthority,
  createCertificateAuthority,
  issueServingCertificate,
  unusableCertificateAuthority,
} from "../runtime/certificate-authority.ts";
import type { CertificatePair } from "../runtime/serving-certificate.ts";
import { DEFAULT_CERT_DIR } from "../webhooks/webhook-server.ts";

/** Where the development CA is kept, relative to the working directory. */
export const DEVELOPMENT_CA_DIR = join(".capstan", "webhook-ca");
/** A CA is replaced at start once it has less than a week left: the serving certificate it signs lasts at least that. */
export const CA_RENEW_BEFORE_MS = 7 * 24 * 60 * 60 * 1000;
/** Loopback names the serving certificate always holds: the readiness check and a curl on this machine use them. */
const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "::1"] as const;

/** Where the webhook server's certificate comes from. */
export type WebhookCertificateSource =
  /** Its certificate directory, as before (`--webhook-cert-dir` or controller-runtime's default). */
  | { kind: "directory" }
  /** A development certificate for `hosts`; `reason` says why, for the log. */
  | { kind: "development"; hosts: string[]; reason: string };

/** What {@link webhookCertificateSource} decides from. */
export interface WebhookCertificateInputs {
  /** The operator has admission or conversion handlers (else no server runs). */
  hasWebhooks: boolean;
  /** The process runs in a pod (runningInCluster). */
  inCluster: boolean;
  /** `--webhook-cert-dir`. */
  certDir?: string;
  /** `--webhook-host`. */
  webhookHost?: string;
  /** `--managed-webhooks-url`. */
  managedUrl?: string;
  /** `--managed-webhooks-ca`. */
  managedCa?: string;
  /** Whether controller-runtime's default directory holds a pair (default: looked up). */
  defaultPairExists?: boolean;
}

/** Decides where the certificate comes from; see the module documentation. */
export function webhookCertificateSource(inputs: WebhookCertificateInputs): WebhookCertificateSource {
  const { hasWebhooks, inCluster, certDir, managedUrl, managedCa } = inputs;
  // Given a directory or a CA, the user brought their own certificate; in a pod, cert-manager does.
  if (!hasWebhooks || inCluster || certDir !== undefined || managedCa !== undefined) return { kind: "directory" };
  if (managedUrl !== undefined) {
    return {
      kind: "development",
      hosts: uniqueHosts([urlHost(managedUrl), ...LOOPBACK_HOSTS]),
      reason: "--managed-webhooks-url without --managed-webhooks-ca",
    };
  }
  const defaultPairExists =
    inputs.defaultPairExists ??
    (existsSync(join(DEFAULT_CERT_DIR, "tls.crt")) && existsSync(join(DEFAULT_CERT_DIR, "tls.key")));
  if (defaultPairExists) return { kind: "directory" };
  const host = inputs.webhookHost;
  const specific = host !== undefined && host !== "" && host !== "0.0.0.0" && host !== "::";
  return {
    kind: "development",
    hosts: uniqueHosts([...(specific ? [host] : []), ...LOOPBACK_HOSTS]),
    reason: `no certificate in ${DEFAULT_CERT_DIR} outside a pod`,
  };
}

/** A development serving certificate and the CA that signed it. */
export interface DevelopmentWebhookCertificates {
  /** The serving certificate and key, for the webhook server. */
  tls: CertificatePair;
  /** The CA certificate in PEM, for the `caBundle` of what calls the server. */
  caPem: string;
  /** The CA certificate's file. */
  caFile: string;
  /** `made` (there was none), `kept` (read back), or `replaced: <why the old one was not usable>`. */
  ca: "made" | "kept" | `replaced: ${string}`;
}

/**
 * Loads the CA in `dir` (default {@link DEVELOPMENT_CA_DIR} of the working directory) or makes it,
 * and signs a serving certificate for `hosts`.
 */
export async function developmentWebhookCertificates(options: {
  hosts: readonly string[];
  dir?: string;
  now?: Date;
}): Promise<DevelopmentWebhookCertificates> {
  const dir = resolve(options.dir ?? DEVELOPMENT_CA_DIR);
  const now = options.now ?? new Date();
  const { ca, state } = await loadOrMakeCertificateAuthority(dir, now);
  const tls = issueServingCertificate(ca, { hosts: options.hosts, now });
  return { tls, caPem: ca.cert, caFile: join(dir, "ca.crt"), ca: state };
}

async function loadOrMakeCertificateAuthority(
  dir: string,
  now: Date,
): Promise<{ ca: CertificateAuthority; state: DevelopmentWebhookCertificates["ca"] }> {
  const existing = await readCertificateAuthority(dir);
  if (existing !== undefined) {
    const unusable = unusableCertificateAuthority(existing, now, CA_RENEW_BEFORE_MS);
    if (unusable === undefined) return { ca: existing, state: "kept" };
    const ca = await writeCertificateAuthority(dir, newCertificateAuthority(now), { replace: true });
    return { ca, state: `replaced: ${unusable}` };
  }
  const made = newCertificateAuthority(now);
  const ca = await writeCertificateAuthority(dir, made, { replace: false });
  return { ca, state: ca === made ? "made" : "kept" };
}

function newCertificateAuthority(now: Date): CertificateAuthority {
  // The machine's name tells whose CA a caBundle holds when several people share a cluster.
  return createCertificateAuthority({ commonName: `capstan development webhook CA (${hostname()})`, now });
}

/** The CA in `dir`, or undefined when either file is missing. */
async function readCertificateAuthority(dir: string): Promise<CertificateAuthority | undefined> {
  try {
    const [cert, key] = await Promise.all([
      readFile(join(dir, "ca.crt"), "utf8"),
      readFile(join(dir, "ca.key"), "utf8"),
    ]);
    return { cert, key };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`cannot read the development webhook CA in ${dir}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Writes `ca` into `dir` whole: into a directory beside it first, renamed into place. Without
 * `replace`, a `dir` made meanwhile by another run wins, and its CA is returned.
 */
async function writeCertificateAuthority(
  dir: string,
  ca: CertificateAuthority,
  options: { replace: boolean },
): Promise<CertificateAuthority> {
  await mkdir(dirname(dir), { recursive: true });
  const staging = await mkdtemp(join(dirname(dir), ".webhook-ca-")); // mode 0700
  try {
    await writeFile(join(staging, "ca.key"), ca.key, { mode: 0o600 });
    await writeFile(join(staging, "ca.crt"), ca.cert, { mode: 0o644 });
    if (options.replace) await rm(dir, { recursive: true, force: true });
    try {
      await rename(staging, dir);
      return ca;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw err;
      const winner = await readCertificateAuthority(dir);
      if (winner === undefined) throw err;
      return winner;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** The host of a webhook URL (`{port}` allowed), without an IPv6 address's brackets. */
export function urlHost(url: string): string {
  return new URL(url.replaceAll("{port}", "1")).hostname.replace(/^\[(.*)\]$/, "$1");
}

function uniqueHosts(hosts: readonly string[]): string[] {
  return [...new Set(hosts)];
}
