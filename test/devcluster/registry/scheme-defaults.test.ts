/**
 * The scheme's defaults of built-in kinds, checked against k8s.io/kubernetes pkg/apis/core/v1/defaults.go
 * (SetDefaults_Container, SetDefaults_Pod, SetDefaults_Service).
 */
import { describe, expect, it } from "vitest";
import {
  defaultJob,
  defaultPod,
  defaultPodSpec,
  defaultReplicationController,
  defaultService,
} from "../../../packages/capstan-dev/src/devcluster/registry/scheme-defaults.ts";

type Obj = Record<string, unknown>;

function pullPolicy(image: string | undefined): unknown {
  const spec: Obj = { containers: [image === undefined ? { name: "c" } : { name: "c", image }] };
  defaultPodSpec(spec);
  return (spec["containers"] as Obj[])[0]!["imagePullPolicy"];
}

function service(spec: Obj, status?: Obj): Obj {
  const svc: Obj = { spec, ...(status ? { status } : {}) };
  defaultService(svc);
  return svc;
}

describe("SetDefaults_Container: the pull policy from parsers.ParseImageName's tag", () => {
  it("is Always for the tag latest, given or implied by an image with neither tag nor digest", () => {
    expect(pullPolicy("nginx")).toBe("Always");
    expect(pullPolicy("nginx:latest")).toBe("Always");
    expect(pullPolicy("registry:5000/team/app")).toBe("Always");
    expect(pullPolicy("nginx:latest@sha256:0123")).toBe("Always");
  });

  it("is IfNotPresent for another tag, a digest alone, and an image that does not parse (none given)", () => {
    expect(pullPolicy("nginx:1.27")).toBe("IfNotPresent");
    expect(pullPolicy("registry:5000/team/app:v2")).toBe("IfNotPresent");
    expect(pullPolicy("nginx@sha256:0123")).toBe("IfNotPresent");
    expect(pullPolicy(undefined)).toBe("IfNotPresent");
  });

  it("fills string fields Go sees as unset when they are empty, and keeps set ones", () => {
    const spec: Obj = { restartPolicy: "", containers: [{ name: "c", image: "a:1", imagePullPolicy: "" }] };
    defaultPodSpec(spec);
    expect(spec["restartPolicy"]).toBe("Always");
    expect((spec["containers"] as Obj[])[0]!["imagePullPolicy"]).toBe("IfNotPresent");
    const kept: Obj = { containers: [{ name: "c", image: "a", imagePullPolicy: "Never" }] };
    defaultPodSpec(kept);
    expect((kept["containers"] as Obj[])[0]!["imagePullPolicy"]).toBe("Never");
  });
});

describe("SetDefaults_Pod", () => {
  it("defaults a container's requests to its limits, keeping the requests it gives", () => {
    const pod: Obj = {
      spec: {
        containers: [
          { name: "a", image: "x:1", resources: { limits: { cpu: "1", memory: "1Gi" }, requests: { cpu: "500m" } } },
        ],
        initContainers: [{ name: "i", image: "x:1", resources: { limits: { memory: "64Mi" } } }],
      },
    };
    defaultPod(pod);
    const spec = pod["spec"] as { containers: Obj[]; initContainers: Obj[] };
    expect(spec.containers[0]!["resources"]).toEqual({
      limits: { cpu: "1", memory: "1Gi" },
      requests: { cpu: "500m", memory: "1Gi" },
    });
    expect(spec.initContainers[0]!["resources"]).toEqual({ limits: { memory: "64Mi" }, requests: { memory: "64Mi" } });
  });

  it("gives a pod on the host network host ports equal to its container ports", () => {
    const pod: Obj = {
      spec: { hostNetwork: true, containers: [{ name: "a", image: "x:1", ports: [{ containerPort: 8080 }] }] },
    };
    defaultPod(pod);
    expect((pod["spec"] as { containers: Obj[] }).containers[0]!["ports"]).toEqual([
      { containerPort: 8080, hostPort: 8080, protocol: "TCP" },
    ]);
  });

  it("leaves pod templates' resources alone (SetDefaults_PodSpec has no such rule)", () => {
    const spec: Obj = { containers: [{ name: "a", image: "x:1", resources: { limits: { cpu: "1" } } }] };
    defaultPodSpec(spec);
    expect((spec["containers"] as Obj[])[0]!["resources"]).toEqual({ limits: { cpu: "1" } });
  });
});

