/**
 * The simulated kubelet: one Node (`capstan-node`) whose pods "run" without any container runtime.
 *
 * Expected flow (per pod bound to the node, keyed `namespace/name`, state kept per pod uid):
 * 1. first sight: status written as a real kubelet reports a pod whose sandbox is being created —
 *    phase Pending, hostIP/podIP, startTime, every container `waiting: ContainerCreating`, Ready False;
 * 2. after `readyDelayMs`: init containers (if any) reported completed, every container
 *    `running` with containerID/imageID/startedAt, `started` and `ready` true, phase Running, conditions
 *    PodReadyToStartContainers/Initialized/Ready/ContainersReady True;
 * 3. {@link Kubelet.terminateContainer} (the test hook) writes the container `terminated` with the
 *    given exit code at once. Under restartPolicy Always (or OnFailure with a non-zero code) the
 *    container is restarted `restartDelayMs` later: `running` again, `restartCount` + 1,
 *    `lastState.terminated` = the exit. Otherwise it stays terminated, and once every container has
 *    terminated the pod goes Succeeded (all exit 0) or Failed;
 * 4. a pod with a deletionTimestamp (graceful DELETE of a bound pod) has its containers "stopped"
 *    for min(deletionGracePeriodSeconds, `stopDelayMs`), then is deleted with gracePeriodSeconds=0
 *    and its uid as precondition — the kubelet's own final DELETE.
 *
 * Guarantees:
 * - every status transition is its own write, so a watcher sees Pending -> Running and, after a
 *   terminateContainer, the `terminated` state before the restart, whatever the delays;
 * - writes go through the status subresource (the object store's rules), deletes carry the uid;
 * - after {@link Kubelet.stop} resolves no timer of the kubelet is left (delays are the reconcile
 *   loop's delayed keys, which stop() cancels).
 *
 * Assumptions: the pods bucket is `/pods`; pods are bound by the scheduler (scheduler.ts) or by a
 * client setting `spec.nodeName`; the node name is unique to this server. The server starts the
 * kubelet, scheduler and workload controllers together through {@link startWorkloads}.
 *
 * Caveats: no probes (a running container is ready at once), no image pulls, no resource accounting
 * (the node never fills up), no heartbeats (the Node's Ready condition is written once), no
 * CrashLoopBackOff back-off growth (every restart waits `restartDelayMs`). Status is not written
 * while a pod terminates: the devcluster's update path deletes an object with a deletionTimestamp
 * and no finalizers on any write (see docs/kubelet.md), so the final terminal-phase status the
 * kubelet of Kubernetes >= 1.27 writes before its DELETE is skipped.
 */
import { createHash, randomBytes } from "node:crypto";
import { writingAs } from "../apply/write-tracking.ts";
import { nowRfc3339 } from "../machinery/timestamps.ts";
import { qosClassOf } from "../registry/pod-qos.ts";
import type { JsonObject } from "../registry/served-resource.ts";
import type { Change } from "../storage/storage.ts";
import {
  type Controller,
  type ControllerContext,
  ignoreGoneOrChanged,
  metaOf,
  readObject,
  splitKey,
  watchAll,
} from "./cluster-view.ts";
import { DeploymentController } from "./deployment-controller.ts";
import { LoopController } from "./reconcile-loop.ts";
import { ReplicaSetController } from "./replicaset-controller.ts";
import { Scheduler } from "./scheduler.ts";

const PODS_BUCKET = "/pods";

/** The node every pod of this server runs on. */
export const DEFAULT_NODE_NAME = "capstan-node";

/**
 * Time from a pod's binding to Running. Long enough that a watcher sees Pending (ContainerCreating)
 * and Running as separate events, as on a real node; short enough that tests and
 * `kubectl rollout status` finish in well under a second.
 */
export const DEFAULT_READY_DELAY_MS = 50;

/**
 * How long an exited container stays `terminated` before the kubelet restarts it. The terminated state
 * is its own write (watchers always see it); this delay is for clients that poll with GET, which
 * get a quarter of a second to see it. A real kubelet waits at least 10 s (CrashLoopBackOff).
 */
export const DEFAULT_RESTART_DELAY_MS = 250;

