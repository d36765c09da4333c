/**
 * Where and how the manager serves its endpoints: loopback plain HTTP outside a cluster; in one,
 * HTTPS metrics whose every request is authenticated (TokenReview) and authorized
 * (SubjectAccessReview) by the API server, with cached decisions; the certificate from a directory
 * (reloaded) or self-signed. The API server is a fake here that answers the two reviews; the
 * reviews against the real thing are in test/operator/metrics-auth.e2e.test.ts.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { waitUntil } from "capstan-dev/testing";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { KubeClient } from "../../packages/capstan/src/client/resource-client.ts";
import { parseBindAddress, resolveBindAddress } from "../../packages/capstan/src/runtime/bind-address.ts";
import { Manager, type ManagerOptions } from "../../packages/capstan/src/runtime/manager.ts";
import { withAuthenticationAndAuthorization } from "../../packages/capstan/src/runtime/metrics-auth.ts";
import { resolveMetricsServing } from "../../packages/capstan/src/runtime/metrics-server.ts";
import { selfSignedCertificate } from "../../packages/capstan/src/runtime/serving-certificate.ts";
import { scrape } from "../support/metrics-scrape.ts";

interface Review {
  kind: string;
  spec: { token?: string; user?: string; nonResourceAttributes?: { path: string; verb: string } };
}

/**
 * A client whose API server answers TokenReviews (token `<user>-token` is `<user>`; `broken-token`
 * fails the review) and SubjectAccessReviews (only `reader` may get /metrics), counting them.
 */
function reviewingClient() {
  const reviews: Review[] = [];
  const client = {
    defaultNamespace: "default",
    close: async () => {},
    // The probe's own connection (the same fake).
    withOwnConnections: () => client,
    request: async (_method: string, path: string, opts: { body?: Review } = {}) => {
      const body = opts.body;
      if (body === undefined) return "ok"; // other requests (the API server probe)
      reviews.push(body);
      if (path.endsWith("/tokenreviews")) {
        const token = body.spec.token ?? "";
        if (token === "broken-token") throw new Error("connection refused");
        const m = /^([a-z]+)-token$/.exec(token);
        return m
          ? { status: { authenticated: true, user: { username: m[1], groups: ["system:authenticated"] } } }
          : { status: { user: {}, error: "invalid bearer token" } };
      }
      const attrs = body.spec.nonResourceAttributes;
      return { status: { allowed: body.spec.user === "reader" && attrs?.path === "/metrics" && attrs.verb === "get" } };
    },
  } as unknown as KubeClient;
  return { client, reviews };
}

const managers: Manager[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function started(options: Partial<ManagerOptions> & { client: KubeClient }): Promise<Manager> {
  const m = new Manager({ name: "scraped", logger: pino({ level: "silent" }), ...options });
  managers.push(m);
  void m.start();
  await waitUntil(() => m.state === "leading", { what: "the manager running", timeout: 5000 });
  return m;
}

/** The listeners, timers and file watchers of this process, once closed handles had a turn to go away. */
async function serving(): Promise<string[]> {
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  return process
    .getActiveResourcesInfo()
    .filter((r) => r === "TCPServerWrap" || r === "Timeout" || r === "FSEventWrap")
    .sort();
}

/** The certificate the server at `port` presents. */
function servedCertificate(port: number): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, rejectUnauthorized: false, servername: "localhost" }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      resolve(new X509Certificate(raw));
    });
    socket.on("error", reject);
  });
}

