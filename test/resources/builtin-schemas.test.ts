/**
 * The generated built-in schemas inside a custom resource: the CRD of a kind whose spec holds a
 * `JobTemplateSpec` is accepted by the API server, which then validates the template as
 * kube-apiserver validates kubebuilder's CronJob CRD (required container names, list-map keys,
 * quantities), keeps the template's labels and prunes unknown fields.
 */
import { ApiError, defineResource, type Static, Type, toCrd } from "capstan";
import { ensureCrds } from "capstan/runtime";
import { JobTemplateSpec } from "capstan/schemas/batch/v1";
import type { Container, PodTemplateSpec, ResourceRequirements } from "capstan/schemas/core/v1";
import { LabelSelector } from "capstan/schemas/meta/v1";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import type * as batch from "kubernetes-types/batch/v1.d.ts";
import type * as core from "kubernetes-types/core/v1.d.ts";
import type * as meta from "kubernetes-types/meta/v1.d.ts";
import type { TSchema } from "typebox";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";

const JobRunner = defineResource({
  group: "schemas.capstan.test",
  version: "v1",
  kind: "JobRunner",
  scope: "Namespaced",
  spec: Type.Object({
    schedule: Type.String({ description: "When to run, in cron syntax." }),
    jobTemplate: JobTemplateSpec,
    selector: Type.Optional(LabelSelector),
  }),
});

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster();
  await ensureCrds(cluster.client, [toCrd(JobRunner)]);
});

afterAll(async () => {
  await cluster?.stop();
});

function runner(name: string, containers: unknown[], extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "schemas.capstan.test/v1",
    kind: "JobRunner",
    metadata: { name },
    spec: {
      schedule: "*/1 * * * *",
      jobTemplate: { metadata: { labels: { team: "a" } }, spec: { template: { spec: { containers, ...extra } } } },
    },
  };
}