describe("SetDefaults_Service", () => {
  it("drops the affinity config of a None affinity and gives ClientIP affinity a 3-hour timeout", () => {
    expect(service({ sessionAffinityConfig: { clientIP: { timeoutSeconds: 5 } } })["spec"]).not.toHaveProperty(
      "sessionAffinityConfig",
    );
    expect((service({ sessionAffinity: "ClientIP" })["spec"] as Obj)["sessionAffinityConfig"]).toEqual({
      clientIP: { timeoutSeconds: 10800 },
    });
    const kept = { clientIP: { timeoutSeconds: 60 } };
    expect(
      (service({ sessionAffinity: "ClientIP", sessionAffinityConfig: kept })["spec"] as Obj)["sessionAffinityConfig"],
    ).toEqual(kept);
  });

  it("defaults externalTrafficPolicy for externally accessible services, a ClusterIP with external IPs included", () => {
    expect((service({ externalIPs: ["1.2.3.4"] })["spec"] as Obj)["externalTrafficPolicy"]).toBe("Cluster");
    expect(service({})["spec"]).not.toHaveProperty("externalTrafficPolicy");
    expect((service({ type: "NodePort" })["spec"] as Obj)["externalTrafficPolicy"]).toBe("Cluster");
    expect(service({ type: "ExternalName", externalName: "x" })["spec"]).not.toHaveProperty("internalTrafficPolicy");
  });

  it("gives LoadBalancers node-port allocation and their ingress IPs the VIP ipMode", () => {
    const svc = service(
      { type: "LoadBalancer" },
      { loadBalancer: { ingress: [{ ip: "5.6.7.8" }, { hostname: "lb" }] } },
    );
    expect((svc["spec"] as Obj)["allocateLoadBalancerNodePorts"]).toBe(true);
    expect(svc["status"]).toEqual({
      loadBalancer: { ingress: [{ ip: "5.6.7.8", ipMode: "VIP" }, { hostname: "lb" }] },
    });
    expect(service({})["spec"]).not.toHaveProperty("allocateLoadBalancerNodePorts");
  });

  it("defaults a zero or empty target port to the port, as intstr's zero values", () => {
    const ports = (
      service({
        ports: [
          { port: 80, targetPort: 0 },
          { port: 81, targetPort: "" },
          { port: 82, targetPort: "web" },
        ],
      })["spec"] as { ports: Obj[] }
    ).ports;
    expect(ports.map((p) => p["targetPort"])).toEqual([80, 81, "web"]);
  });
});

describe("the pod spec's nested defaults (probes, hooks, field references, volumes)", () => {
  it("fills a probe's timings and its HTTP GET's path and scheme, and a hook's HTTP GET", () => {
    const spec: Obj = {
      containers: [
        {
          name: "a",
          image: "x:1",
          readinessProbe: { httpGet: { port: 8080 }, periodSeconds: 5 },
          livenessProbe: { grpc: { port: 9000 } },
          lifecycle: { preStop: { httpGet: { port: 80, path: "/stop" } } },
          env: [{ name: "NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } }],
        },
      ],
    };
    defaultPodSpec(spec);
    const c = (spec["containers"] as Obj[])[0]!;
    expect(c["readinessProbe"]).toEqual({
      httpGet: { port: 8080, path: "/", scheme: "HTTP" },
      periodSeconds: 5,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect((c["livenessProbe"] as Obj)["grpc"]).toEqual({ port: 9000, service: "" });
    expect((c["lifecycle"] as { preStop: Obj }).preStop).toEqual({
      httpGet: { port: 80, path: "/stop", scheme: "HTTP" },
    });
    expect((c["env"] as Obj[])[0]).toEqual({
      name: "NODE",
      valueFrom: { fieldRef: { fieldPath: "spec.nodeName", apiVersion: "v1" } },
    });
  });

  it("makes a volume without a source an emptyDir and gives file sources mode 0644 and tokens an hour", () => {
    const spec: Obj = {
      containers: [],
      volumes: [
        { name: "scratch" },
        { name: "cfg", configMap: { name: "c" } },
        { name: "host", hostPath: { path: "/tmp" } },
        { name: "info", downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } },
        { name: "proj", projected: { sources: [{ serviceAccountToken: { path: "token" } }] } },
        { name: "claim", persistentVolumeClaim: { claimName: "data" } },
      ],
    };
    defaultPodSpec(spec);
    expect(spec["volumes"]).toEqual([
      { name: "scratch", emptyDir: {} },
      { name: "cfg", configMap: { name: "c", defaultMode: 420 } },
      { name: "host", hostPath: { path: "/tmp", type: "" } },
      {
        name: "info",
        downwardAPI: {
          items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels", apiVersion: "v1" } }],
          defaultMode: 420,
        },
      },
      {
        name: "proj",
        projected: { sources: [{ serviceAccountToken: { path: "token", expirationSeconds: 3600 } }], defaultMode: 420 },
      },
      { name: "claim", persistentVolumeClaim: { claimName: "data" } },
    ]);
  });
});

describe("labels copied from the pod template", () => {
  it("ReplicationController: selector and labels from the template's labels when they have none", () => {
    const template = { metadata: { labels: { app: "web" } }, spec: { containers: [] } };
    const rc: Obj = { metadata: { name: "rc" }, spec: { template } };
    defaultReplicationController(rc);
    expect(rc).toMatchObject({ metadata: { labels: { app: "web" } }, spec: { selector: { app: "web" }, replicas: 1 } });
    const own: Obj = {
      metadata: { name: "rc", labels: { mine: "x" } },
      spec: { selector: { app: "web", v: "1" }, template },
    };
    defaultReplicationController(own);
    expect(own).toMatchObject({ metadata: { labels: { mine: "x" } }, spec: { selector: { app: "web", v: "1" } } });
  });

  it("Job: labels from the template's labels, none written when the template has none", () => {
    const job: Obj = { metadata: { name: "j" }, spec: { template: { metadata: { labels: { a: "b" } }, spec: {} } } };
    defaultJob(job);
    expect((job["metadata"] as Obj)["labels"]).toEqual({ a: "b" });
    const bare: Obj = { metadata: { name: "j" }, spec: { template: { metadata: { labels: {} }, spec: {} } } };
    defaultJob(bare);
    expect(bare["metadata"]).not.toHaveProperty("labels");
  });
});
