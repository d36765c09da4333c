import { X509Certificate } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  developmentWebhookCertificates,
  webhookCertificateSource,
} from "../../packages/capstan/src/cli/development-webhook-certificates.ts";
import { createCertificateAuthority } from "../../packages/capstan/src/runtime/certificate-authority.ts";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
async function caDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "capstan-dev-ca-"));
  dirs.push(dir);
  return join(dir, ".capstan", "webhook-ca");
}

describe("where capstan run's webhook certificate comes from", () => {
  const outside = { hasWebhooks: true, inCluster: false, defaultPairExists: false };

  it("is a development certificate for the managed URL's host, outside a pod, when no CA is given", () => {
    expect(webhookCertificateSource({ ...outside, managedUrl: "https://127.0.0.1:{port}" })).toEqual({
      kind: "development",
      hosts: ["127.0.0.1", "localhost", "::1"],
      reason: "--managed-webhooks-url without --managed-webhooks-ca",
    });
    expect(webhookCertificateSource({ ...outside, managedUrl: "https://[fd00::7]:9443" })).toMatchObject({
      hosts: ["fd00::7", "localhost", "127.0.0.1", "::1"],
    });
    // Even when the default directory holds a pair: its CA is not known, so it could not be registered.
    expect(
      webhookCertificateSource({
        ...outside,
        defaultPairExists: true,
        managedUrl: "https://host.docker.internal:{port}",
      }),
    ).toMatchObject({ kind: "development", hosts: ["host.docker.internal", "localhost", "127.0.0.1", "::1"] });
  });

  it("is a development certificate for loopback (and --webhook-host) outside a pod when nothing else is there", () => {
    expect(webhookCertificateSource(outside)).toEqual({
      kind: "development",
      hosts: ["localhost", "127.0.0.1", "::1"],
      reason: "no certificate in /tmp/k8s-webhook-server/serving-certs outside a pod",
    });
    expect(webhookCertificateSource({ ...outside, webhookHost: "192.168.1.20" })).toMatchObject({
      hosts: ["192.168.1.20", "localhost", "127.0.0.1", "::1"],
    });
    expect(webhookCertificateSource({ ...outside, webhookHost: "0.0.0.0" })).toMatchObject({
      hosts: ["localhost", "127.0.0.1", "::1"],
    });
  });

  it("is the certificate directory in a pod, with a directory or a CA given, a pair in the default directory, or no webhooks", () => {
    const url = "https://127.0.0.1:{port}";
    const directory = { kind: "directory" };
    expect(webhookCertificateSource({ ...outside, inCluster: true, managedUrl: url })).toEqual(directory);
    expect(webhookCertificateSource({ ...outside, inCluster: true })).toEqual(directory);
    expect(webhookCertificateSource({ ...outside, certDir: "/certs", managedUrl: url })).toEqual(directory);
    expect(webhookCertificateSource({ ...outside, managedCa: "ca.crt", managedUrl: url })).toEqual(directory);
    expect(webhookCertificateSource({ ...outside, defaultPairExists: true })).toEqual(directory);
    expect(webhookCertificateSource({ ...outside, hasWebhooks: false, managedUrl: url })).toEqual(directory);
  });
});

describe("the development CA in .capstan/webhook-ca", () => {
  it("is made once, owner-only, and kept: the next run signs with the same CA for its own hosts", async () => {
    const dir = await caDir();
    const first = await developmentWebhookCertificates({ hosts: ["127.0.0.1"], dir });
    expect(first.ca).toBe("made");
    expect(first.caFile).toBe(join(dir, "ca.crt"));
    expect((await stat(join(dir, "ca.key"))).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(await readFile(first.caFile, "utf8")).toBe(first.caPem);

    const second = await developmentWebhookCertificates({ hosts: ["webhooks.example.test"], dir });
    expect(second.ca).toBe("kept");
    expect(second.caPem).toBe(first.caPem);
    const served = new X509Certificate(second.tls.cert);
    expect(served.checkIssued(new X509Certificate(first.caPem))).toBe(true);
    expect(served.subjectAltName).toBe("DNS:webhooks.example.test");
    expect(served.fingerprint256).not.toBe(new X509Certificate(first.tls.cert).fingerprint256);
    // Nothing is left beside it by the writes.
    expect(await readdir(join(dir, ".."))).toEqual(["webhook-ca"]);
  });

  it("replaces a CA that expires within a week, and one that is damaged, saying why", async () => {
    const dir = await caDir();
    const now = new Date();
    await developmentWebhookCertificates({
      hosts: ["127.0.0.1"],
      dir,
      now: new Date(now.getTime() - 360 * 86_400_000),
    });
    const renewed = await developmentWebhookCertificates({ hosts: ["127.0.0.1"], dir, now });
    expect(renewed.ca).toMatch(/^replaced: it expires /);
    expect(new Date(new X509Certificate(renewed.caPem).validTo).getTime()).toBeGreaterThan(
      now.getTime() + 300 * 86_400_000,
    );
    await writeFile(join(dir, "ca.key"), createCertificateAuthority({ commonName: "other" }).key);
    expect((await developmentWebhookCertificates({ hosts: ["127.0.0.1"], dir })).ca).toBe(
      "replaced: its key is not the certificate's",
    );
  });

  it("ends up with one CA when several runs start at once in one directory", async () => {
    const dir = await caDir();
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => developmentWebhookCertificates({ hosts: ["127.0.0.1"], dir })),
    );
    const onDisk = await readFile(join(dir, "ca.crt"), "utf8");
    for (const r of runs) expect(r.caPem).toBe(onDisk);
    expect(runs.filter((r) => r.ca === "made")).toHaveLength(1);
  });
});