/**
 * Simulated time for containers to stop after a graceful DELETE (capped by the grace period). A real
 * container usually exits on SIGTERM within milliseconds to seconds; 100 ms keeps Terminating
 * visible to `kubectl get -w` and tests without slowing rollouts.
 */
export const DEFAULT_STOP_DELAY_MS = 100;

/** The node's InternalIP and the pods' hostIP (a private address nothing routes to). */
const NODE_IP = "10.0.0.2";
/** The node's pod CIDR, kubeadm/flannel's default first block. */
const POD_CIDR = "10.244.0.0/24";
/** Pod IPs start after the network address (.0) and the bridge gateway (.1). */
const FIRST_POD_HOST = 2;
const LAST_POD_HOST = 254;

/** The kubelet's knobs (all delays in milliseconds; see the DEFAULT_ constants for why). */
export interface KubeletOptions {
  readyDelayMs?: number;
  restartDelayMs?: number;
  stopDelayMs?: number;
  nodeName?: string;
}

/** How a container exits in {@link Kubelet.terminateContainer}. */
export interface ContainerExit {
  exitCode: number;
  /** Defaults to `Completed` for exit code 0 and `Error` otherwise, as containerd reports. */
  reason?: string;
  message?: string;
}

/** What tests and tools use: the in-process handle of the simulated kubelet. */
export interface KubeletHandle {
  readonly nodeName: string;
  /**
   * Makes a running container exit. Resolves with the pod as written with the container
   * `terminated` (before any restart). Rejects when the pod is not running on this node or has no
   * such running container.
   */
  terminateContainer(namespace: string, pod: string, container: string, exit: ContainerExit): Promise<JsonObject>;
  /** True when the kubelet has no pod work queued, delayed or running. */
  idle(): boolean;
}

/** What the kubelet remembers about one pod (by uid): where it is in its timeline. */
interface PodState {
  uid: string;
  /** When containers "start" (set at first sight). */
  runAt?: number;
  /** Containers have been reported running. */
  started: boolean;
  /** container name -> when it restarts. */
  restarts: Map<string, number>;
  /** When the containers of a terminating pod have stopped. */
  stopAt?: number;
  podIP?: string;
}

interface Container {
  name: string;
  image?: string;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt: string };
  terminated?: {
    exitCode: number;
    reason?: string;
    message?: string;
    startedAt?: string;
    finishedAt: string;
    containerID?: string;
  };
}

interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
}

export interface PodCondition {
  type: string;
  status: string;
  lastProbeTime: null;
  lastTransitionTime: string;
  reason?: string;
  message?: string;
}

interface PodStatus {
  phase?: string;
  conditions?: PodCondition[];
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  qosClass?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
}

interface PodSpec {
  nodeName?: string;
  readinessGates?: { conditionType: string }[];
  restartPolicy?: string;
  containers?: Container[];
  initContainers?: Container[];
}

const POD_REF = { group: "", version: "v1", plural: "pods" };
const NODE_REF = { group: "", version: "v1", plural: "nodes" };

/** The reference containerd reports for an image: registry and tag filled in (`nginx` -> `docker.io/library/nginx:latest`). */
export function normalizeImage(image: string): string {
  let ref = image;
  const first = ref.split("/")[0] ?? "";
  const hasRegistry = ref.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost");
  if (!hasRegistry) ref = ref.includes("/") ? `docker.io/${ref}` : `docker.io/library/${ref}`;
  const lastSegment = ref.slice(ref.lastIndexOf("/") + 1);
  if (!lastSegment.includes(":") && !lastSegment.includes("@")) ref = `${ref}:latest`;
  return ref;
}

/** A stable digest per image reference (no registry to ask). */
function imageIdOf(image: string): string {
  const normalized = normalizeImage(image);
  const repo = normalized.replace(/[:@][^/]*$/, "");
  return `${repo}@sha256:${createHash("sha256").update(normalized).digest("hex")}`;
}

function newContainerId(): string {
  return `containerd://${randomBytes(32).toString("hex")}`;
}

