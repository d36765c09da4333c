/**
 * The core group's pod-ish kinds validated as kube-apiserver 1.32 validates them, over HTTP against the
 * embedded server: pods (their spec, and what an update may change), pod templates,
 * ReplicationControllers and PersistentVolumeClaims. Each refusal is asserted whole: the 422 Status's
 * message (kube's aggregate, duplicates dropped) and its causes in kube's order.
 */
import { describe, expect, it } from "vitest";
import { fileFixture } from "../../../support/file-fixture.ts";
import { startRawHttpCluster } from "../../support/http.ts";

// No kubelet: pods stay as created (no binding, no status writes).
const t = fileFixture(() => startRawHttpCluster({ kubelet: false }));

const NS = "/api/v1/namespaces/default";
const PODS = `${NS}/pods`;

type Cause = [field: string, reason: string, message: string];

/** The 422 Status kube-apiserver answers for `causes` on `<kind> "<name>"`. */
function invalidStatus(kind: string, name: string, causes: Cause[]): object {
  const messages = [...new Set(causes.map(([field, , message]) => `${field}: ${message}`))];
  const text = messages.length === 1 ? messages[0] : `[${messages.join(", ")}]`;
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `${kind} "${name}" is invalid: ${text}`,
    reason: "Invalid",
    details: { name, kind, causes: causes.map(([field, reason, message]) => ({ reason, message, field })) },
    code: 422,
  };
}

async function expectRefused(method: string, path: string, body: unknown, expected: object): Promise<void> {
  const res = await t.request(method, path, { body });
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body).toEqual(expected);
}

function pod(name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): object {
  return { apiVersion: "v1", kind: "Pod", metadata: { name, ...metadata }, spec };
}

const nginx = { name: "web", image: "nginx:1.27" };
const DNS_LABEL_ERROR = (value: string) =>
  `Invalid value: "${value}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`;
