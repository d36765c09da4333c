/**
 * The folder's strict-brands-policy.yaml applied with the real kubectl: the API server itself refuses
 * guitars of unknown brands in strict namespaces, warns in namespaces labelled `warn`, and lets any
 * brand in elsewhere, while the operator reviews what was let in.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import op, { DEFAULT_BAD_BRANDS, DEFAULT_GOOD_BRANDS, UNKNOWN_COMMENT } from "./operator.ts";

const POLICY = fileURLToPath(new URL("strict-brands-policy.yaml", import.meta.url));

let cluster: TestCluster;
/**
 * Why the policy cannot be applied here: ValidatingAdmissionPolicy is served in
 * admissionregistration.k8s.io/v1 from Kubernetes 1.30 (alpha and off by default in 1.26).
 */
let noPolicies: string | undefined;
beforeAll(async () => {
  cluster = await startTestCluster();
  await cluster.run(op); // registers the Guitar CRD, and reviews the guitars let in
  const ADMISSION = "admissionregistration.k8s.io/v1";
  noPolicies =
    (await cluster.missingApi(ADMISSION, "validatingadmissionpolicies")) ??
    (await cluster.missingApi(ADMISSION, "validatingadmissionpolicybindings"));
  if (noPolicies === undefined) {
    const applied = await cluster.kubectl(["apply", "-f", POLICY]);
    expect(applied.stderr).toBe("");
    expect(applied.code).toBe(0);
  }
  for (const [ns, strict] of [
    ["strict-shop", "true"],
    ["careful-shop", "warn"],
    ["flea-market", undefined],
  ] as const) {
    expect((await cluster.kubectl(["create", "namespace", ns])).code).toBe(0);
    if (strict)
      expect((await cluster.kubectl(["label", "namespace", ns, `kool.karmalabs.local/strict=${strict}`])).code).toBe(0);
  }
});
afterAll(() => cluster?.stop());

const guitar = (name: string, brand: string) =>
  JSON.stringify({ apiVersion: "kool.karmalabs.local/v1", kind: "Guitar", metadata: { name }, spec: { brand } });

const apply = (ns: string, name: string, brand: string) =>
  cluster.kubectl(["apply", "-n", ns, "-f", "-"], { stdin: guitar(name, brand) });

it("lists in the policy exactly the brands the reviewer knows", () => {
  const yaml = readFileSync(POLICY, "utf8");
  const listed = [...(/knownBrands\s+expression: >-\s+\[([^\]]*)\]/.exec(yaml)?.[1] ?? "").matchAll(/'([^']+)'/g)].map(
    (m) => m[1],
  );
  expect(listed.sort()).toEqual([...DEFAULT_GOOD_BRANDS, ...DEFAULT_BAD_BRANDS].sort());
});

it("refuses a guitar of an unknown brand in a strict namespace, with the policy's message", async (ctx) => {
  ctx.skip(noPolicies !== undefined, noPolicies);
  const refused = await apply("strict-shop", "homemade", "acme");
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain(
    `guitars.kool.karmalabs.local "homemade" is forbidden: ValidatingAdmissionPolicy 'guitar-known-brands' with binding 'guitar-known-brands-strict' denied request: nobody knows the brand acme: guitars here must be of a brand the reviewer knows`,
  );
  expect((await cluster.kubectl(["get", "guitar", "homemade", "-n", "strict-shop"])).code).not.toBe(0);
});

it("accepts known brands in a strict namespace, in any case, good or bad", async (ctx) => {
  ctx.skip(noPolicies !== undefined, noPolicies);
  for (const [name, brand] of [
    ["strat", "Fender"],
    ["x003", " yamaha "],
  ]) {
    const accepted = await apply("strict-shop", name!, brand!);
    expect(accepted.stderr).toBe("");
    expect(accepted.code).toBe(0);
  }
  // An update to an unknown brand is refused too.
  const patched = await cluster.kubectl([
    "patch",
    "guitar",
    "strat",
    "-n",
    "strict-shop",
    "--type=merge",
    "-p",
    '{"spec":{"brand":"acme"}}',
  ]);
  expect(patched.code).not.toBe(0);
  expect(patched.stderr).toContain("denied request: nobody knows the brand acme");
});

it("warns about an unknown brand in a namespace labelled warn, and accepts it", async (ctx) => {
  ctx.skip(noPolicies !== undefined, noPolicies);
  const warned = await apply("careful-shop", "homemade", "acme");
  expect(warned.code).toBe(0);
  expect(warned.stderr).toBe(
    "Warning: Validation failed for ValidatingAdmissionPolicy 'guitar-known-brands' with binding 'guitar-known-brands-warn': nobody knows the brand acme: guitars here must be of a brand the reviewer knows\n",
  );
});

it("lets any brand in elsewhere, where the operator reviews it", async () => {
  const accepted = await apply("flea-market", "homemade", "acme");
  expect(accepted.stderr).toBe("");
  expect(accepted.code).toBe(0);
  const waited = await cluster.kubectl([
    "wait",
    "-n",
    "flea-market",
    `--for=jsonpath={.spec.comment}=${UNKNOWN_COMMENT}`,
    "--timeout=10s",
    "guitar/homemade",
  ]);
  expect(waited.code, waited.stderr).toBe(0);
});