/** Sets a condition, keeping lastTransitionTime when its status does not change (as the kubelet's status manager). */
export function setCondition(
  conditions: PodCondition[],
  type: string,
  status: "True" | "False",
  now: string,
  reason?: string,
  message?: string,
): void {
  const existing = conditions.find((c) => c.type === type);
  const next: PodCondition = { type, status, lastProbeTime: null, lastTransitionTime: now };
  if (reason !== undefined) next.reason = reason;
  if (message !== undefined) next.message = message;
  if (existing) {
    if (existing.status === status) next.lastTransitionTime = existing.lastTransitionTime;
    Object.assign(existing, next);
    if (reason === undefined) delete existing.reason;
    if (message === undefined) delete existing.message;
  } else {
    conditions.push(next);
  }
}

/** The kubelet's condition order in pod status. */
const CONDITION_ORDER = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"];

function sortConditions(conditions: PodCondition[]): PodCondition[] {
  const rank = (t: string) => {
    const i = CONDITION_ORDER.indexOf(t);
    return i < 0 ? CONDITION_ORDER.length : i;
  };
  return [...conditions].sort((a, b) => rank(a.type) - rank(b.type));
}

/**
 * Ready/ContainersReady from container statuses and the pod's readiness gates, as the kubelet's
 * status generator (pkg/kubelet/status/generate.go) derives them: a gate holds when the pod has a
 * condition of the gate's type with status True (set by whoever owns the gate, e.g. a controller).
 */
function setReadiness(status: PodStatus, now: string, gates: string[] = []): void {
  const conditions = status.conditions ?? [];
  const unready = (status.containerStatuses ?? []).filter((c) => !c.ready).map((c) => c.name);
  const terminal = status.phase === "Succeeded" || status.phase === "Failed";
  if (terminal) {
    setCondition(conditions, "ContainersReady", "False", now, "PodCompleted");
    setCondition(conditions, "Ready", "False", now, "PodCompleted");
  } else if (unready.length > 0) {
    const message = `containers with unready status: [${unready.join(" ")}]`;
    setCondition(conditions, "ContainersReady", "False", now, "ContainersNotReady", message);
    setCondition(conditions, "Ready", "False", now, "ContainersNotReady", message);
  } else {
    setCondition(conditions, "ContainersReady", "True", now);
    const unmet: string[] = [];
    for (const gate of gates) {
      const c = conditions.find((x) => x.type === gate);
      if (!c) unmet.push(`corresponding condition of pod readiness gate ${JSON.stringify(gate)} does not exist.`);
      else if (c.status !== "True") {
        unmet.push(`the status of pod readiness gate ${JSON.stringify(gate)} is not "True", but ${c.status}`);
      }
    }
    if (unmet.length > 0) setCondition(conditions, "Ready", "False", now, "ReadinessGatesNotReady", unmet.join(", "));
    else setCondition(conditions, "Ready", "True", now);
  }
  status.conditions = sortConditions(conditions);
}

/**
 * The simulated kubelet controller (see the module comment for the pod timeline).
 * Create it with {@link Kubelet.start}; it creates its Node first.
 */
export class Kubelet extends LoopController implements Controller, KubeletHandle {
  readonly nodeName: string;
  private readonly readyDelayMs: number;
  private readonly restartDelayMs: number;
  private readonly stopDelayMs: number;
  private readonly states = new Map<string, PodState>();
  private readonly ipsInUse = new Set<string>();
  private nextHost = FIRST_POD_HOST;

  constructor(
    private readonly ctx: ControllerContext,
    options: KubeletOptions = {},
  ) {
    super("kubelet", "kubelet");
    this.nodeName = options.nodeName ?? DEFAULT_NODE_NAME;
    this.readyDelayMs = nonNegative(options.readyDelayMs, DEFAULT_READY_DELAY_MS, "readyDelayMs");
    this.restartDelayMs = nonNegative(options.restartDelayMs, DEFAULT_RESTART_DELAY_MS, "restartDelayMs");
    this.stopDelayMs = nonNegative(options.stopDelayMs, DEFAULT_STOP_DELAY_MS, "stopDelayMs");
  }

  /** Registers the Node (or takes over an existing one of the same name) and picks up bound pods. */
  async start(): Promise<this> {
    await writingAs("kubelet", () => this.registerNode());
    this.unsubscribe = watchAll(this.ctx.store, (change) => this.onChange(change));
    for (const stored of this.ctx.store.storage.list(PODS_BUCKET, "")) {
      if (stored.data.includes(`"nodeName":${JSON.stringify(this.nodeName)}`)) this.loop.add(stored.key);
    }
    return this;
  }