async function refusal(obj: unknown): Promise<ApiError> {
  const api = cluster.client.resource(JobRunner, cluster.namespace);
  const error = await api.create(obj as never).then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

const CONTAINERS = "spec.jobTemplate.spec.template.spec.containers";

describe("a CRD embedding JobTemplateSpec", () => {
  it("is accepted, and stores a template with the template's labels kept, defaults applied, unknown fields pruned", async () => {
    const api = cluster.client.resource(JobRunner, cluster.namespace);
    const created = await api.create(
      runner(
        "valid",
        [
          {
            name: "hello",
            image: "busybox",
            ports: [{ containerPort: 8080 }],
            resources: { limits: { cpu: "500m", memory: "64Mi" }, requests: { cpu: 1 } },
            notAField: true,
          },
        ],
        { restartPolicy: "OnFailure" },
      ) as never,
    );
    const template = created.spec.jobTemplate;
    expect(template.metadata?.labels).toEqual({ team: "a" });
    const [container] = template.spec?.template.spec?.containers ?? [];
    expect(container).toEqual({
      name: "hello",
      image: "busybox",
      ports: [{ containerPort: 8080, protocol: "TCP" }],
      resources: { limits: { cpu: "500m", memory: "64Mi" }, requests: { cpu: 1 } },
    });
  });

  it("refuses a container without a name, naming the field", async () => {
    const error = await refusal(runner("nameless", [{ image: "busybox" }]));
    expect(error.code).toBe(422);
    expect(error.status.details?.causes).toContainEqual(
      expect.objectContaining({ reason: "FieldValueRequired", field: `${CONTAINERS}[0].name` }),
    );
    expect(error.message).toContain(`${CONTAINERS}[0].name: Required value`);
  });

  it("refuses two containers of the same name (a list map keyed by name)", async () => {
    const error = await refusal(runner("twins", [{ name: "a" }, { name: "a" }]));
    expect(error.code).toBe(422);
    expect(error.status.details?.causes).toContainEqual(
      expect.objectContaining({ reason: "FieldValueDuplicate", field: `${CONTAINERS}[1]` }),
    );
  });

  it("refuses a quantity that is not one, with the pattern's message", async () => {
    const error = await refusal(runner("greedy", [{ name: "a", resources: { limits: { memory: "1 GB" } } }]));
    expect(error.code).toBe(422);
    const field = `${CONTAINERS}[0].resources.limits.memory`;
    expect(error.status.details?.causes).toContainEqual(
      expect.objectContaining({ reason: "FieldValueInvalid", field }),
    );
    expect(error.message).toContain(`${field}: Invalid value: "1 GB": ${field} in body should match '^(\\+|-)?`);
  });

  it("refuses a field of the wrong type deep in the pod spec", async () => {
    const error = await refusal(runner("typo", [{ name: "a" }], { activeDeadlineSeconds: "soon" }));
    expect(error.code).toBe(422);
    expect(error.message).toContain(
      `spec.jobTemplate.spec.template.spec.activeDeadlineSeconds: Invalid value: "string": spec.jobTemplate.spec.template.spec.activeDeadlineSeconds in body must be of type integer: "string"`,
    );
  });
});

describe("every built-in schema", () => {
  it("translates into a structural CRD schema (toCrd checks it), so any of them can sit in a spec", async () => {
    const groupVersions = {
      "core/v1": await import("capstan/schemas/core/v1"),
      "apps/v1": await import("capstan/schemas/apps/v1"),
      "batch/v1": await import("capstan/schemas/batch/v1"),
      "meta/v1": await import("capstan/schemas/meta/v1"),
      "networking/v1": await import("capstan/schemas/networking/v1"),
      "rbac/v1": await import("capstan/schemas/rbac/v1"),
      "policy/v1": await import("capstan/schemas/policy/v1"),
      "autoscaling/v2": await import("capstan/schemas/autoscaling/v2"),
    };
    let count = 0;
    for (const [groupVersion, schemas] of Object.entries(groupVersions)) {
      for (const [name, schema] of Object.entries(schemas)) {
        const kind = defineResource({
          group: "schemas.capstan.test",
          version: "v1",
          kind: "Holder",
          scope: "Namespaced",
          spec: Type.Object({ value: Type.Optional(schema as TSchema) }),
        });
        expect(() => toCrd(kind), `${groupVersion} ${name}`).not.toThrow();
        count++;
      }
    }
    expect(count).toBeGreaterThan(280);
  });
});

describe("toCrd's maxDescriptionLength", () => {
  function descriptions(node: unknown, into: string[] = []): string[] {
    if (Array.isArray(node)) for (const item of node) descriptions(item, into);
    else if (typeof node === "object" && node !== null) {
      for (const [key, value] of Object.entries(node)) {
        if (key === "description" && typeof value === "string") into.push(value);
        else descriptions(value, into);
      }
    }
    return into;
  }

  it("keeps Kubernetes' descriptions by default, cuts them between words with ..., or removes them at 0", () => {
    const full = toCrd(JobRunner);
    const all = descriptions(full);
    expect(all).toContain("When to run, in cron syntax.");
    expect(all.some((d) => d.startsWith("List of containers belonging to the pod."))).toBe(true);
    const short = descriptions(toCrd(JobRunner, { maxDescriptionLength: 40 }));
    expect(short).toHaveLength(all.length);
    expect(short).toContain("List of containers belonging to the...");
    expect(short.every((d) => d.length <= 43)).toBe(true);
    const none = toCrd(JobRunner, { maxDescriptionLength: 0 });
    expect(descriptions(none)).toEqual([]);
    // What the option is for: the client-side apply annotation holds at most 256 KiB.
    expect(JSON.stringify(full).length).toBeGreaterThan(256 * 1024);
    expect(JSON.stringify(none).length).toBeLessThan(128 * 1024);
    expect(() => toCrd(JobRunner, { maxDescriptionLength: -1 })).toThrow(RangeError);
  });
});

describe("the static types of built-in schemas", () => {
  it("are assignable to kubernetes-types' types, so a template goes straight into a Job", () => {
    expectTypeOf<Static<typeof JobTemplateSpec>>().toExtend<batch.JobTemplateSpec>();
    expectTypeOf<Static<typeof PodTemplateSpec>>().toExtend<core.PodTemplateSpec>();
    expectTypeOf<Static<typeof Container>>().toExtend<core.Container>();
    expectTypeOf<Static<typeof ResourceRequirements>>().toExtend<core.ResourceRequirements>();
    expectTypeOf<Static<typeof LabelSelector>>().toExtend<meta.LabelSelector>();
    expectTypeOf<Static<typeof JobTemplateSpec>>().toEqualTypeOf<JobTemplateSpec>();
    const made = JobRunner.make({
      metadata: { name: "typed" },
      spec: { schedule: "@hourly", jobTemplate: { spec: { template: { spec: { containers: [{ name: "a" }] } } } } },
    });
    const job: batch.Job = { apiVersion: "batch/v1", kind: "Job", spec: made.spec.jobTemplate.spec };
    expect(job.spec?.template.spec?.containers[0]?.name).toBe("a");
  });
});