const DNS_SUBDOMAIN_ERROR = (value: string) =>
  `Invalid value: "${value}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
const POD_UPDATE_FORBIDDEN =
  "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

describe("pods: create", () => {
  it("accepts a minimal pod, stored as sent plus the scheme's defaults", async () => {
    const res = await t.request("POST", PODS, {
      body: pod("minimal", { containers: [{ name: "web", image: "nginx" }] }),
    });
    expect(res.status).toBe(201);
    expect(res.body.spec).toEqual({
      containers: [
        {
          name: "web",
          image: "nginx",
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
          resources: {},
          imagePullPolicy: "Always",
        },
      ],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      schedulerName: "default-scheduler",
      securityContext: {},
      enableServiceLinks: true,
      serviceAccountName: "default",
      serviceAccount: "default",
      preemptionPolicy: "PreemptLowerPriority",
      priority: 0,
    });
  });

  it("accepts a pod using most of the spec: volumes and their mounts, env sources, probes, resources, sidecars", async () => {
    const spec = {
      volumes: [
        { name: "config", configMap: { name: "app-config", items: [{ key: "app.yaml", path: "conf/app.yaml" }] } },
        {
          name: "token",
          projected: { sources: [{ serviceAccountToken: { path: "token", expirationSeconds: 3600 } }] },
        },
        { name: "data", persistentVolumeClaim: { claimName: "data" } },
        { name: "scratch", emptyDir: { sizeLimit: "1Gi" } },
        { name: "info", downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } },
      ],
      initContainers: [
        { name: "migrate", image: "busybox", command: ["sh", "-c", "true"] },
        {
          name: "proxy",
          image: "envoy",
          restartPolicy: "Always",
          readinessProbe: { tcpSocket: { port: 9901 } },
        },
      ],
      containers: [
        {
          name: "app",
          image: "registry.example.com/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
          ports: [
            { name: "http", containerPort: 8080 },
            { name: "metrics", containerPort: 9090, protocol: "TCP" },
          ],
          env: [
            { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
            { name: "CPU_LIMIT", valueFrom: { resourceFieldRef: { resource: "limits.cpu", divisor: "1m" } } },
            { name: "PASSWORD", valueFrom: { secretKeyRef: { name: "creds", key: "password" } } },
            { name: "my.dotted-name", value: "relaxed names are accepted" },
          ],
          envFrom: [{ prefix: "CFG_", configMapRef: { name: "app-config" } }],
          volumeMounts: [
            { name: "config", mountPath: "/etc/app", readOnly: true },
            { name: "token", mountPath: "/var/run/token" },
            { name: "data", mountPath: "/data", subPath: "app" },
            { name: "scratch", mountPath: "/tmp" },
            { name: "info", mountPath: "/etc/info" },
          ],
          resources: { requests: { cpu: "250m", memory: "64Mi" }, limits: { cpu: "1", memory: "128Mi" } },
          livenessProbe: { httpGet: { path: "/healthz", port: "http" }, periodSeconds: 5 },
          readinessProbe: { grpc: { port: 9090 } },
          startupProbe: { exec: { command: ["cat", "/tmp/ready"] }, failureThreshold: 30 },
          lifecycle: { preStop: { sleep: { seconds: 5 } } },
          securityContext: { runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false },
        },
      ],
      securityContext: { fsGroup: 2000, seccompProfile: { type: "RuntimeDefault" } },
      tolerations: [{ key: "dedicated", operator: "Equal", value: "app", effect: "NoSchedule" }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: "kubernetes.io/os", operator: "In", values: ["linux"] }] }],
          },
        },
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              podAffinityTerm: {
                labelSelector: { matchLabels: { app: "web" } },
                topologyKey: "kubernetes.io/hostname",
              },
            },
          ],
        },
      },
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: "topology.kubernetes.io/zone",
          whenUnsatisfiable: "ScheduleAnyway",
          labelSelector: { matchLabels: { app: "web" } },
        },
      ],
      hostname: "web-0",
      subdomain: "web",
      activeDeadlineSeconds: 3600,
      nodeSelector: { "kubernetes.io/os": "linux" },
    };
    const res = await t.request("POST", PODS, { body: pod("full", spec) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it("refuses a pod without containers", async () => {
    await expectRefused(
      "POST",
      PODS,
      pod("no-containers", {}),
      invalidStatus("Pod", "no-containers", [["spec.containers", "FieldValueRequired", "Required value"]]),
    );
  });

  it("refuses container names that are not DNS labels or repeat, and containers without an image", async () => {
    await expectRefused(
      "POST",
      PODS,
      pod("names", {
        containers: [{ name: "Web_1", image: "nginx" }, { name: "side" }, { name: "side", image: "busybox" }],
      }),
      invalidStatus("Pod", "names", [
        ["spec.containers[0].name", "FieldValueInvalid", DNS_LABEL_ERROR("Web_1")],
        ["spec.containers[1].image", "FieldValueRequired", "Required value"],
        ["spec.containers[2].name", "FieldValueDuplicate", 'Duplicate value: "side"'],
      ]),
    );
  });

  it("refuses init containers that reuse a container's name, hooks or probes on a non-sidecar, a bad restartPolicy", async () => {
    await expectRefused(
      "POST",
      PODS,
      pod("init", {
        initContainers: [
          { name: "web", image: "busybox", readinessProbe: { exec: { command: ["true"] } } },
          { name: "sidecar", image: "envoy", restartPolicy: "OnFailure" },
        ],
        containers: [{ ...nginx, restartPolicy: "Always" }],
      }),
      invalidStatus("Pod", "init", [
        [
          "spec.containers[0].restartPolicy",
          "FieldValueForbidden",
          "Forbidden: may not be set for non-init containers",
        ],
        ["spec.initContainers[0].name", "FieldValueDuplicate", 'Duplicate value: "web"'],
        [
          "spec.initContainers[0].readinessProbe",
          "FieldValueForbidden",
          "Forbidden: may not be set for init containers without restartPolicy=Always",
        ],
        [
          "spec.initContainers[1].restartPolicy",
          "FieldValueNotSupported",
          'Unsupported value: "OnFailure": supported values: "Always"',
        ],
      ]),
    );
  });

  it("refuses port numbers out of range, port names that are no IANA service names or repeat, unknown protocols", async () => {
    await expectRefused(
      "POST",
      PODS,
      pod("ports", {
        containers: [
          {
            ...nginx,
            ports: [
              { containerPort: 80, name: "http" },
              { containerPort: 70000, name: "http" },
              { containerPort: 8080, name: "metrics-port-too-long", protocol: "HTTP" },
            ],
          },
        ],
      }),
      invalidStatus("Pod", "ports", [
        ["spec.containers[0].ports[1].name", "FieldValueDuplicate", 'Duplicate value: "http"'],
        [
          "spec.containers[0].ports[1].containerPort",
          "FieldValueInvalid",
          "Invalid value: 70000: must be between 1 and 65535, inclusive",
        ],
        [
          "spec.containers[0].ports[2].name",
          "FieldValueInvalid",
          'Invalid value: "metrics-port-too-long": must be no more than 15 characters',
        ],
        [
          "spec.containers[0].ports[2].protocol",
          "FieldValueNotSupported",
          'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        ],
      ]),
    );
  });

  it("refuses environment variable names with '=', and value sources that are missing, doubled or incomplete", async () => {
    await expectRefused(
      "POST",
      PODS,
      pod("env", {
        containers: [
          {
            ...nginx,
            env: [
              { name: "A=B", value: "x" },
              { name: "BOTH", value: "v", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
              {
                name: "TWO",
                valueFrom: { configMapKeyRef: { name: "cm", key: "k" }, secretKeyRef: { name: "s", key: "k" } },
              },
              { name: "NONE", valueFrom: {} },
              { name: "KEYLESS", valueFrom: { secretKeyRef: { name: "s" } } },
              { name: "PHASE", valueFrom: { fieldRef: { fieldPath: "status.phase" } } },
            ],
          },
        ],
      }),
      invalidStatus("Pod", "env", [
        [
          "spec.containers[0].env[0].name",
          "FieldValueInvalid",
          `Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`,
        ],
        [
          "spec.containers[0].env[1].valueFrom",
          "FieldValueInvalid",
          'Invalid value: "": may not be specified when `value` is not empty',
        ],
        [
          "spec.containers[0].env[2].valueFrom",
          "FieldValueInvalid",
          'Invalid value: "": may not have more than one field specified at a time',
        ],
        [
          "spec.containers[0].env[3].valueFrom",
          "FieldValueInvalid",
          'Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
        ],
        ["spec.containers[0].env[4].valueFrom.secretKeyRef.key", "FieldValueRequired", "Required value"],
        [
          "spec.containers[0].env[5].valueFrom.fieldRef.fieldPath",
          "FieldValueNotSupported",
          'Unsupported value: "status.phase": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"',
        ],
      ]),
    );
  });

  it("refuses duplicate volumes, two sources, bad names and paths, and mounts of volumes that are not (validly) there", async () => {
    await expectRefused(
      "POST",
      PODS,
      pod("volumes", {
        volumes: [
          { name: "config", configMap: { name: "cm" } },
          { name: "config", emptyDir: {} },
          {
            name: "files",
            configMap: {
              name: "cm",
              items: [
                { key: "a", path: "/etc/a" },
                { key: "b", path: "../b" },
              ],
            },
          },
          { name: "both", configMap: { name: "x" }, secret: { secretName: "y" } },
          { name: "Data", emptyDir: {} },
          { name: "claim", persistentVolumeClaim: {} },
        ],
        containers: [
          {
            ...nginx,
            volumeMounts: [
              { name: "config", mountPath: "/cfg" },
              { name: "files", mountPath: "/cfg" },
              { name: "config", mountPath: "/other", subPath: "../up" },
            ],
          },
        ],
      }),
      invalidStatus("Pod", "volumes", [
        ["spec.volumes[1].name", "FieldValueDuplicate", 'Duplicate value: "config"'],
        [
          "spec.volumes[2].configMap.items[0].path",
          "FieldValueInvalid",
          'Invalid value: "/etc/a": must be a relative path',
        ],
        [
          "spec.volumes[2].configMap.items[1].path",
          "FieldValueInvalid",
          `Invalid value: "../b": must not contain '..'`,
        ],
        // secret comes before configMap in validateVolumeSource: the second source found is the configMap.
        ["spec.volumes[3].configMap", "FieldValueForbidden", "Forbidden: may not specify more than 1 volume type"],
        ["spec.volumes[4].name", "FieldValueInvalid", DNS_LABEL_ERROR("Data")],
        ["spec.volumes[5].persistentVolumeClaim.claimName", "FieldValueRequired", "Required value"],
        ["spec.containers[0].volumeMounts[1].name", "FieldValueNotFound", 'Not found: "files"'],
        ["spec.containers[0].volumeMounts[1].mountPath", "FieldValueInvalid", 'Invalid value: "/cfg": must be unique'],
        // kube-apiserver reports sub-path problems on the list's path, without the mount's index.
        [
          "spec.containers[0].volumeMounts.subPath",
          "FieldValueInvalid",
          `Invalid value: "../up": must not contain '..'`,
        ],
      ]),
    );
  });

  it("refuses probes without a handler or with two, negative timings, a liveness probe succeeding twice, a long sleep hook", async () => {
    await expectRefused(
      "POST",
      PODS,
      pod("probes", {
        containers: [
          {
            ...nginx,
            livenessProbe: { successThreshold: 2, periodSeconds: -5 },
            readinessProbe: { httpGet: { port: "Web" }, tcpSocket: { port: 8080 } },
            startupProbe: { exec: { command: [] } },
            lifecycle: { preStop: { sleep: { seconds: 60 } } },
          },
        ],
      }),
      invalidStatus("Pod", "probes", [
        [
          "spec.containers[0].lifecycle.preStop.sleep",
          "FieldValueInvalid",
          "Invalid value: 60: must be greater than 0 and less than terminationGracePeriodSeconds (30). Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.",
        ],
        ["spec.containers[0].livenessProbe", "FieldValueRequired", "Required value: must specify a handler type"],
        [
          "spec.containers[0].livenessProbe.periodSeconds",
          "FieldValueInvalid",
          "Invalid value: -5: must be greater than or equal to 0",
        ],
        ["spec.containers[0].livenessProbe.successThreshold", "FieldValueInvalid", "Invalid value: 2: must be 1"],
        [
          "spec.containers[0].readinessProbe.httpGet.port",
          "FieldValueInvalid",
          'Invalid value: "Web": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
        ],
        [
          "spec.containers[0].readinessProbe.tcpSocket",
          "FieldValueForbidden",
          "Forbidden: may not specify more than 1 handler type",
        ],
        ["spec.containers[0].startupProbe.exec.command", "FieldValueRequired", "Required value"],
      ]),
    );
  });

  it("refuses requests above limits (quantities printed canonically), unknown resource names, fractional extended resources", async () => {
    await expectRefused(
      "POST",
      PODS,
      pod("resources", {
        containers: [
          {
            ...nginx,
            resources: { requests: { cpu: "1.5", memory: "1Gi" }, limits: { cpu: "500m", memory: "0.5Gi" } },
          },
          // A pod's requests default to its limits: each limit below is checked twice.
          { name: "gpu", image: "cuda", resources: { limits: { "example.com/gpu": "500m", cpus: "1" } } },
        ],
      }),
      invalidStatus("Pod", "resources", [
        [
          "spec.containers[0].resources.requests",
          "FieldValueInvalid",
          'Invalid value: "1500m": must be less than or equal to cpu limit of 500m',
        ],
        [
          "spec.containers[0].resources.requests",
          "FieldValueInvalid",
          'Invalid value: "1Gi": must be less than or equal to memory limit of 512Mi',
        ],
        [
          "spec.containers[1].resources.limits[example.com/gpu]",
          "FieldValueInvalid",
          'Invalid value: resource.Quantity{i:resource.int64Amount{value:500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"500m", Format:"DecimalSI"}: must be an integer',
        ],
        [
          "spec.containers[1].resources.limits[cpus]",
          "FieldValueInvalid",
          'Invalid value: "cpus": must be a standard resource type or fully qualified',
        ],
        [
          "spec.containers[1].resources.limits[cpus]",
          "FieldValueInvalid",
          'Invalid value: "cpus": must be a standard resource for containers',
        ],
        [
          "spec.containers[1].resources.requests[example.com/gpu]",
          "FieldValueInvalid",
          'Invalid value: resource.Quantity{i:resource.int64Amount{value:500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"500m", Format:"DecimalSI"}: must be an integer',
        ],
        [
          "spec.containers[1].resources.requests[cpus]",
          "FieldValueInvalid",
          'Invalid value: "cpus": must be a standard resource type or fully qualified',
        ],
        [
          "spec.containers[1].resources.requests[cpus]",
          "FieldValueInvalid",
          'Invalid value: "cpus": must be a standard resource for containers',
        ],
      ]),
    );
  });

  it("refuses negative quantities, printed as Quantity.String() prints them", async () => {
    await expectRefused(
      "POST",
      PODS,
      pod("negative", { containers: [{ ...nginx, resources: { requests: { memory: "-0.5Gi" } } }] }),
      invalidStatus("Pod", "negative", [
        [
          "spec.containers[0].resources.requests[memory]",
          "FieldValueInvalid",
          'Invalid value: "-512Mi": must be greater than or equal to 0',
        ],
      ]),
    );
  });

  it("refuses unknown restart and DNS policies, bad label keys, host names and ids, a zero deadline, bad tolerations", async () => {
    await expectRefused(
      "POST",
      PODS,
      pod("pod-fields", {
        containers: [nginx],
        restartPolicy: "Sometimes",
        dnsPolicy: "Cluster",
        nodeSelector: { "disk type": "ssd" },
        securityContext: { runAsUser: -1 },
        activeDeadlineSeconds: 0,
        hostname: "My_Host",
        tolerations: [
          { key: "k", operator: "Exists", value: "v" },
          { operator: "Equal", value: "x" },
        ],
      }),
      invalidStatus("Pod", "pod-fields", [
        [
          "spec.restartPolicy",
          "FieldValueNotSupported",
          'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
        ],
        [
          "spec.dnsPolicy",
          "FieldValueNotSupported",
          'Unsupported value: "Cluster": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
        ],
        [
          "spec.nodeSelector",
          "FieldValueInvalid",
          `Invalid value: "disk type": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
        ],
        [
          "spec.securityContext.runAsUser",
          "FieldValueInvalid",
          "Invalid value: -1: must be between 0 and 2147483647, inclusive",
        ],
        [
          "spec.activeDeadlineSeconds",
          "FieldValueInvalid",
          "Invalid value: 0: must be between 1 and 2147483647, inclusive",
        ],
        ["spec.hostname", "FieldValueInvalid", DNS_LABEL_ERROR("My_Host")],
        [
          "spec.tolerations[0].operator",
          "FieldValueInvalid",
          `Invalid value: "v": value must be empty when \`operator\` is 'Exists'`,
        ],
        [
          "spec.tolerations[1].operator",
          "FieldValueInvalid",
          'Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ],
      ]),
    );
  });

  it("refuses a host port other than the container port on the host's network, and an affinity term without topology key", async () => {
    const qualifiedNameError =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const term = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey";
    await expectRefused(
      "POST",
      PODS,
      pod("host-network", {
        hostNetwork: true,
        containers: [{ ...nginx, ports: [{ containerPort: 8080, hostPort: 8081 }] }],
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: "web" } } }],
          },
        },
      }),
      invalidStatus("Pod", "host-network", [
        [
          "spec.containers[0].ports[0].hostPort",
          "FieldValueInvalid",
          "Invalid value: 8081: must match `containerPort` when `hostNetwork` is true",
        ],
        [term, "FieldValueRequired", "Required value: can not be empty"],
        [term, "FieldValueInvalid", 'Invalid value: "": name part must be non-empty'],
        [term, "FieldValueInvalid", `Invalid value: "": ${qualifiedNameError}`],
      ]),
    );
  });

  it("refuses downward API files without a source (reported on the volume source, not the item)", async () => {
    await expectRefused(
      "POST",
      PODS,
      pod("downward", {
        volumes: [{ name: "info", downwardAPI: { items: [{ path: "labels" }] } }],
        containers: [nginx],
      }),
      invalidStatus("Pod", "downward", [
        [
          "spec.volumes[0].downwardAPI",
          "FieldValueRequired",
          "Required value: one of fieldRef and resourceFieldRef is required",
        ],
      ]),
    );
  });

  it("refuses ephemeral containers on create", async () => {
    await expectRefused(
      "POST",
      PODS,
      pod("ephemeral", {
        containers: [nginx],
        ephemeralContainers: [{ name: "debug", image: "busybox", targetContainerName: "web" }],
      }),
      invalidStatus("Pod", "ephemeral", [
        ["spec.ephemeralContainers", "FieldValueForbidden", "Forbidden: cannot be set on create"],
      ]),
    );
  });
});

