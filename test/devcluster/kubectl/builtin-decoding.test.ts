/**
 * The real kubectl against built-in objects decoded as kube-apiserver decodes them: a typo in a
 * Deployment manifest fails `kubectl apply` (kubectl sends fieldValidation=Strict), `--validate=false`
 * drops it, `--validate=warn` warns, and a value of the wrong type is refused with Go's message.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startTestCluster } from "capstan-dev/testing";
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../support/file-fixture.ts";

const cluster = fileFixture(() => startTestCluster());

/** A Deployment manifest as a user writes it, `container` lines indented under the container. */
async function manifest(name: string, containerLines: string[]): Promise<string> {
  const path = join(cluster.dir, `${name}.yaml`);
  const yaml = [
    "apiVersion: apps/v1",
    "kind: Deployment",
    "metadata:",
    `  name: ${name}`,
    "spec:",
    "  replicas: 1",
    "  selector:",
    "    matchLabels:",
    `      app: ${name}`,
    "  template:",
    "    metadata:",
    "      labels:",
    `        app: ${name}`,
    "    spec:",
    "      containers:",
    "      - name: web",
    ...containerLines.map((l) => `        ${l}`),
    "",
  ].join("\n");
  await writeFile(path, yaml);
  return path;
}

describe("kubectl apply of built-in objects", () => {
  it("fails on a typo'd field with the strict decoding error", async () => {
    const file = await manifest("typo", ["imagee: nginx"]);
    const res = await cluster.kubectl(["apply", "-f", file]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].imagee"',
    );
    const get = await cluster.kubectl(["get", "deployment", "typo"]);
    expect(get.code).not.toBe(0);
  });

  it("refuses a typo applied onto an existing Deployment and keeps the stored one", async () => {
    const good = await manifest("existing", ["image: nginx"]);
    expect((await cluster.kubectl(["apply", "-f", good])).code).toBe(0);
    const typo = await manifest("existing", ["image: nginx:2", "imagee: nginx"]);
    const res = await cluster.kubectl(["apply", "-f", typo]);
    expect(res.code).not.toBe(0);
    // kubectl sends a strategic merge patch: patch.go's 422, the patch printed as a Go map.
    expect(res.stderr).toContain('The request is invalid: patch: Invalid value: "map[metadata:map[annotations:map[');
    expect(res.stderr).toContain(
      'spec:map[template:map[spec:map[$setElementOrder/containers:[map[name:web]] containers:[map[image:nginx:2 imagee:nginx name:web]]]]]]": strict decoding error: unknown field "spec.template.spec.containers[0].imagee"',
    );
    const get = await cluster.kubectl([
      "get",
      "deployment",
      "existing",
      "-o",
      "jsonpath={.spec.template.spec.containers[0].image}",
    ]);
    expect(get.stdout).toBe("nginx");
  });

  it("drops the field with --validate=false and stores the rest", async () => {
    const file = await manifest("ignored", ["image: nginx", "imagee: nginx"]);
    const res = await cluster.kubectl(["apply", "--validate=false", "-f", file]);
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    const get = await cluster.kubectl(["get", "deployment", "ignored", "-o", "json"]);
    const container = JSON.parse(get.stdout).spec.template.spec.containers[0];
    expect(container.image).toBe("nginx");
    expect(container).not.toHaveProperty("imagee");
  });

  it("prints the server's warning with --validate=warn", async () => {
    const file = await manifest("warned", ["image: nginx", "imagee: nginx"]);
    const res = await cluster.kubectl(["apply", "--validate=warn", "-f", file]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('Warning: unknown field "spec.template.spec.containers[0].imagee"');
  });

  it("refuses an env var whose name YAML read as a bool", async () => {
    const file = await manifest("env-bool", ["image: nginx", "env:", "- name: Y", "  value: x"]);
    // YAML 1.1 (kubectl's sigs.k8s.io/yaml) reads an unquoted Y as true.
    const res = await cluster.kubectl(["apply", "-f", file]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal bool into Go struct field EnvVar.spec.template.spec.containers.env.name of type string',
    );
  });
});
