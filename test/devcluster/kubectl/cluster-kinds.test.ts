/**
 * The real kubectl (1.32) against the kinds a 1.32 server serves for cluster components: api-resources,
 * `kubectl autoscale` (a protobuf autoscaling/v1 body), `kubectl certificate approve` (protobuf to
 * /approval), `kubectl get componentstatuses`, and the columns `kubectl get` prints for each kind.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startTestCluster, type TestCluster } from "capstan-dev/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubectlOk, tableRows } from "./support/cluster.ts";

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(() => cluster.stop());

const ok = (args: string[]) => kubectlOk(cluster, args);
const rows = tableRows;

async function apply(manifests: object[]): Promise<void> {
  const file = join(cluster.dir, `m-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, JSON.stringify({ apiVersion: "v1", kind: "List", items: manifests }));
  await ok(["apply", "-f", file]);
}

describe("kubectl and the cluster component kinds", () => {
  it("api-resources shows each kind with its short names, version and scope", async () => {
    const lines = rows(await ok(["api-resources", "--no-headers"]));
    const byName = new Map(lines.map((cells) => [`${cells[0]} ${cells.at(-3)}`, cells]));
    const expected: Array<[string, string, string, string, string]> = [
      ["componentstatuses", "cs", "v1", "false", "ComponentStatus"],
      ["apiservices", "", "apiregistration.k8s.io/v1", "false", "APIService"],
      ["podtemplates", "", "v1", "true", "PodTemplate"],
      ["controllerrevisions", "", "apps/v1", "true", "ControllerRevision"],
      ["horizontalpodautoscalers", "hpa", "autoscaling/v2", "true", "HorizontalPodAutoscaler"],
      ["certificatesigningrequests", "csr", "certificates.k8s.io/v1", "false", "CertificateSigningRequest"],
      ["runtimeclasses", "", "node.k8s.io/v1", "false", "RuntimeClass"],
      ["csidrivers", "", "storage.k8s.io/v1", "false", "CSIDriver"],
      ["csinodes", "", "storage.k8s.io/v1", "false", "CSINode"],
      ["csistoragecapacities", "", "storage.k8s.io/v1", "true", "CSIStorageCapacity"],
      ["volumeattachments", "", "storage.k8s.io/v1", "false", "VolumeAttachment"],
      ["validatingadmissionpolicies", "", "admissionregistration.k8s.io/v1", "false", "ValidatingAdmissionPolicy"],
      [
        "validatingadmissionpolicybindings",
        "",
        "admissionregistration.k8s.io/v1",
        "false",
        "ValidatingAdmissionPolicyBinding",
      ],
      ["flowschemas", "", "flowcontrol.apiserver.k8s.io/v1", "false", "FlowSchema"],
      ["prioritylevelconfigurations", "", "flowcontrol.apiserver.k8s.io/v1", "false", "PriorityLevelConfiguration"],
    ];
    for (const [name, short, version, namespaced, kind] of expected) {
      expect(byName.get(`${name} ${version}`), name).toEqual(
        short === "" ? [name, version, namespaced, kind] : [name, short, version, namespaced, kind],
      );
    }
  });

  it("kubectl autoscale creates an autoscaling/v1 HPA that `get hpa` prints with its CPU target", async () => {
    await ok(["create", "deployment", "web", "--image=nginx"]);
    await ok(["autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=60"]);
    const out = rows(await ok(["get", "hpa", "web"]));
    expect(out[0]).toEqual(["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]);
    expect(out[1]?.slice(0, 6)).toEqual(["web", "Deployment/web", "cpu: <unknown>/60%", "2", "5", "0"]);
    const v2 = JSON.parse(await ok(["get", "hpa.v2.autoscaling", "web", "-o", "json"]));
    expect(v2.spec.metrics).toEqual([
      { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } } },
    ]);
  });

  it("kubectl certificate approve writes the Approved condition through /approval", async () => {
    await apply([
      {
        apiVersion: "certificates.k8s.io/v1",
        kind: "CertificateSigningRequest",
        metadata: { name: "alice" },
        spec: {
          request: "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
          signerName: "kubernetes.io/kube-apiserver-client",
          expirationSeconds: 86400,
          usages: ["client auth"],
        },
      },
    ]);
    const whoami = await ok(["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]);
    const pending = rows(await ok(["get", "csr", "alice"]));
    expect(pending[0]).toEqual(["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]);
    expect(pending[1]?.slice(2)).toEqual(["kubernetes.io/kube-apiserver-client", whoami, "24h", "Pending"]);

    expect(await ok(["certificate", "approve", "alice"])).toContain(
      "certificatesigningrequest.certificates.k8s.io/alice approved",
    );
    expect(rows(await ok(["get", "csr", "alice"]))[1]?.at(-1)).toBe("Approved");
    const csr = JSON.parse(await ok(["get", "csr", "alice", "-o", "json"]));
    expect(csr.status.conditions).toEqual([
      expect.objectContaining({ type: "Approved", status: "True", reason: "KubectlApprove" }),
    ]);
  });

  it("kubectl get componentstatuses prints the healthy components", async () => {
    const out = rows(await ok(["get", "componentstatuses"]));
    expect(out[0]).toEqual(["NAME", "STATUS", "MESSAGE", "ERROR"]);
    expect(
      out
        .slice(1)
        .map((r) => r.slice(0, 3))
        .sort(),
    ).toEqual([
      ["controller-manager", "Healthy", "ok"],
      ["etcd-0", "Healthy", "ok"],
      ["scheduler", "Healthy", "ok"],
    ]);
  });

  it("kubectl get prints each kind's 1.32 columns", async () => {
    // A revision's controller must exist, or the garbage collector deletes the revision.
    await apply([
      {
        apiVersion: "apps/v1",
        kind: "DaemonSet",
        metadata: { name: "ds" },
        spec: {
          selector: { matchLabels: { app: "ds" } },
          template: {
            metadata: { labels: { app: "ds" } },
            spec: { containers: [{ name: "c", image: "busybox:1.36" }] },
          },
        },
      },
    ]);
    const dsUid = await ok(["get", "daemonset", "ds", "-o", "jsonpath={.metadata.uid}"]);
    await apply([
      {
        apiVersion: "v1",
        kind: "PodTemplate",
        metadata: { name: "tpl" },
        template: {
          metadata: { labels: { app: "x" } },
          spec: {
            containers: [
              { name: "a", image: "busybox:1.36" },
              { name: "b", image: "nginx" },
            ],
          },
        },
      },
      {
        apiVersion: "apps/v1",
        kind: "ControllerRevision",
        metadata: {
          name: "ds-7f9",
          ownerReferences: [{ apiVersion: "apps/v1", kind: "DaemonSet", name: "ds", uid: dsUid, controller: true }],
        },
        revision: 3,
        data: {},
      },
      { apiVersion: "node.k8s.io/v1", kind: "RuntimeClass", metadata: { name: "gvisor" }, handler: "runsc" },
      {
        apiVersion: "storage.k8s.io/v1",
        kind: "CSIDriver",
        metadata: { name: "ebs.csi.aws.com" },
        spec: { tokenRequests: [{ audience: "sts.amazonaws.com" }] },
      },
      {
        apiVersion: "storage.k8s.io/v1",
        kind: "CSINode",
        metadata: { name: "node-1" },
        spec: { drivers: [{ name: "ebs.csi.aws.com", nodeID: "i-1" }] },
      },
      {
        apiVersion: "storage.k8s.io/v1",
        kind: "CSIStorageCapacity",
        metadata: { name: "cap" },
        storageClassName: "fast",
        capacity: "10Gi",
      },
      {
        apiVersion: "storage.k8s.io/v1",
        kind: "VolumeAttachment",
        metadata: { name: "va" },
        spec: { attacher: "ebs.csi.aws.com", nodeName: "node-1", source: { persistentVolumeName: "pv1" } },
      },
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicy",
        metadata: { name: "replicas" },
        spec: {
          paramKind: { apiVersion: "v1", kind: "ConfigMap" },
          // Required by the API server; a resource this test never writes.
          matchConstraints: {
            resourceRules: [
              { apiGroups: ["batch"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["cronjobs"] },
            ],
          },
          validations: [{ expression: "true" }, { expression: "1 < 2" }],
        },
      },
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicyBinding",
        metadata: { name: "replicas" },
        spec: { policyName: "replicas", validationActions: ["Deny"], paramRef: { name: "limits" } },
      },
      {
        apiVersion: "flowcontrol.apiserver.k8s.io/v1",
        kind: "FlowSchema",
        metadata: { name: "probes" },
        spec: { priorityLevelConfiguration: { name: "exempt" }, distinguisherMethod: { type: "ByUser" } },
      },
      {
        apiVersion: "flowcontrol.apiserver.k8s.io/v1",
        kind: "PriorityLevelConfiguration",
        metadata: { name: "batch" },
        spec: { type: "Limited", limited: { limitResponse: { type: "Queue", queuing: {} } } },
      },
    ]);
    await apply([
      {
        apiVersion: "apiregistration.k8s.io/v1",
        kind: "APIService",
        metadata: { name: "v1beta1.metrics.k8s.io" },
        spec: {
          group: "metrics.k8s.io",
          version: "v1beta1",
          service: { namespace: "kube-system", name: "metrics-server" },
          groupPriorityMinimum: 100,
          versionPriority: 100,
        },
      },
    ]);
    const table = async (kind: string) => rows(await ok(["get", kind]));
    const apiServices = await table("apiservices");
    expect(apiServices[0]).toEqual(["NAME", "SERVICE", "AVAILABLE", "AGE"]);
    expect(apiServices[1]?.slice(0, 3)).toEqual(["v1beta1.metrics.k8s.io", "kube-system/metrics-server", "Unknown"]);
    const without = (row: string[] | undefined, index: number) => row?.filter((_, i) => i !== index);

    const templates = await table("podtemplates");
    expect(templates).toEqual([
      ["NAME", "CONTAINERS", "IMAGES", "POD LABELS"],
      ["tpl", "a,b", "busybox:1.36,nginx", "app=x"],
    ]);
    const revisions = await table("controllerrevisions");
    expect(revisions[0]).toEqual(["NAME", "CONTROLLER", "REVISION", "AGE"]);
    expect(revisions[1]?.slice(0, 3)).toEqual(["ds-7f9", "daemonset.apps/ds", "3"]);
    const runtimes = await table("runtimeclasses");
    expect(runtimes[0]).toEqual(["NAME", "HANDLER", "AGE"]);
    expect(runtimes[1]?.slice(0, 2)).toEqual(["gvisor", "runsc"]);
    const drivers = await table("csidrivers");
    expect(drivers[0]).toEqual([
      "NAME",
      "ATTACHREQUIRED",
      "PODINFOONMOUNT",
      "STORAGECAPACITY",
      "TOKENREQUESTS",
      "REQUIRESREPUBLISH",
      "MODES",
      "AGE",
    ]);
    expect(drivers[1]?.slice(0, 7)).toEqual([
      "ebs.csi.aws.com",
      "true",
      "false",
      "false",
      "sts.amazonaws.com",
      "false",
      "Persistent",
    ]);
    const nodes = await table("csinodes");
    expect(nodes[0]).toEqual(["NAME", "DRIVERS", "AGE"]);
    expect(nodes[1]?.slice(0, 2)).toEqual(["node-1", "1"]);
    expect(await table("csistoragecapacities")).toEqual([
      ["NAME", "STORAGECLASSNAME", "CAPACITY"],
      ["cap", "fast", "10Gi"],
    ]);
    const attachments = await table("volumeattachments");
    expect(attachments[0]).toEqual(["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]);
    expect(attachments[1]?.slice(0, 5)).toEqual(["va", "ebs.csi.aws.com", "pv1", "node-1", "false"]);
    const policies = await table("validatingadmissionpolicies");
    expect(policies[0]).toEqual(["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]);
    expect(policies[1]?.slice(0, 3)).toEqual(["replicas", "2", "v1/ConfigMap"]);
    const bindings = await table("validatingadmissionpolicybindings");
    expect(bindings[0]).toEqual(["NAME", "POLICYNAME", "PARAMREF", "AGE"]);
    expect(bindings[1]?.slice(0, 3)).toEqual(["replicas", "replicas", "*/limits"]);
    const flows = await table("flowschemas");
    expect(flows[0]).toEqual([
      "NAME",
      "PRIORITYLEVEL",
      "MATCHINGPRECEDENCE",
      "DISTINGUISHERMETHOD",
      "AGE",
      "MISSINGPL",
    ]);
    expect(without(flows[1], 4)).toEqual(["probes", "exempt", "1000", "ByUser", "?"]);
    const levels = await table("prioritylevelconfigurations");
    expect(levels[0]).toEqual([
      "NAME",
      "TYPE",
      "NOMINALCONCURRENCYSHARES",
      "QUEUES",
      "HANDSIZE",
      "QUEUELENGTHLIMIT",
      "AGE",
    ]);
    expect(levels[1]?.slice(0, 6)).toEqual(["batch", "Limited", "30", "64", "8", "50"]);
  });
});