describe("pods: update", () => {
  async function created(name: string, spec: Record<string, unknown>): Promise<Record<string, unknown>> {
    const res = await t.request("POST", PODS, { body: pod(name, spec) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  }

  it("lets an update change images and labels, and nothing else of the spec", async () => {
    const stored = await created("upd-image", { containers: [nginx] });
    const next = structuredClone(stored) as {
      metadata: { labels?: object };
      spec: { containers: { image: string }[] };
    };
    next.spec.containers[0]!.image = "nginx:1.28";
    next.metadata.labels = { tier: "web" };
    const res = await t.request("PUT", `${PODS}/upd-image`, { body: next });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.spec.containers[0].image).toBe("nginx:1.28");
  });

  it("refuses any other spec change with kube's message and a diff of the change", async () => {
    const stored = await created("upd-env", { containers: [nginx] });
    const next = structuredClone(stored) as { spec: { containers: Record<string, unknown>[] } };
    next.spec.containers[0]!["env"] = [{ name: "A", value: "b" }];
    const diff = [
      "  core.PodSpec{",
      "  \tContainers: []{",
      "  \t\t{",
      "  \t\t\t... // 6 identical fields",
      "- \t\t\tEnv: nil,",
      '+ \t\t\tEnv: [{"name":"A","value":"b"}],',
      "  \t\t},",
      "  \t},",
      "  \t... // 12 identical fields",
      "  }",
      "",
    ].join("\n");
    await expectRefused(
      "PUT",
      `${PODS}/upd-env`,
      next,
      invalidStatus("Pod", "upd-env", [["spec", "FieldValueForbidden", `${POD_UPDATE_FORBIDDEN}\n${diff}`]]),
    );
  });

  it("refuses adding or removing containers", async () => {
    const stored = await created("upd-count", { containers: [nginx] });
    const next = structuredClone(stored) as { spec: { containers: object[] } };
    next.spec.containers.push({ name: "side", image: "busybox" });
    await expectRefused(
      "PUT",
      `${PODS}/upd-count`,
      next,
      invalidStatus("Pod", "upd-count", [
        ["spec.containers", "FieldValueForbidden", "Forbidden: pod updates may not add or remove containers"],
      ]),
    );
  });

  it("lets activeDeadlineSeconds go down but not up", async () => {
    const stored = await created("upd-deadline", { containers: [nginx], activeDeadlineSeconds: 30 });
    const up = structuredClone(stored) as { spec: { activeDeadlineSeconds: number } };
    up.spec.activeDeadlineSeconds = 60;
    await expectRefused(
      "PUT",
      `${PODS}/upd-deadline`,
      up,
      invalidStatus("Pod", "upd-deadline", [
        [
          "spec.activeDeadlineSeconds",
          "FieldValueInvalid",
          "Invalid value: 60: must be less than or equal to previous value",
        ],
      ]),
    );
    const down = structuredClone(stored) as { spec: { activeDeadlineSeconds: number } };
    down.spec.activeDeadlineSeconds = 10;
    expect((await t.request("PUT", `${PODS}/upd-deadline`, { body: down })).status).toBe(200);
  });

  it("lets tolerations be added but not removed", async () => {
    const toleration = { key: "dedicated", operator: "Exists", effect: "NoSchedule" };
    const stored = await created("upd-tolerations", { containers: [nginx], tolerations: [toleration] });
    const removed = structuredClone(stored) as { spec: { tolerations: object[] } };
    removed.spec.tolerations = [];
    await expectRefused(
      "PUT",
      `${PODS}/upd-tolerations`,
      removed,
      invalidStatus("Pod", "upd-tolerations", [
        [
          "spec.tolerations",
          "FieldValueForbidden",
          "Forbidden: existing toleration can not be modified except its tolerationSeconds",
        ],
      ]),
    );
    const added = structuredClone(stored) as { spec: { tolerations: object[] } };
    added.spec.tolerations.push({ key: "gpu", operator: "Exists" });
    expect((await t.request("PUT", `${PODS}/upd-tolerations`, { body: added })).status).toBe(200);
  });

  it("lets a merge patch of labels through, and refuses one that changes the restart policy", async () => {
    await created("upd-patch", { containers: [nginx] });
    const labels = await t.request("PATCH", `${PODS}/upd-patch`, {
      body: { metadata: { labels: { a: "b" } } },
      contentType: "application/merge-patch+json",
    });
    expect(labels.status).toBe(200);
    const res = await t.request("PATCH", `${PODS}/upd-patch`, {
      body: { spec: { restartPolicy: "Never" } },
      contentType: "application/merge-patch+json",
    });
    expect(res.status).toBe(422);
    expect(res.body.details.causes).toEqual([
      {
        reason: "FieldValueForbidden",
        message: `${POD_UPDATE_FORBIDDEN}\n  core.PodSpec{\n  \t... // 1 identical fields\n- \tRestartPolicy: "Always",\n+ \tRestartPolicy: "Never",\n  \t... // 11 identical fields\n  }\n`,
        field: "spec",
      },
    ]);
  });
});

const TEMPLATES = `${NS}/podtemplates`;

describe("podtemplates", () => {
  it("accepts a template and stores its spec with the pod spec's defaults", async () => {
    const res = await t.request("POST", TEMPLATES, {
      body: {
        metadata: { name: "tpl" },
        template: { metadata: { labels: { app: "web" } }, spec: { containers: [nginx] } },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.template.spec).toMatchObject({ restartPolicy: "Always", dnsPolicy: "ClusterFirst" });
  });

  it("reports the template's label errors under template.labels, and its spec's under template.spec", async () => {
    await expectRefused(
      "POST",
      TEMPLATES,
      { metadata: { name: "bad-tpl" }, template: { metadata: { labels: { app: "-web-" } }, spec: {} } },
      invalidStatus("PodTemplate", "bad-tpl", [
        [
          "template.labels",
          "FieldValueInvalid",
          `Invalid value: "-web-": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
        ],
        ["template.spec.containers", "FieldValueRequired", "Required value"],
      ]),
    );
  });

  it("refuses a service account name that is no DNS subdomain (in a pod, the ServiceAccount admission refuses it first)", async () => {
    await expectRefused(
      "POST",
      TEMPLATES,
      { metadata: { name: "bad-sa" }, template: { spec: { containers: [nginx], serviceAccountName: "Bad_SA" } } },
      invalidStatus("PodTemplate", "bad-sa", [
        ["template.spec.serviceAccountName", "FieldValueInvalid", DNS_SUBDOMAIN_ERROR("Bad_SA")],
      ]),
    );
  });

  it("checks a template without a spec as Go does: a defaulted empty spec, without containers", async () => {
    await expectRefused(
      "POST",
      TEMPLATES,
      { metadata: { name: "no-spec" }, template: { metadata: { labels: { app: "web" } } } },
      invalidStatus("PodTemplate", "no-spec", [["template.spec.containers", "FieldValueRequired", "Required value"]]),
    );
  });
});

const RCS = `${NS}/replicationcontrollers`;

function rc(name: string, spec: Record<string, unknown>): object {
  return { metadata: { name }, spec };
}

describe("replicationcontrollers", () => {
  it("accepts a controller whose selector defaults from its template's labels", async () => {
    const res = await t.request("POST", RCS, {
      body: rc("web", { template: { metadata: { labels: { app: "web" } }, spec: { containers: [nginx] } } }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.spec.selector).toEqual({ app: "web" });
    expect(res.body.spec.replicas).toBe(1);
  });

  it("refuses a selector that does not select the template's labels", async () => {
    await expectRefused(
      "POST",
      RCS,
      rc("mismatch", {
        selector: { app: "x" },
        template: { metadata: { labels: { app: "y" } }, spec: { containers: [nginx] } },
      }),
      invalidStatus("ReplicationController", "mismatch", [
        [
          "spec.template.metadata.labels",
          "FieldValueInvalid",
          'Invalid value: map[string]string{"app":"y"}: `selector` does not match template `labels`',
        ],
      ]),
    );
  });

  it("refuses negative replicas, a restartPolicy other than Always, an active deadline", async () => {
    await expectRefused(
      "POST",
      RCS,
      rc("policies", {
        replicas: -1,
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [nginx], restartPolicy: "Never", activeDeadlineSeconds: 60 },
        },
      }),
      invalidStatus("ReplicationController", "policies", [
        ["spec.replicas", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"],
        [
          "spec.template.spec.restartPolicy",
          "FieldValueNotSupported",
          'Unsupported value: "Never": supported values: "Always"',
        ],
        [
          "spec.template.spec.activeDeadlineSeconds",
          "FieldValueForbidden",
          "Forbidden: activeDeadlineSeconds in ReplicationController is not Supported",
        ],
      ]),
    );
  });

  it("refuses a controller without selector or template", async () => {
    await expectRefused(
      "POST",
      RCS,
      rc("empty", {}),
      invalidStatus("ReplicationController", "empty", [
        ["spec.selector", "FieldValueRequired", "Required value"],
        ["spec.template", "FieldValueRequired", "Required value"],
      ]),
    );
  });

  it("reports an update's spec errors twice, as the strategy and ValidateReplicationControllerUpdate both check", async () => {
    const res = await t.request("POST", RCS, {
      body: rc("scaled", { template: { metadata: { labels: { app: "web" } }, spec: { containers: [nginx] } } }),
    });
    expect(res.status).toBe(201);
    const next = structuredClone(res.body) as { spec: { replicas: number } };
    next.spec.replicas = -2;
    const cause: Cause = [
      "spec.replicas",
      "FieldValueInvalid",
      "Invalid value: -2: must be greater than or equal to 0",
    ];
    await expectRefused("PUT", `${RCS}/scaled`, next, invalidStatus("ReplicationController", "scaled", [cause, cause]));
  });
});

const PVCS = `${NS}/persistentvolumeclaims`;

function claim(name: string, spec: Record<string, unknown>): object {
  return { metadata: { name }, spec };
}

const storage = (size: string) => ({ requests: { storage: size } });
const PVC_IMMUTABLE =
  "Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims";

describe("persistentvolumeclaims", () => {
  it("accepts a claim, stored with its volume mode and a Pending phase", async () => {
    const res = await t.request("POST", PVCS, {
      body: claim("data", { accessModes: ["ReadWriteOnce"], resources: storage("1Gi"), storageClassName: "standard" }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.spec).toEqual({
      accessModes: ["ReadWriteOnce"],
      resources: storage("1Gi"),
      storageClassName: "standard",
      volumeMode: "Filesystem",
    });
    expect(res.body.status).toEqual({ phase: "Pending" });
  });

  it("refuses a claim without access modes or a storage request (Go keys the latter on resources)", async () => {
    await expectRefused(
      "POST",
      PVCS,
      claim("empty", {}),
      invalidStatus("PersistentVolumeClaim", "empty", [
        ["spec.accessModes", "FieldValueRequired", "Required value: at least 1 access mode is required"],
        ["spec.resources[storage]", "FieldValueRequired", "Required value"],
      ]),
    );
  });

  it("refuses unknown access modes, ReadWriteOncePod with another mode, a zero storage request", async () => {
    await expectRefused(
      "POST",
      PVCS,
      claim("modes", {
        accessModes: ["ReadWriteOncePod", "ReadWriteOnce", "ReadWriteSometimes"],
        resources: storage("0"),
      }),
      invalidStatus("PersistentVolumeClaim", "modes", [
        [
          "spec.accessModes",
          "FieldValueNotSupported",
          'Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
        ],
        ["spec.accessModes", "FieldValueForbidden", "Forbidden: may not use ReadWriteOncePod with other access modes"],
        ["spec.resources[storage]", "FieldValueInvalid", 'Invalid value: "0": must be greater than zero'],
      ]),
    );
  });

  it("refuses a spec change of an unbound claim, its storage request included", async () => {
    const res = await t.request("POST", PVCS, {
      body: claim("pending", { accessModes: ["ReadWriteOnce"], resources: storage("1Gi") }),
    });
    expect(res.status).toBe(201);
    const next = structuredClone(res.body) as { spec: { resources: object } };
    next.spec.resources = storage("2Gi");
    const diff = [
      "  core.PersistentVolumeClaimSpec{",
      "  \t... // 1 identical fields",
      "  \tResources: {",
      "  \t\tRequests: {",
      '- \t\t\tStorage: "1Gi",',
      '+ \t\t\tStorage: "2Gi",',
      "  \t\t},",
      "  \t},",
      "  \t... // 2 identical fields",
      "  }",
      "",
    ].join("\n");
    await expectRefused(
      "PUT",
      `${PVCS}/pending`,
      next,
      invalidStatus("PersistentVolumeClaim", "pending", [["spec", "FieldValueForbidden", `${PVC_IMMUTABLE}\n${diff}`]]),
    );
  });

  it("lets a claim be bound to a volume once, then keeps its volumeName", async () => {
    const res = await t.request("POST", PVCS, {
      body: claim("binding", { accessModes: ["ReadWriteOnce"], resources: storage("1Gi") }),
    });
    const bound = structuredClone(res.body) as { spec: { volumeName: string } };
    bound.spec.volumeName = "pv-1";
    const first = await t.request("PUT", `${PVCS}/binding`, { body: bound });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const rebound = structuredClone(first.body) as { spec: { volumeName: string } };
    rebound.spec.volumeName = "pv-2";
    const second = await t.request("PUT", `${PVCS}/binding`, { body: rebound });
    expect(second.status).toBe(422);
    expect(second.body.details.causes).toEqual([
      {
        reason: "FieldValueForbidden",
        message: `${PVC_IMMUTABLE}\n  core.PersistentVolumeClaimSpec{\n  \t... // 3 identical fields\n- \tVolumeName: "pv-1",\n+ \tVolumeName: "pv-2",\n  }\n`,
        field: "spec",
      },
    ]);
  });

  it("lets a bound claim grow its storage request, and shrink it back but not to its capacity", async () => {
    const res = await t.request("POST", PVCS, {
      body: claim("bound", { accessModes: ["ReadWriteOnce"], resources: storage("1Gi") }),
    });
    const status = structuredClone(res.body) as { status: object };
    status.status = { phase: "Bound", accessModes: ["ReadWriteOnce"], capacity: { storage: "1Gi" } };
    const bound = await t.request("PUT", `${PVCS}/bound/status`, { body: status });
    expect(bound.status, JSON.stringify(bound.body)).toBe(200);
    const grown = structuredClone(bound.body) as { spec: { resources: object } };
    grown.spec.resources = storage("2Gi");
    const growth = await t.request("PUT", `${PVCS}/bound`, { body: grown });
    expect(growth.status, JSON.stringify(growth.body)).toBe(200);
    const shrunk = structuredClone(growth.body) as { spec: { resources: object } };
    shrunk.spec.resources = storage("1024Mi");
    await expectRefused(
      "PUT",
      `${PVCS}/bound`,
      shrunk,
      invalidStatus("PersistentVolumeClaim", "bound", [
        [
          "spec.resources.requests.storage",
          "FieldValueForbidden",
          "Forbidden: field can not be less than status.capacity",
        ],
      ]),
    );
  });

  it("reports an update's spec errors twice, as the strategy and ValidatePersistentVolumeClaimUpdate both check", async () => {
    const res = await t.request("POST", PVCS, {
      body: claim("twice", { accessModes: ["ReadWriteOnce"], resources: storage("1Gi") }),
    });
    // A claim without a class may be given one (retroactive default class): only the name is wrong.
    const next = structuredClone(res.body) as { spec: { storageClassName: string } };
    next.spec.storageClassName = "Fast_SSD";
    const cause: Cause = ["spec.storageClassName", "FieldValueInvalid", DNS_SUBDOMAIN_ERROR("Fast_SSD")];
    await expectRefused("PUT", `${PVCS}/twice`, next, invalidStatus("PersistentVolumeClaim", "twice", [cause, cause]));
  });

  it("refuses a change of the storage class once the claim has one", async () => {
    const res = await t.request("POST", PVCS, {
      body: claim("classed", {
        accessModes: ["ReadWriteOnce"],
        resources: storage("1Gi"),
        storageClassName: "standard",
      }),
    });
    const next = structuredClone(res.body) as { spec: { storageClassName: string } };
    next.spec.storageClassName = "fast";
    const diff =
      '  core.PersistentVolumeClaimSpec{\n  \t... // 2 identical fields\n- \tStorageClassName: "standard",\n+ \tStorageClassName: "fast",\n  \t... // 2 identical fields\n  }\n';
    await expectRefused(
      "PUT",
      `${PVCS}/classed`,
      next,
      invalidStatus("PersistentVolumeClaim", "classed", [["spec", "FieldValueForbidden", `${PVC_IMMUTABLE}\n${diff}`]]),
    );
  });
});