describe("outside a cluster", () => {
  it("serves the probes and plain-HTTP metrics on 127.0.0.1 only, by default", async () => {
    const { client, reviews } = reviewingClient();
    const m = await started({ client, inCluster: false, healthProbePort: 0, metricsPort: 0 });
    const { healthProbe, metrics } = m.endpointAddresses;
    expect(healthProbe?.host).toBe("127.0.0.1");
    expect(metrics).toMatchObject({ host: "127.0.0.1", secure: false });
    expect(metrics?.url).toBe(`http://127.0.0.1:${metrics?.port}/metrics`);
    const res = await fetch(`http://127.0.0.1:${metrics?.port}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("# TYPE");
    expect(reviews).toEqual([]); // no token asked for, none reviewed
  });

  it("takes controller-runtime's bind addresses, and secure serving when asked", async () => {
    const { client } = reviewingClient();
    const m = await started({
      client,
      inCluster: false,
      healthProbeBindAddress: "127.0.0.1:0",
      metricsServer: { bindAddress: "127.0.0.1:0", secureServing: true },
    });
    const port = m.endpointAddresses.metrics?.port ?? 0;
    expect(m.endpointAddresses.metrics).toMatchObject({ host: "127.0.0.1", secure: true });
    expect(await scrape(port)).toEqual({ status: 401, body: "Unauthorized\n" });
    expect((await scrape(port, "reader-token")).status).toBe(200);
  });
});

describe("in a cluster", () => {
  it("binds every interface, serves HTTPS, and lets only an authenticated, authorized caller scrape", async () => {
    const { client, reviews } = reviewingClient();
    const m = await started({ client, inCluster: true, healthProbePort: 0, metricsPort: 0 });
    const { healthProbe, metrics } = m.endpointAddresses;
    expect(["::", "0.0.0.0"]).toContain(healthProbe?.host);
    expect(metrics).toMatchObject({ secure: true });
    expect(["::", "0.0.0.0"]).toContain(metrics?.host);
    const port = metrics?.port ?? 0;

    expect(await scrape(port)).toEqual({ status: 401, body: "Unauthorized\n" });
    expect(await scrape(port, "garbage")).toEqual({ status: 401, body: "Unauthorized\n" });
    expect(await scrape(port, "stranger-token")).toEqual({
      status: 403,
      body: "Authorization denied for user stranger\n",
    });
    const allowed = await scrape(port, "reader-token");
    expect(allowed.status).toBe(200);
    expect(allowed.body).toContain("# TYPE");
    // The SubjectAccessReview asked what kube-apiserver's RBAC matches against nonResourceURLs.
    expect(reviews.find((r) => r.kind === "SubjectAccessReview" && r.spec.user === "reader")?.spec).toEqual({
      user: "reader",
      groups: ["system:authenticated"],
      nonResourceAttributes: { path: "/metrics", verb: "get" },
    });

    // Other paths are 404 before any review; the probes stay plain and open on their own port.
    const before = reviews.length;
    expect((await scrape(port, "reader-token", "/debug")).status).toBe(404);
    expect(reviews.length).toBe(before);
    expect((await fetch(`http://127.0.0.1:${healthProbe?.port}/healthz`)).status).toBe(200);
  });

  it("reuses review answers within their TTL, and reviews again after it", async () => {
    const { client, reviews } = reviewingClient();
    const m = await started({
      client,
      inCluster: true,
      metricsServer: { bindAddress: "127.0.0.1:0" },
    });
    const port = m.endpointAddresses.metrics?.port ?? 0;
    await Promise.all([scrape(port, "reader-token"), scrape(port, "reader-token"), scrape(port, "reader-token")]);
    await scrape(port, "reader-token");
    await scrape(port, "stranger-token");
    await scrape(port, "stranger-token");
    const count = (kind: string, who: string) =>
      reviews.filter((r) => r.kind === kind && (r.spec.token === `${who}-token` || r.spec.user === who)).length;
    expect(count("TokenReview", "reader")).toBe(1);
    expect(count("SubjectAccessReview", "reader")).toBe(1);
    expect(count("TokenReview", "stranger")).toBe(1);
    expect(count("SubjectAccessReview", "stranger")).toBe(1);

    // With TTLs of zero, every scrape is reviewed again.
    const uncached = reviewingClient();
    const fresh = await started({
      client: uncached.client,
      inCluster: true,
      metricsServer: {
        bindAddress: "127.0.0.1:0",
        filterProvider: withAuthenticationAndAuthorization({
          authenticationCacheTtlMs: 0,
          allowCacheTtlMs: 0,
          denyCacheTtlMs: 0,
        }),
      },
    });
    const freshPort = fresh.endpointAddresses.metrics?.port ?? 0;
    expect((await scrape(freshPort, "reader-token")).status).toBe(200);
    expect((await scrape(freshPort, "reader-token")).status).toBe(200);
    expect(uncached.reviews.map((r) => r.kind)).toEqual([
      "TokenReview",
      "SubjectAccessReview",
      "TokenReview",
      "SubjectAccessReview",
    ]);
  });

  it("answers 500 and logs when a review fails, and caches nothing then", async () => {
    const { client, reviews } = reviewingClient();
    const records: { msg?: string }[] = [];
    const logger = pino({ level: "error" }, { write: (line: string) => records.push(JSON.parse(line)) });
    const m = await started({ client, logger, inCluster: true, metricsServer: { bindAddress: "127.0.0.1:0" } });
    const port = m.endpointAddresses.metrics?.port ?? 0;
    expect(await scrape(port, "broken-token")).toEqual({ status: 500, body: "Authentication failed\n" });
    expect(await scrape(port, "broken-token")).toEqual({ status: 500, body: "Authentication failed\n" });
    expect(reviews.filter((r) => r.spec.token === "broken-token")).toHaveLength(2);
    expect(records.map((r) => r.msg)).toContain("metrics: authentication failed (TokenReview)");
  });

  it("serves the pair of its certificate directory, and the renewed pair once it changes", async () => {
    const before = await serving();
    const dir = await mkdtemp(join(tmpdir(), "capstan-metrics-certs-"));
    dirs.push(dir);
    const first = selfSignedCertificate({ hosts: ["first"] });
    await writeFile(join(dir, "tls.crt"), first.cert);
    await writeFile(join(dir, "tls.key"), first.key);
    const { client } = reviewingClient();
    const m = await started({
      client,
      inCluster: true,
      metricsServer: { bindAddress: "127.0.0.1:0", certDir: dir, certReloadMs: 50 },
    });
    const port = m.endpointAddresses.metrics?.port ?? 0;
    expect((await servedCertificate(port)).fingerprint256).toBe(new X509Certificate(first.cert).fingerprint256);

    const second = selfSignedCertificate({ hosts: ["second"] });
    await writeFile(join(dir, "tls.key"), second.key);
    await writeFile(join(dir, "tls.crt"), second.cert);
    const renewed = new X509Certificate(second.cert).fingerprint256;
    await waitUntil(async () => (await servedCertificate(port)).fingerprint256 === renewed, {
      what: "the renewed certificate served",
      timeout: 5000,
    });

    // Stopped, it leaves no listener, certificate timer or directory watcher behind.
    await m.stop();
    const after = await serving();
    for (const kind of ["TCPServerWrap", "Timeout", "FSEventWrap"]) {
      const count = (list: string[]) => list.filter((r) => r === kind).length;
      expect(count(after), kind).toBeLessThanOrEqual(count(before));
    }
  });

  it("makes a self-signed serving certificate when the directory has no pair", async () => {
    const { client } = reviewingClient();
    const m = await started({
      client,
      inCluster: true,
      metricsServer: { bindAddress: "127.0.0.1:0", certDir: join(tmpdir(), "capstan-no-such-dir") },
    });
    const cert = await servedCertificate(m.endpointAddresses.metrics?.port ?? 0);
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.subjectAltName).toContain("DNS:localhost");
  });
});

