/**
 * The real kubectl against the stored built-in kinds (StatefulSets, Jobs, CronJobs, Ingresses, PVCs...):
 * api-resources, the typed `kubectl create` commands (protobuf bodies), `kubectl scale sts`, `kubectl get`
 * columns, `kubectl apply --prune` with kubectl's default prune list, and garbage collection of a
 * StatefulSet owned by a custom object.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startTestCluster, type TestCluster, waitUntil } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exchangeRateCrd, http, kubectlOk, tableRows } from "./support/cluster.ts";

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(() => cluster.stop());

const ok = (args: string[]) => kubectlOk(cluster, args);
const rows = tableRows;

// biome-ignore lint/suspicious/noExplicitAny: assertions read arbitrary JSON
async function getJson(args: string[]): Promise<any> {
  return JSON.parse(await ok(["get", ...args, "-o", "json"]));
}

const statefulSet = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name, labels },
  spec: {
    serviceName: name,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "db", image: "postgres:16" }] } },
  },
});

describe("kubectl and the stored built-in kinds", () => {
  it("api-resources shows the new kinds with their real short names, versions and scope", async () => {
    const lines = rows(await ok(["api-resources", "--no-headers"]));
    const byName = new Map(lines.map((cells) => [`${cells[0]} ${cells.at(-3)}`, cells]));
    const expected: Array<[string, string, string, string, string]> = [
      ["statefulsets", "sts", "apps/v1", "true", "StatefulSet"],
      ["daemonsets", "ds", "apps/v1", "true", "DaemonSet"],
      ["jobs", "", "batch/v1", "true", "Job"],
      ["cronjobs", "cj", "batch/v1", "true", "CronJob"],
      ["ingresses", "ing", "networking.k8s.io/v1", "true", "Ingress"],
      ["ingressclasses", "", "networking.k8s.io/v1", "false", "IngressClass"],
      ["networkpolicies", "netpol", "networking.k8s.io/v1", "true", "NetworkPolicy"],
      ["persistentvolumeclaims", "pvc", "v1", "true", "PersistentVolumeClaim"],
      ["persistentvolumes", "pv", "v1", "false", "PersistentVolume"],
      ["endpoints", "ep", "v1", "true", "Endpoints"],
      ["replicationcontrollers", "rc", "v1", "true", "ReplicationController"],
      ["limitranges", "limits", "v1", "true", "LimitRange"],
      ["resourcequotas", "quota", "v1", "true", "ResourceQuota"],
      ["poddisruptionbudgets", "pdb", "policy/v1", "true", "PodDisruptionBudget"],
      ["endpointslices", "", "discovery.k8s.io/v1", "true", "EndpointSlice"],
      ["storageclasses", "sc", "storage.k8s.io/v1", "false", "StorageClass"],
      ["priorityclasses", "pc", "scheduling.k8s.io/v1", "false", "PriorityClass"],
    ];
    for (const [name, short, version, namespaced, kind] of expected) {
      const row = byName.get(`${name} ${version}`);
      expect(row, name).toEqual(
        short === "" ? [name, version, namespaced, kind] : [name, short, version, namespaced, kind],
      );
    }
  });

  it("kubectl create job/cronjob/ingress/pdb/priorityclass/quota send protobuf bodies that are decoded in full", async () => {
    await ok(["create", "job", "pb-job", "--image=busybox:1.36", "--", "echo", "hi"]);
    const job = await getJson(["job", "pb-job"]);
    expect(job.spec.template.spec.containers[0]).toMatchObject({
      name: "pb-job",
      image: "busybox:1.36",
      command: ["echo", "hi"],
    });
    expect(job.spec.template.spec.restartPolicy).toBe("Never");
    expect(job.spec.selector.matchLabels["batch.kubernetes.io/controller-uid"]).toBe(job.metadata.uid);

    await ok(["create", "cronjob", "pb-cj", "--image=busybox:1.36", "--schedule=*/5 * * * *"]);
    const cj = await getJson(["cronjob", "pb-cj"]);
    expect(cj.spec).toMatchObject({ schedule: "*/5 * * * *", concurrencyPolicy: "Allow" });
    expect(cj.spec.jobTemplate.spec.template.spec.restartPolicy).toBe("OnFailure");

    await ok([
      "create",
      "ingress",
      "pb-ing",
      "--class=nginx",
      "--rule=foo.example.com/api*=api:8080",
      "--rule=bar.example.com/=web:http,tls=web-cert",
    ]);
    const ing = await getJson(["ingress", "pb-ing"]);
    expect(ing.spec.ingressClassName).toBe("nginx");
    expect(ing.spec.rules).toEqual([
      {
        host: "foo.example.com",
        http: {
          paths: [{ path: "/api", pathType: "Prefix", backend: { service: { name: "api", port: { number: 8080 } } } }],
        },
      },
      {
        host: "bar.example.com",
        http: {
          paths: [{ path: "/", pathType: "Exact", backend: { service: { name: "web", port: { name: "http" } } } }],
        },
      },
    ]);
    expect(ing.spec.tls).toEqual([{ hosts: ["bar.example.com"], secretName: "web-cert" }]);

    await ok(["create", "pdb", "pb-pdb", "--selector=app=db", "--max-unavailable=25%"]);
    const pdb = await getJson(["pdb", "pb-pdb"]);
    expect(pdb.spec).toEqual({ maxUnavailable: "25%", selector: { matchLabels: { app: "db" } } });

    await ok([
      "create",
      "priorityclass",
      "pb-pc",
      "--value=1000",
      "--description=important",
      "--preemption-policy=Never",
    ]);
    const pc = await getJson(["priorityclass", "pb-pc"]);
    expect(pc).toMatchObject({ value: 1000, description: "important", preemptionPolicy: "Never" });

    await ok(["create", "quota", "pb-quota", "--hard=cpu=1,memory=1G,pods=2", "--scopes=BestEffort"]);
    const quota = await getJson(["quota", "pb-quota"]);
    expect(quota.spec).toEqual({ hard: { cpu: "1", memory: "1G", pods: "2" }, scopes: ["BestEffort"] });
  });

  it("kubectl create job --from=cronjob keeps the template's inline fields (envFrom names, volume sources, probes)", async () => {
    const cronJob = {
      apiVersion: "batch/v1",
      kind: "CronJob",
      metadata: { name: "backup" },
      spec: {
        schedule: "0 3 * * *",
        jobTemplate: {
          spec: {
            template: {
              spec: {
                restartPolicy: "OnFailure",
                volumes: [
                  { name: "cfg", configMap: { name: "backup-cfg" } },
                  { name: "scratch", emptyDir: {} },
                ],
                containers: [
                  {
                    name: "c",
                    image: "busybox:1.36",
                    envFrom: [
                      { configMapRef: { name: "env-cm" } },
                      { secretRef: { name: "env-secret", optional: true } },
                    ],
                    env: [{ name: "P", valueFrom: { secretKeyRef: { name: "pw", key: "password" } } }],
                    readinessProbe: { exec: { command: ["cat", "/tmp/ok"] }, periodSeconds: 5 },
                  },
                ],
              },
            },
          },
        },
      },
    };
    const applied = await cluster.kubectl(["apply", "-f", "-"], { stdin: JSON.stringify(cronJob) });
    expect(applied.code, applied.stderr).toBe(0);
    await ok(["create", "job", "backup-now", "--from=cronjob/backup"]);
    const job = await getJson(["job", "backup-now"]);
    expect(job.metadata.ownerReferences).toEqual([
      expect.objectContaining({ apiVersion: "batch/v1", kind: "CronJob", name: "backup", controller: true }),
    ]);
    const spec = job.spec.template.spec;
    // The volume as the scheme's defaulting leaves it (SetDefaults_ConfigMapVolumeSource's 0644), as on a cluster.
    expect(spec.volumes).toEqual([
      { name: "cfg", configMap: { name: "backup-cfg", defaultMode: 420 } },
      { name: "scratch", emptyDir: {} },
    ]);
    expect(spec.containers[0]).toMatchObject({
      envFrom: [{ configMapRef: { name: "env-cm" } }, { secretRef: { name: "env-secret", optional: true } }],
      env: [{ name: "P", valueFrom: { secretKeyRef: { name: "pw", key: "password" } } }],
      readinessProbe: { exec: { command: ["cat", "/tmp/ok"] }, periodSeconds: 5 },
    });
  });

  it("kubectl scale statefulset writes spec.replicas through /scale and bumps generation", async () => {
    const r = await cluster.kubectl(["apply", "-f", "-"], { stdin: JSON.stringify(statefulSet("scaled")) });
    expect(r.code, r.stderr).toBe(0);
    expect(await ok(["scale", "statefulset", "scaled", "--replicas=3"])).toContain("statefulset.apps/scaled scaled");
    const sts = await getJson(["sts", "scaled"]);
    expect(sts.spec.replicas).toBe(3);
    expect(sts.metadata.generation).toBe(2);
    const scale = await http(cluster, "GET", "/apis/apps/v1/namespaces/default/statefulsets/scaled/scale");
    expect(scale.body).toMatchObject({ spec: { replicas: 3 }, status: { replicas: 0, selector: "app=scaled" } });
  });

  it("kubectl get prints the real columns for StatefulSets, Jobs, CronJobs, Ingresses and PVCs", async () => {
    const r = await cluster.kubectl(["apply", "-f", "-"], { stdin: JSON.stringify(statefulSet("cols")) });
    expect(r.code, r.stderr).toBe(0);
    const status = await http(
      cluster,
      "PATCH",
      "/apis/apps/v1/namespaces/default/statefulsets/cols/status",
      { status: { replicas: 1, readyReplicas: 1 } },
      "application/merge-patch+json",
    );
    expect(status.status, status.text).toBe(200);
    const sts = rows(await ok(["get", "sts", "cols", "-o", "wide"]));
    expect(sts[0]).toEqual(["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]);
    expect(sts[1]?.slice(0, 2)).toEqual(["cols", "1/1"]);
    expect(sts[1]?.slice(3)).toEqual(["db", "postgres:16"]);

    await ok(["create", "job", "cols-job", "--image=busybox:1.36"]);
    const job = rows(await ok(["get", "job", "cols-job"]));
    expect(job[0]).toEqual(["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]);
    expect(job[1]?.slice(0, 3)).toEqual(["cols-job", "Running", "0/1"]);

    await ok(["create", "cronjob", "cols-cj", "--image=busybox:1.36", "--schedule=0 3 * * *"]);
    const cj = rows(await ok(["get", "cronjob", "cols-cj"]));
    expect(cj[0]).toEqual(["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"]);
    expect(cj[1]?.slice(0, 6)).toEqual(["cols-cj", "0 3 * * *", "<none>", "False", "0", "<none>"]);

    await ok(["create", "ingress", "cols-ing", "--rule=a.example.com/=web:80,tls=cert"]);
    const ing = rows(await ok(["get", "ingress", "cols-ing"]));
    expect(ing[0]).toEqual(["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]);
    // ADDRESS is empty until something writes the load balancer status: the columns close up.
    expect(ing[1]?.slice(0, 4)).toEqual(["cols-ing", "<none>", "a.example.com", "80, 443"]);

    const pvc = await http(cluster, "POST", "/api/v1/namespaces/default/persistentvolumeclaims", {
      metadata: { name: "cols-pvc" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } }, storageClassName: "fast" },
    });
    expect(pvc.status, pvc.text).toBe(201);
    const pvcRows = rows(await ok(["get", "pvc", "cols-pvc", "-o", "wide"]));
    expect(pvcRows[0]).toEqual([
      "NAME",
      "STATUS",
      "VOLUME",
      "CAPACITY",
      "ACCESS MODES",
      "STORAGECLASS",
      "VOLUMEATTRIBUTESCLASS",
      "AGE",
      "VOLUMEMODE",
    ]);
    expect(pvcRows[1]?.slice(0, 3)).toEqual(["cols-pvc", "Pending", "fast"]);
    expect(pvcRows[1]?.at(-1)).toBe("Filesystem");
  });

  it("kubectl apply re-applies a CronJob with strategic merge (containers merged by name, generation bumped)", async () => {
    // A CronJob's job template may change (a Job's own template is immutable, as in kube-apiserver).
    const cronJob = (value: string) => ({
      apiVersion: "batch/v1",
      kind: "CronJob",
      metadata: { name: "reapply", labels: { rev: value } },
      spec: {
        schedule: "*/5 * * * *",
        jobTemplate: {
          spec: {
            template: {
              spec: {
                restartPolicy: "Never",
                containers: [{ name: "c", image: "busybox:1.36", env: [{ name: "A", value }] }],
              },
            },
          },
        },
      },
    });
    const first = await cluster.kubectl(["apply", "-f", "-"], { stdin: JSON.stringify(cronJob("1")) });
    expect(first.code, first.stderr).toBe(0);
    const second = await cluster.kubectl(["apply", "-f", "-"], { stdin: JSON.stringify(cronJob("2")) });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("cronjob.batch/reapply configured");
    const stored = await getJson(["cronjob", "reapply"]);
    expect(stored.metadata.labels.rev).toBe("2");
    const containers = stored.spec.jobTemplate.spec.template.spec.containers;
    expect(containers).toHaveLength(1);
    expect(containers[0]).toMatchObject({ name: "c", env: [{ name: "A", value: "2" }] });
    expect(stored.metadata.generation).toBe(2);
  });

  it("kubectl apply --prune -l (kubectl's default prune list) prunes a StatefulSet and a PVC removed from the file", async () => {
    const labels = { app: "x" };
    const pvc = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "prune-data", labels },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    };
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "prune-cm", labels }, data: { k: "v" } };
    const full = join(cluster.dir, "full.json");
    const reduced = join(cluster.dir, "reduced.json");
    await writeFile(
      full,
      JSON.stringify({ apiVersion: "v1", kind: "List", items: [statefulSet("prune-db", labels), pvc, cm] }),
    );
    await writeFile(reduced, JSON.stringify({ apiVersion: "v1", kind: "List", items: [cm] }));
    await ok(["apply", "-f", full, "--prune", "-l", "app=x"]);
    const out = await cluster.kubectl(["apply", "-f", reduced, "--prune", "-l", "app=x"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain("statefulset.apps/prune-db pruned");
    expect(out.stdout).toContain("persistentvolumeclaim/prune-data pruned");
    expect((await http(cluster, "GET", "/apis/apps/v1/namespaces/default/statefulsets/prune-db")).status).toBe(404);
    expect((await http(cluster, "GET", "/api/v1/namespaces/default/configmaps/prune-cm")).status).toBe(200);
  });

  it("garbage-collects a StatefulSet owned by a custom object when the owner is deleted", async () => {
    const crd = await http(
      cluster,
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      exchangeRateCrd(),
    );
    expect(crd.status, crd.text).toBe(201);
    const rates = "/apis/operators.example.com/v1/namespaces/default/exchangerates";
    await waitUntil(async () => (await http(cluster, "GET", rates)).status === 200);
    const owner = await http(cluster, "POST", rates, {
      apiVersion: "operators.example.com/v1",
      kind: "ExchangeRate",
      metadata: { name: "usd" },
      spec: { currency: "USD" },
    });
    expect(owner.status, owner.text).toBe(201);
    const owned = statefulSet("owned-db");
    const created = await http(cluster, "POST", "/apis/apps/v1/namespaces/default/statefulsets", {
      ...owned,
      metadata: {
        ...owned.metadata,
        ownerReferences: [
          {
            apiVersion: "operators.example.com/v1",
            kind: "ExchangeRate",
            name: "usd",
            uid: (owner.body as { metadata: { uid: string } }).metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
    });
    expect(created.status, created.text).toBe(201);
    expect((await http(cluster, "DELETE", `${rates}/usd`)).status).toBe(200);
    await waitUntil(
      async () => (await http(cluster, "GET", "/apis/apps/v1/namespaces/default/statefulsets/owned-db")).status === 404,
    );
  });
});