  private served(ref: typeof POD_REF) {
    const served = this.ctx.registry.get(ref.group, ref.version, ref.plural);
    if (!served) throw new Error(`${ref.plural} are not served`);
    return served;
  }

  private onChange(change: Change): void {
    if (change.bucket !== PODS_BUCKET) return;
    if (change.type === "DELETED") {
      this.forget(change.key);
      return;
    }
    if (change.data.includes(`"nodeName":${JSON.stringify(this.nodeName)}`)) this.loop.add(change.key);
  }

  private forget(key: string): void {
    const state = this.states.get(key);
    if (state?.podIP) this.ipsInUse.delete(state.podIP);
    this.states.delete(key);
  }

  private async registerNode(): Promise<void> {
    const served = this.served(NODE_REF);
    const now = nowRfc3339();
    const capacity = { cpu: "4", memory: "8148008Ki", pods: "110", "ephemeral-storage": "61202244Ki" };
    const heartbeat = (type: string, status: string, reason: string, message: string) => ({
      type,
      status,
      lastHeartbeatTime: now,
      lastTransitionTime: now,
      reason,
      message,
    });
    const node: JsonObject = {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: this.nodeName,
        labels: {
          "kubernetes.io/hostname": this.nodeName,
          "kubernetes.io/os": "linux",
          "kubernetes.io/arch": "amd64",
          "beta.kubernetes.io/os": "linux",
          "beta.kubernetes.io/arch": "amd64",
          "node-role.kubernetes.io/control-plane": "",
        },
        annotations: { "node.alpha.kubernetes.io/ttl": "0" },
      },
      spec: { podCIDR: POD_CIDR, podCIDRs: [POD_CIDR] },
      status: {
        capacity,
        allocatable: { ...capacity },
        conditions: [
          heartbeat("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
          heartbeat("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
          heartbeat("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
          heartbeat("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ],
        addresses: [
          { type: "InternalIP", address: NODE_IP },
          { type: "Hostname", address: this.nodeName },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: {
          machineID: createHash("md5").update(this.nodeName).digest("hex"),
          systemUUID: createHash("md5").update(`uuid:${this.nodeName}`).digest("hex"),
          bootID: randomBytes(16).toString("hex"),
          kernelVersion: "6.1.0-capstan",
          osImage: "Capstan simulated node",
          containerRuntimeVersion: "containerd://1.7.24",
          kubeletVersion: "v1.32.0-capstan",
          kubeProxyVersion: "v1.32.0-capstan",
          operatingSystem: "linux",
          architecture: "amd64",
        },
      },
    };
    const existing = readObject(this.ctx.store, "/nodes", this.nodeName);
    if (!existing) {
      const created = JSON.parse(await this.ctx.store.create(served, "", node)) as JsonObject;
      await this.createLease(created, now);
      return;
    }
    // A node of this name already exists (persistent storage): post a fresh Ready status to it.
    await this.ctx.store.guaranteedUpdate(served, "", this.nodeName, "status", (current) => {
      current["status"] = node["status"];
      return current;
    });
  }

  /**
   * The node's Lease in kube-node-lease, as the kubelet creates it (owned by the Node). It is not
   * renewed: nothing here reads heartbeats, and a renewal every 10 s would be a timer per server.
   */
  private async createLease(node: JsonObject, now: string): Promise<void> {
    const served = this.ctx.registry.get("coordination.k8s.io", "v1", "leases");
    if (!served || readObject(this.ctx.store, "coordination.k8s.io/leases", `kube-node-lease/${this.nodeName}`)) return;
    const meta = metaOf(node);
    await ignoreGoneOrChanged(() =>
      this.ctx.store.create(served, "kube-node-lease", {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: {
          name: this.nodeName,
          namespace: "kube-node-lease",
          ownerReferences: [{ apiVersion: "v1", kind: "Node", name: this.nodeName, uid: meta.uid ?? "" }],
        },
        spec: {
          holderIdentity: this.nodeName,
          leaseDurationSeconds: 40,
          renewTime: now.replace("Z", ".000000Z"),
        },
      }),
    );
  }

  private allocateIp(): string {
    for (let i = 0; i <= LAST_POD_HOST - FIRST_POD_HOST; i++) {
      const host = this.nextHost;
      this.nextHost = host >= LAST_POD_HOST ? FIRST_POD_HOST : host + 1;
      const ip = `10.244.0.${host}`;
      if (!this.ipsInUse.has(ip)) {
        this.ipsInUse.add(ip);
        return ip;
      }
    }
    // More than 253 live pods: share addresses rather than refuse (nothing routes them anyway).
    return `10.244.0.${FIRST_POD_HOST}`;
  }

  private stateFor(key: string, uid: string): PodState {
    const existing = this.states.get(key);
    if (existing && existing.uid === uid) return existing;
    if (existing) this.forget(key);
    const state: PodState = { uid, started: false, restarts: new Map() };
    this.states.set(key, state);
    return state;
  }

  protected async handle(key: string): Promise<{ requeueAfterMs?: number } | undefined> {
    const pod = readObject(this.ctx.store, PODS_BUCKET, key);
    if (!pod) {
      this.forget(key);
      return undefined;
    }
    const spec = (pod["spec"] ?? {}) as PodSpec;
    if (spec.nodeName !== this.nodeName) return undefined;
    const meta = metaOf(pod);
    const state = this.stateFor(key, meta.uid ?? "");
    const status = (pod["status"] ?? {}) as PodStatus;
    const now = Date.now();

    if (meta.deletionTimestamp) return this.syncTerminating(key, pod, state, now);
    if (status.phase === "Succeeded" || status.phase === "Failed") return undefined;

    if (state.runAt === undefined) {
      if ((status.containerStatuses ?? []).some((c) => c.state.running || c.state.terminated)) {
        // Already running (a restarted server with persistent storage): carry on from here.
        state.runAt = now;
        state.started = true;
        state.podIP = status.podIP;
        if (state.podIP) this.ipsInUse.add(state.podIP);
      } else {
        state.podIP = status.podIP ?? this.allocateIp();
        await this.writeStatus(key, pod, (s) => this.creatingStatus(spec, s, state));
        state.runAt = now + this.readyDelayMs;
        return { requeueAfterMs: this.readyDelayMs };
      }
    }
    if (now < state.runAt) return { requeueAfterMs: state.runAt - now };
    if (!state.started) {
      await this.writeStatus(key, pod, (s) => this.runningStatus(spec, s));
      state.started = true;
      return undefined;
    }
    if (gatesOf(spec).length > 0) {
      // A gate's condition may have changed (its owner writes it): re-derive Ready (no-op writes store nothing).
      await this.writeStatus(key, pod, (s) => setReadiness(s, nowRfc3339(), gatesOf(spec)));
    }
    return this.restartDue(key, pod, spec, state, now);
  }

  private async restartDue(
    key: string,
    pod: JsonObject,
    spec: PodSpec,
    state: PodState,
    now: number,
  ): Promise<{ requeueAfterMs?: number } | undefined> {
    const due = [...state.restarts].filter(([, at]) => at <= now).map(([name]) => name);
    if (due.length > 0) {
      await this.writeStatus(key, pod, (s) => {
        const at = nowRfc3339();
        for (const cs of s.containerStatuses ?? []) {
          if (!due.includes(cs.name) || !cs.state.terminated) continue;
          const image = spec.containers?.find((c) => c.name === cs.name)?.image ?? cs.image;
          cs.lastState = { terminated: cs.state.terminated };
          cs.state = { running: { startedAt: at } };
          cs.restartCount += 1;
          cs.ready = true;
          cs.started = true;
          cs.image = normalizeImage(image);
          cs.containerID = newContainerId();
        }
        setReadiness(s, at, gatesOf(spec));
      });
      for (const name of due) state.restarts.delete(name);
    }
    const next = Math.min(...state.restarts.values());
    return Number.isFinite(next) ? { requeueAfterMs: Math.max(0, next - now) } : undefined;
  }

  private async syncTerminating(
    key: string,
    pod: JsonObject,
    state: PodState,
    now: number,
  ): Promise<{ requeueAfterMs?: number } | undefined> {
    if (state.stopAt === undefined) {
      const grace = (pod.metadata as { deletionGracePeriodSeconds?: number }).deletionGracePeriodSeconds ?? 0;
      state.stopAt = now + Math.min(grace * 1000, this.stopDelayMs);
    }
    if (now < state.stopAt) return { requeueAfterMs: state.stopAt - now };
    const { namespace, name } = splitKey(key);
    await ignoreGoneOrChanged(() =>
      this.ctx.store.delete(this.served(POD_REF), namespace, name, {
        gracePeriodSeconds: 0,
        preconditions: { uid: state.uid },
      }),
    );
    return undefined;
  }

  /** Status of a pod whose sandbox and containers are being created. */
  private creatingStatus(spec: PodSpec, status: PodStatus, state: PodState): void {
    const now = nowRfc3339();
    const conditions = status.conditions ?? [];
    setCondition(conditions, "PodReadyToStartContainers", "False", now);
    const inits = spec.initContainers ?? [];
    if (inits.length > 0) {
      const message = `containers with incomplete status: [${inits.map((c) => c.name).join(" ")}]`;
      setCondition(conditions, "Initialized", "False", now, "ContainersNotInitialized", message);
      status.initContainerStatuses = inits.map((c) => waitingStatus(c, "PodInitializing"));
    } else {
      setCondition(conditions, "Initialized", "True", now);
    }
    status.conditions = conditions;
    status.phase = "Pending";
    status.hostIP = NODE_IP;
    status.hostIPs = [{ ip: NODE_IP }];
    if (state.podIP) {
      status.podIP = state.podIP;
      status.podIPs = [{ ip: state.podIP }];
    }
    status.startTime ??= now;
    status.qosClass = qosClassOf(spec);
    status.containerStatuses = (spec.containers ?? []).map((c) =>
      waitingStatus(c, inits.length > 0 ? "PodInitializing" : "ContainerCreating"),
    );
    setReadiness(status, now, gatesOf(spec));
  }

  /** Status of a pod whose init containers completed and whose containers all run. */
  private runningStatus(spec: PodSpec, status: PodStatus): void {
    const now = nowRfc3339();
    const conditions = status.conditions ?? [];
    setCondition(conditions, "PodReadyToStartContainers", "True", now);
    setCondition(conditions, "Initialized", "True", now);
    status.conditions = conditions;
    const inits = spec.initContainers ?? [];
    if (inits.length > 0) {
      status.initContainerStatuses = inits.map((c) => {
        const containerID = newContainerId();
        return {
          name: c.name,
          state: { terminated: { exitCode: 0, reason: "Completed", startedAt: now, finishedAt: now, containerID } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: normalizeImage(c.image ?? ""),
          imageID: imageIdOf(c.image ?? ""),
          containerID,
          started: false,
        };
      });
    }
    status.containerStatuses = (spec.containers ?? []).map((c) => ({
      name: c.name,
      state: { running: { startedAt: now } },
      lastState: {},
      ready: true,
      restartCount: 0,
      image: normalizeImage(c.image ?? ""),
      imageID: imageIdOf(c.image ?? ""),
      containerID: newContainerId(),
      started: true,
    }));
    status.phase = "Running";
    setReadiness(status, now, gatesOf(spec));
  }

  private async writeStatus(key: string, pod: JsonObject, change: (status: PodStatus) => void): Promise<JsonObject> {
    const { namespace, name } = splitKey(key);
    const uid = metaOf(pod).uid;
    const data = await this.ctx.store.guaranteedUpdate(this.served(POD_REF), namespace, name, "status", (current) => {
      if (metaOf(current).uid !== uid) throw new Error(`pod ${key} was replaced while the kubelet wrote its status`);
      const status = structuredClone((current["status"] ?? {}) as PodStatus);
      change(status);
      current["status"] = status;
      return current;
    });
    return JSON.parse(data) as JsonObject;
  }

  async terminateContainer(
    namespace: string,
    podName: string,
    container: string,
    exit: ContainerExit,
  ): Promise<JsonObject> {
    if (!Number.isInteger(exit.exitCode)) throw new Error(`exitCode must be an integer, got ${String(exit.exitCode)}`);
    const key = `${namespace}/${podName}`;
    const pod = readObject(this.ctx.store, PODS_BUCKET, key);
    if (!pod) throw new Error(`pod ${key} not found`);
    const spec = (pod["spec"] ?? {}) as PodSpec;
    if (spec.nodeName !== this.nodeName) throw new Error(`pod ${key} is not running on node ${this.nodeName}`);
    const running = ((pod["status"] ?? {}) as PodStatus).containerStatuses?.find((c) => c.name === container);
    if (!running?.state.running) {
      throw new Error(`container ${container} of pod ${key} is not running`);
    }
    const restartPolicy = spec.restartPolicy ?? "Always";
    const restarts = restartPolicy === "Always" || (restartPolicy === "OnFailure" && exit.exitCode !== 0);
    const written = await this.writeStatus(key, pod, (s) => {
      const now = nowRfc3339();
      const cs = s.containerStatuses?.find((c) => c.name === container);
      if (!cs?.state.running) throw new Error(`container ${container} of pod ${key} is not running`);
      cs.state = {
        terminated: {
          exitCode: exit.exitCode,
          reason: exit.reason ?? (exit.exitCode === 0 ? "Completed" : "Error"),
          ...(exit.message !== undefined ? { message: exit.message } : {}),
          startedAt: cs.state.running.startedAt,
          finishedAt: now,
          ...(cs.containerID ? { containerID: cs.containerID } : {}),
        },
      };
      cs.ready = false;
      cs.started = false;
      if (!restarts) {
        const all = s.containerStatuses ?? [];
        if (all.every((c) => c.state.terminated)) {
          s.phase = all.every((c) => c.state.terminated?.exitCode === 0) ? "Succeeded" : "Failed";
        }
      }
      setReadiness(s, now, gatesOf(spec));
    });
    if (restarts) {
      const state = this.stateFor(key, metaOf(pod).uid ?? "");
      state.started = true;
      state.runAt ??= Date.now();
      state.restarts.set(container, Date.now() + this.restartDelayMs);
      this.loop.addAfter(key, this.restartDelayMs);
    }
    return written;
  }
}

function gatesOf(spec: PodSpec): string[] {
  return (spec.readinessGates ?? []).map((g) => g.conditionType);
}

function waitingStatus(c: Container, reason: string): ContainerStatus {
  return {
    name: c.name,
    state: { waiting: { reason } },
    lastState: {},
    ready: false,
    restartCount: 0,
    image: normalizeImage(c.image ?? ""),
    imageID: "",
    started: false,
  };
}

function nonNegative(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`kubelet ${name} must be a non-negative number, got ${value}`);
  return value;
}

/** The simulated workload machinery of a server, started and stopped together. */
export interface Workloads {
  kubelet: Kubelet;
  /** Scheduler, kubelet, Deployment and ReplicaSet controllers. */
  controllers: Controller[];
  /** True when none of them has work queued, delayed or running. */
  idle(): boolean;
  stop(): Promise<void>;
}

/**
 * Starts what makes workloads run on a devcluster: the kubelet (which registers the Node), the
 * scheduler binding pods to it, and the Deployment and ReplicaSet controllers. They form one switch
 * (`kubelet: false` / `--no-kubelet` turns them all off): without a node no rollout can finish, and
 * tests of the bare REST semantics need Deployments and pods left exactly as written.
 * `stop()` stops the controllers that create and bind pods first, then the kubelet.
 */
export async function startWorkloads(ctx: ControllerContext, options: KubeletOptions = {}): Promise<Workloads> {
  const kubelet = await new Kubelet(ctx, options).start();
  const scheduler = new Scheduler(ctx, kubelet.nodeName).start();
  const deployments = new DeploymentController(ctx).start();
  const replicaSets = new ReplicaSetController(ctx).start();
  const controllers: Controller[] = [deployments, replicaSets, scheduler, kubelet];
  return {
    kubelet,
    controllers,
    idle: () => controllers.every((c) => c.idle()),
    stop: async () => {
      await Promise.all([deployments.stop(), replicaSets.stop(), scheduler.stop()]);
      await kubelet.stop();
    },
  };
}