describe("the self-signed certificate", () => {
  it("is a non-CA ECDSA serverAuth certificate for localhost, loopback and the given hosts, valid a year", () => {
    const now = new Date("2026-03-01T12:00:00Z");
    const { cert, key } = selfSignedCertificate({ hosts: ["op-7d9f", "10.1.2.3", "fd00::17"], now });
    const x = new X509Certificate(cert);
    expect(x.ca).toBe(false);
    expect(x.verify(x.publicKey)).toBe(true);
    expect(x.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(x.publicKey.asymmetricKeyType).toBe("ec");
    expect(x.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
    expect(x.subjectAltName?.split(", ")).toEqual([
      "DNS:localhost",
      "IP Address:127.0.0.1",
      "IP Address:0:0:0:0:0:0:0:1",
      "DNS:op-7d9f",
      "IP Address:10.1.2.3",
      "IP Address:FD00:0:0:0:0:0:0:17",
    ]);
    expect(new Date(x.validFrom).toISOString()).toBe("2026-03-01T11:00:00.000Z");
    expect(new Date(x.validTo).toISOString()).toBe("2027-03-01T12:00:00.000Z");
    expect(x.checkHost("op-7d9f")).toBe("op-7d9f");
  });
});

describe("options", () => {
  it("parses controller-runtime's bind addresses and explains a bad one", () => {
    expect(parseBindAddress(":8080", "x")).toEqual({ port: 8080 });
    expect(parseBindAddress("127.0.0.1:8443", "x")).toEqual({ host: "127.0.0.1", port: 8443 });
    expect(parseBindAddress("[::1]:0", "x")).toEqual({ host: "::1", port: 0 });
    expect(parseBindAddress("localhost:9000", "x")).toEqual({ host: "localhost", port: 9000 });
    expect(parseBindAddress("0", "x")).toBe("disabled");
    expect(() => parseBindAddress("8080", "--metrics-bind-address")).toThrow(
      '--metrics-bind-address "8080" is not a bind address (no port); write ":8080", "127.0.0.1:8080", "[::1]:8080" or "0"',
    );
    expect(() => parseBindAddress(":http", "x")).toThrow("the port must be an integer from 0 to 65535");
    expect(() => parseBindAddress(":70000", "x")).toThrow("the port must be an integer from 0 to 65535");
    expect(() => parseBindAddress("::1:8080", "x")).toThrow("an IPv6 host goes in brackets");
    expect(() => parseBindAddress("a b:80", "x")).toThrow('"a b" is not an IP address or host name');
  });

  it("binds loopback outside a cluster and every interface in one, unless told", () => {
    const what = { bindAddress: "b", port: "p" };
    expect(resolveBindAddress(what, { port: 8081, inCluster: false })).toEqual({ host: "127.0.0.1", port: 8081 });
    expect(resolveBindAddress(what, { port: 8081, inCluster: true })).toEqual({ port: 8081 });
    expect(resolveBindAddress(what, { port: 8081, host: "10.0.0.5", inCluster: false })).toEqual({
      host: "10.0.0.5",
      port: 8081,
    });
    expect(resolveBindAddress(what, { inCluster: true })).toBeUndefined();
    expect(() => resolveBindAddress(what, { bindAddress: ":1", port: 2, inCluster: false })).toThrow(
      "give b or p, not both",
    );
  });

  it("serves metrics securely by default only in a cluster, and refuses contradictions", () => {
    expect(resolveMetricsServing({ metricsPort: 8443, inCluster: true })).toMatchObject({
      address: { port: 8443 },
      secure: true,
      filterProvider: expect.any(Function),
    });
    expect(resolveMetricsServing({ metricsPort: 8080, inCluster: false })).toEqual({
      address: { host: "127.0.0.1", port: 8080 },
      secure: false,
    });
    expect(
      resolveMetricsServing({ metricsServer: { bindAddress: ":8443", filterProvider: null }, inCluster: true }),
    ).not.toHaveProperty("filterProvider");
    expect(resolveMetricsServing({ metricsServer: { bindAddress: "0" }, inCluster: true })).toBeUndefined();
    expect(() =>
      resolveMetricsServing({ metricsServer: { bindAddress: ":8080", certDir: "/certs" }, inCluster: false }),
    ).toThrow("metricsServer.certDir is set but metrics are served over plain HTTP");
    const { client } = reviewingClient();
    expect(() => new Manager({ client, inCluster: true, healthProbePort: 8081, metricsPort: 8081 })).toThrow(
      "the health probes and the secure metrics server cannot share port 8081",
    );
  });
});
