/**
 * `capstan run` of the useless machine outside a pod with `--managed-webhooks-url` and no CA, as a
 * user runs it against a cluster from a laptop: it makes a development CA (kept in `.capstan/` of
 * the working directory) and a serving certificate for the URL's host, registers the CA in its
 * webhook configurations and its CRD's conversion, and the API server then calls the webhooks.
 * `--webhook-port 0` only keeps parallel runs off each other's port (the default is 9443).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type PeerCertificate } from "node:tls";
import { waitUntil } from "capstan-dev/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CREATED_BY_ANNOTATION, GROUP, Machine, Switch } from "../../examples/useless-machine/operator.ts";
import { Namespace } from "../../packages/capstan/src/resources/builtins.ts";
import { CRD_KIND } from "../../packages/capstan/src/runtime/crd-registration.ts";
import { isEstablished, startTestCluster, type TestCluster } from "../../packages/capstan-dev/src/testing/index.ts";

const repo = new URL("../..", import.meta.url).pathname;
const bin = join(repo, "packages/capstan/bin/capstan.js");
const operatorFile = join(repo, "examples/useless-machine/operator.ts");
const CRD_NAME = `machines.${GROUP}`;
const machinesV1 = { group: GROUP, version: "v1", kind: "Machine", plural: "machines", namespaced: true };
const configurations = (kind: string) => ({
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind,
  plural: `${kind.toLowerCase()}s`,
  namespaced: false,
});

interface WebhookConfiguration {
  webhooks?: { name: string; clientConfig: { url?: string; caBundle?: string } }[];
}

describe("capstan run with --managed-webhooks-url and no CA", () => {
  let cluster: TestCluster;
  let cwd: string;
  let child: ChildProcess | undefined;
  let exited: Promise<number | null> | undefined;
  const ns = "dev-webhooks";

  beforeAll(async () => {
    cluster = await startTestCluster();
    cwd = await mkdtemp(join(tmpdir(), "capstan-dev-webhooks-"));
    await cluster.client.resource(Namespace).create(Namespace.make({ metadata: { name: ns } }));
  });
  afterEach(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    child = undefined;
  });
  afterAll(async () => {
    await cluster?.stop();
    if (cwd) await rm(cwd, { recursive: true, force: true });
  });

  /** Starts `capstan run` of the useless machine; resolves with its log records once it serves webhooks. */
  async function start(url: string): Promise<{ port: number; records: () => { msg?: string; ca?: string }[] }> {
    let out = "";
    const proc = spawn(
      process.execPath,
      [
        bin,
        "run",
        operatorFile,
        "--kubeconfig",
        cluster.kubeconfigPath,
        "--managed-webhooks-url",
        url,
        "--webhook-port",
        "0",
        "--log-format",
        "json",
      ],
      { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, KUBERNETES_SERVICE_HOST: "" } },
    );
    proc.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.stderr?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child = proc;
    exited = new Promise((resolve) => proc.once("exit", (code) => resolve(code)));
    const records = () =>
      out
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { msg?: string; port?: number; ca?: string });
    // The bin runs the built package (npm run build): without it, it exits at once.
    const exitedEarly = exited.then((code) => {
      throw new Error(`capstan run exited ${code} before its webhook server listened: ${out}`);
    });
    const listening = await Promise.race([
      waitUntil(() => records().find((r) => r.msg === "webhook server listening"), {
        what: "the webhook server listening",
        timeout: 30_000,
      }),
      exitedEarly,
    ]);
    // Registered once the CRD is established with the conversion (it registers the CRD after the configurations).
    await cluster.waitFor(
      CRD_KIND,
      CRD_NAME,
      (crd) =>
        isEstablished(crd) &&
        crd.spec.conversion?.webhook?.clientConfig?.url?.startsWith(url.replace("{port}", String(listening.port))) ===
          true,
      { timeout: "30s" },
    );
    return { port: listening.port as number, records };
  }

  async function stop(): Promise<void> {
    child?.kill("SIGTERM");
    expect(await exited).toBe(0);
  }

  it("registers its development CA, serves a certificate for the URL's host, and the API server calls the webhooks", async () => {
    const run = await start("https://127.0.0.1:{port}");
    const caPem = await readFile(join(cwd, ".capstan/webhook-ca/ca.crt"), "utf8");
    const caBundle = Buffer.from(caPem).toString("base64");
    // One line says what was done: the host, where the CA is kept, that it is for development.
    const made = run.records().filter((r) => r.msg?.startsWith("webhook server: development certificate"));
    expect(made).toHaveLength(1);
    expect(made[0]?.msg).toMatch(
      /^webhook server: development certificate for 127\.0\.0\.1, signed by the CA in \.capstan\/webhook-ca\/ca\.crt \(made now\), which is registered; for development only/,
    );

    // The CA is in both configurations and in the CRD's conversion.
    for (const [kind, name] of [
      ["ValidatingWebhookConfiguration", "useless-machine-validating"],
      ["MutatingWebhookConfiguration", "useless-machine-mutating"],
    ] as const) {
      const config = (await cluster.client.resource(configurations(kind)).get(name)) as WebhookConfiguration;
      expect(config.webhooks?.length).toBeGreaterThan(0);
      for (const webhook of config.webhooks ?? []) {
        expect(webhook.clientConfig.caBundle, webhook.name).toBe(caBundle);
        expect(webhook.clientConfig.url).toMatch(new RegExp(`^https://127\\.0\\.0\\.1:${run.port}/`));
      }
    }
    const crd = await cluster.client.resource(CRD_KIND).get(CRD_NAME);
    expect(crd.spec.conversion?.webhook?.clientConfig?.caBundle).toBe(caBundle);

    // The served certificate verifies against that CA for the IP address (an IP SAN).
    const served = await servedCertificate("127.0.0.1", run.port, caPem);
    expect(served.subjectaltname?.split(", ")).toContain("IP Address:127.0.0.1");

    // Mutation: the API server called the mutating webhook, which recorded the creator.
    const machines = cluster.client.resource(Machine, ns);
    const created = await machines.create(Machine.make({ metadata: { name: "m1" }, spec: {} }));
    expect(created.metadata.annotations?.[CREATED_BY_ANNOTATION]).toBeTruthy();
    // Validation: a Switch naming no machine is refused by the validating webhook.
    const refused = await cluster.client
      .resource(Switch, ns)
      .create(Switch.make({ metadata: { name: "s1", labels: { machine: "nope" } }, spec: { position: "down" } }))
      .catch((err: Error) => err.message);
    expect(refused).toBe(
      'admission webhook "machine-exists.switches.useless-machine.capstan.dev" denied the request: no Machine "nope" in namespace "dev-webhooks"',
    );
    // Conversion both ways through the API server: written in v1, read in v1alpha1, and back.
    await cluster.client.resource(machinesV1, ns).create(machineV1("m-v1", { position: "down", switches: 1 }));
    expect((await machines.get("m-v1")).spec).toEqual({ switchPosition: "down", switches: 1 });
    expect(((await cluster.client.resource(machinesV1, ns).get("m1")) as { spec: unknown }).spec).toEqual({});
    await stop();
  });

  it("keeps its CA across a restart, and serves a name host with a DNS SAN", async () => {
    const caBefore = await readFile(join(cwd, ".capstan/webhook-ca/ca.crt"), "utf8");
    const run = await start("https://localhost:{port}");
    expect(await readFile(join(cwd, ".capstan/webhook-ca/ca.crt"), "utf8")).toBe(caBefore);
    expect(run.records().find((r) => r.msg?.startsWith("webhook server: development certificate"))?.msg).toContain(
      "for localhost, signed by the CA in .capstan/webhook-ca/ca.crt (kept from an earlier run)",
    );
    const crd = await cluster.client.resource(CRD_KIND).get(CRD_NAME);
    expect(crd.spec.conversion?.webhook?.clientConfig?.caBundle).toBe(Buffer.from(caBefore).toString("base64"));
    const served = await servedCertificate("localhost", run.port, caBefore);
    expect(served.subjectaltname?.split(", ")).toContain("DNS:localhost");
    // The API server calls the webhooks by name now: conversion and mutation still work.
    await cluster.client.resource(machinesV1, ns).create(machineV1("m-by-name", { position: "down" }));
    const stored = await cluster.client.resource(Machine, ns).get("m-by-name");
    expect(stored.spec).toEqual({ switchPosition: "down" });
    expect(stored.metadata.annotations?.[CREATED_BY_ANNOTATION]).toBeTruthy();
    await stop();
  });
});

/** A Machine written in v1, where the machine's own switch is `spec.position`. */
function machineV1(name: string, spec: { position?: string; switches?: number }) {
  const machine = { apiVersion: `${GROUP}/v1`, kind: "Machine", metadata: { name }, spec };
  return machine;
}

/** The certificate served at host:port, verified against `ca` for `host` (the handshake fails otherwise). */
function servedCertificate(host: string, port: number, ca: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, ca, servername: host === "localhost" ? host : undefined }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve(cert);
    });
    socket.once("error", reject);
  });
}
