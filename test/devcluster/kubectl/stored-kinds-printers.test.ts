/**
 * The Table printers of the stored built-in kinds, as pure functions of the object and `now`: the
 * cells kube-apiserver's pkg/printers/internalversion computes for them.
 */
import { describe, expect, it } from "vitest";
import {
  builtinPrinter,
  defaultPrinter,
} from "../../../packages/capstan-dev/src/devcluster/printers/table-printers.ts";

const NOW = Date.parse("2026-01-10T12:00:00Z");
const created = { creationTimestamp: "2026-01-10T11:55:00Z" };
const cells = (group: string, resource: string, obj: Record<string, unknown>) =>
  builtinPrinter(group, resource).cells(obj, NOW);
const names = (group: string, resource: string) => builtinPrinter(group, resource).columns.map((c) => c.name);

describe("printers of the stored built-in kinds", () => {
  it("Job: status by condition precedence, completions, duration from start to completion or now", () => {
    const job = (status: Record<string, unknown>, spec: Record<string, unknown> = { completions: 3 }) =>
      cells("batch", "jobs", { metadata: { name: "j", ...created }, spec, status });
    expect(job({ succeeded: 1, startTime: "2026-01-10T11:58:00Z" }).slice(0, 4)).toEqual(["j", "Running", "1/3", "2m"]);
    expect(
      job({
        succeeded: 3,
        startTime: "2026-01-10T11:56:00Z",
        completionTime: "2026-01-10T11:56:45Z",
        conditions: [
          { type: "Failed", status: "False" },
          { type: "Complete", status: "True" },
        ],
      }).slice(0, 4),
    ).toEqual(["j", "Complete", "3/3", "45s"]);
    expect(job({ conditions: [{ type: "Suspended", status: "True" }] })[1]).toBe("Suspended");
    expect(job({}, { parallelism: 4 })[2]).toBe("0/1 of 4");
    expect(job({}, {})[2]).toBe("0/1");
    expect(job({})[3]).toBe("");
  });

  it("CronJob: time zone and last schedule, `<none>` when unset; suspend as printBoolPtr", () => {
    const row = cells("batch", "cronjobs", {
      metadata: { name: "c", ...created },
      spec: { schedule: "0 3 * * *", timeZone: "Europe/Berlin", suspend: true },
      status: { active: [{ name: "c-1" }], lastScheduleTime: "2026-01-10T11:59:00Z" },
    });
    expect(row.slice(0, 7)).toEqual(["c", "0 3 * * *", "Europe/Berlin", "True", 1, "60s", "5m"]);
    const bare = cells("batch", "cronjobs", { metadata: { name: "b", ...created }, spec: { schedule: "@daily" } });
    expect(bare.slice(2, 6)).toEqual(["<none>", "<unset>", 0, "<none>"]);
  });

  it("Ingress: class, up to three hosts then `+ N more...`, sorted load-balancer addresses, TLS ports", () => {
    const row = cells("networking.k8s.io", "ingresses", {
      metadata: { name: "i", ...created },
      spec: {
        rules: [{ host: "a.io" }, {}, { host: "b.io" }, { host: "c.io" }, { host: "d.io" }],
        tls: [{ hosts: ["a.io"] }],
      },
      status: { loadBalancer: { ingress: [{ ip: "10.0.0.2" }, { hostname: "lb.example.com" }, { ip: "10.0.0.2" }] } },
    });
    expect(row).toEqual(["i", "<none>", "a.io,b.io,c.io + 2 more...", "10.0.0.2,lb.example.com", "80, 443", "5m"]);
    expect(cells("networking.k8s.io", "ingresses", { metadata: { name: "j" }, spec: {} })[2]).toBe("*");
  });

  it("PVC and PV: capacity and access modes once bound, storage class from the beta annotation first", () => {
    const pvc = cells("", "persistentvolumeclaims", {
      metadata: { name: "data", ...created, annotations: { "volume.beta.kubernetes.io/storage-class": "old" } },
      spec: { volumeName: "pv1", storageClassName: "fast", volumeMode: "Filesystem" },
      status: { phase: "Bound", capacity: { storage: "1Gi" }, accessModes: ["ReadWriteMany", "ReadWriteOnce"] },
    });
    expect(pvc).toEqual(["data", "Bound", "pv1", "1Gi", "RWO,RWX", "old", "<unset>", "5m", "Filesystem"]);
    const pv = cells("", "persistentvolumes", {
      metadata: { name: "pv1", ...created, deletionTimestamp: "2026-01-10T11:59:00Z" },
      spec: {
        capacity: { storage: "1Gi" },
        accessModes: ["ReadWriteOncePod"],
        persistentVolumeReclaimPolicy: "Retain",
        claimRef: { namespace: "default", name: "data" },
      },
      status: { phase: "Bound" },
    });
    expect(pv).toEqual([
      "pv1",
      "1Gi",
      "RWOP",
      "Retain",
      "Terminating",
      "default/data",
      "",
      "<unset>",
      "",
      "5m",
      "<unset>",
    ]);
  });

  it("Endpoints and EndpointSlices: three entries then `+ N more...`", () => {
    const ep = cells("", "endpoints", {
      metadata: { name: "e", ...created },
      subsets: [
        { addresses: [{ ip: "10.0.0.1" }, { ip: "10.0.0.2" }], ports: [{ port: 80 }, { port: 443 }] },
        { addresses: [{ ip: "10.0.0.3" }] },
      ],
    });
    expect(ep[1]).toBe("10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more...");
    expect(cells("", "endpoints", { metadata: { name: "none" } })[1]).toBe("<none>");
    const slice = cells("discovery.k8s.io", "endpointslices", {
      metadata: { name: "s", ...created },
      addressType: "IPv4",
      ports: [{ name: "http" }, { port: 8080 }],
      endpoints: [],
    });
    expect(slice).toEqual(["s", "IPv4", "http,8080", "<unset>", "5m"]);
  });

  it("ResourceQuota splits used/hard into requests and limits; PDB shows N/A for the unset bound", () => {
    expect(names("", "resourcequotas")).toEqual(["Name", "Request", "Limit", "Age"]);
    const quota = cells("", "resourcequotas", {
      metadata: { name: "q", ...created },
      status: {
        hard: { pods: "10", "limits.cpu": "4", "requests.memory": "1Gi" },
        used: { pods: "2", "limits.cpu": "500m" },
      },
    });
    expect(quota).toEqual(["q", "pods: 2/10, requests.memory: 0/1Gi", "limits.cpu: 500m/4", "5m"]);
    const pdb = cells("policy", "poddisruptionbudgets", {
      metadata: { name: "p", ...created },
      spec: { minAvailable: "50%" },
      status: { disruptionsAllowed: 2 },
    });
    expect(pdb).toEqual(["p", "50%", "N/A", 2, "5m"]);
  });

  it("StorageClass marks the default class; PriorityClass and StatefulSet rows; LimitRange has no printer", () => {
    const sc = cells("storage.k8s.io", "storageclasses", {
      metadata: { name: "fast", ...created, annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
      provisioner: "example.com/fast",
    });
    expect(sc).toEqual(["fast (default)", "example.com/fast", "Delete", "Immediate", false, "5m"]);
    const pc = cells("scheduling.k8s.io", "priorityclasses", {
      metadata: { name: "high", ...created },
      value: 1000,
      globalDefault: true,
    });
    expect(pc).toEqual(["high", 1000, true, "5m", "<unset>"]);
    const sts = cells("apps", "statefulsets", {
      metadata: { name: "db", ...created },
      spec: {
        replicas: 3,
        template: {
          spec: {
            containers: [
              { name: "a", image: "x:1" },
              { name: "b", image: "y:2" },
            ],
          },
        },
      },
      status: { readyReplicas: 2 },
    });
    expect(sts).toEqual(["db", "2/3", "5m", "a,b", "x:1,y:2"]);
    expect(builtinPrinter("", "limitranges")).toBe(defaultPrinter);
  });
  it("ReplicaSet and ReplicationController: desired/current/ready, template columns, selector by its type", () => {
    const template = { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx:1" }] } };
    const status = { replicas: 2, readyReplicas: 1 };
    const expected = ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"];
    expect(names("apps", "replicasets")).toEqual(expected);
    expect(names("", "replicationcontrollers")).toEqual(expected);
    const rs = cells("apps", "replicasets", {
      metadata: { name: "rs", ...created },
      spec: { replicas: 3, selector: { matchLabels: { app: "web" } }, template },
      status,
    });
    expect(rs).toEqual(["rs", 3, 2, 1, "5m", "c", "nginx:1", "app=web"]);
    // metav1.FormatLabelSelector: a selector that selects everything prints as <none>.
    expect(cells("apps", "replicasets", { metadata: { name: "e", ...created }, spec: { selector: {} } })[7]).toBe(
      "<none>",
    );
    const rc = cells("", "replicationcontrollers", {
      metadata: { name: "rc", ...created },
      spec: { replicas: 3, selector: { tier: "a", app: "web" }, template },
      status,
    });
    expect(rc).toEqual(["rc", 3, 2, 1, "5m", "c", "nginx:1", "app=web,tier=a"]);
    const wide = builtinPrinter("", "replicationcontrollers").columns.filter((c) => c.priority === 1);
    expect(wide.map((c) => c.name)).toEqual(["Containers", "Images", "Selector"]);
  });
});
