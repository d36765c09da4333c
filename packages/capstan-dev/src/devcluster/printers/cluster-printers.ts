/**
 * Table printers of the kinds cluster components own (HPAs, CSRs, controller revisions, pod templates,
 * component statuses, runtime classes, CSI storage objects, admission policies, flow control), as
 * k8s.io/kubernetes/pkg/printers/internalversion (1.32) prints them; the descriptions are the k8s.io/api
 * 1.32 field docs those printers cite.
 */
import { hpaV1ToV2 } from "../registry/hpa-conversion.ts";
import { humanDuration } from "./human-duration.ts";
import {
  ageColumn,
  ageOf,
  arr,
  column,
  containerCells,
  formatLabelSelector,
  formatLabels,
  type Json,
  meta,
  nameColumn,
  nameOf,
  num,
  obj,
  str,
  type TablePrinter,
} from "./table-printers.ts";

/** SwaggerDoc() of the k8s.io/api 1.32 fields the printers describe their columns with. */
const DOCS = {
  "HorizontalPodAutoscalerSpec.scaleTargetRef":
    "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.",
  "HorizontalPodAutoscalerSpec.metrics":
    "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond.",
  "HorizontalPodAutoscalerSpec.minReplicas":
    "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.",
  "HorizontalPodAutoscalerSpec.maxReplicas":
    "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.",
  "HorizontalPodAutoscalerStatus.currentReplicas":
    "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.",
  "CertificateSigningRequestSpec.signerName":
    'Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it\'s a kubelet client certificate, it is assigned\n    "kubernetes.io/kube-apiserver-client-kubelet".\n 2. If it\'s a kubelet serving certificate, it is assigned\n    "kubernetes.io/kubelet-serving".\n 3. Otherwise, it is assigned "kubernetes.io/legacy-unknown".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`.',
  "CertificateSigningRequestSpec.request": "Base64-encoded PKCS#10 CSR data",
  "CertificateSigningRequestSpec.expirationSeconds":
    "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.",
  "CertificateSigningRequestStatus.conditions": "Conditions applied to the request, such as approval or denial.",
  "ControllerRevision.revision": "revision indicates the revision of the state represented by Data.",
  "VolumeAttachmentSpec.attacher":
    "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().",
  "VolumeAttachmentSpec.nodeName": "nodeName represents the node that the volume should be attached to.",
  "VolumeAttachmentSource.persistentVolumeName":
    "persistentVolumeName represents the name of the persistent volume to attach.",
  "VolumeAttachmentStatus.attached":
    "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.",
  "CSIDriverSpec.attachRequired":
    "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the CSIDriverRegistry feature gate is enabled and the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.",
  "CSIDriverSpec.podInfoOnMount":
    'podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. "csi.storage.k8s.io/pod.name": pod.Name "csi.storage.k8s.io/pod.namespace": pod.Namespace "csi.storage.k8s.io/pod.uid": string(pod.UID) "csi.storage.k8s.io/ephemeral": "true" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise "false"\n\n"csi.storage.k8s.io/ephemeral" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the "Persistent" and "Ephemeral" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn\'t support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.',
  "CSIDriverSpec.storageCapacity":
    "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.",
  "CSIDriverSpec.tokenRequests":
    'tokenRequests indicates the CSI driver needs pods\' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: "csi.storage.k8s.io/serviceAccount.tokens": {\n  "<audience>": {\n    "token": <token>,\n    "expirationTimestamp": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.',
  "CSIDriverSpec.requiresRepublish":
    "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.",
  "CSIDriverSpec.volumeLifecycleModes":
    'volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is "Persistent", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is "Ephemeral". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.',
  "CSIStorageCapacity.storageClassName":
    "storageClassName represents the name of the StorageClass that the reported capacity applies to. It must meet the same requirements as the name of a StorageClass object (non-empty, DNS subdomain). If that object no longer exists, the CSIStorageCapacity object is obsolete and should be removed by its creator. This field is immutable.",
  "CSIStorageCapacity.capacity":
    "capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.\n\nThe semantic is currently (CSI spec 1.2) defined as: The available capacity, in bytes, of the storage that can be used to provision volumes. If not set, that information is currently unavailable.",
  "PriorityLevelConfigurationReference.name":
    "`name` is the name of the priority level configuration being referenced Required.",
  "FlowSchemaSpec.matchingPrecedence":
    "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.",
  "FlowSchemaSpec.distinguisherMethod":
    "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string.",
  "PriorityLevelConfigurationSpec.type":
    '`type` indicates whether this priority level is subject to limitation on request execution.  A value of `"Exempt"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `"Limited"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server\'s limited capacity is made available exclusively to this priority level. Required.',
  "LimitedPriorityLevelConfiguration.nominalConcurrencyShares":
    '`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available at this priority level. This is used both for requests dispatched from this priority level as well as requests dispatched from other priority levels borrowing seats from this level. The server\'s concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction of a "jail" for this priority level that is used to hold some request(s)',
  "QueuingConfiguration.queues":
    "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64.",
  "QueuingConfiguration.handSize":
    "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8.",
  "QueuingConfiguration.queueLengthLimit":
    "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50.",
};

/** A resource.Quantity as its String(): the stored canonical form. */
function quantity(value: unknown): string {
  return typeof value === "number" ? String(value) : str(value);
}

const podTemplatePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Containers", "string", "Names of each container in the template."),
    column("Images", "string", "Images referenced by each container in the template."),
    column("Pod Labels", "string", "The labels for the pod template."),
  ],
  cells(pt) {
    const template = obj(pt["template"]);
    return [nameOf(pt), ...containerCells(template["spec"]), formatLabels(obj(template["metadata"])["labels"])];
  },
};

const componentStatusPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Status", "string", "Status of the component conditions"),
    column("Message", "string", "Message of the component conditions"),
    column("Error", "string", "Error of the component conditions"),
  ],
  cells(cs) {
    const healthy = arr(cs["conditions"])
      .map(obj)
      .find((c) => c["type"] === "Healthy");
    if (!healthy) return [nameOf(cs), "Unknown", "", ""];
    const status = healthy["status"] === "True" ? "Healthy" : "Unhealthy";
    return [nameOf(cs), status, str(healthy["message"]), str(healthy["error"])];
  },
};

/** formatResourceName with the kind: `kind.group/name` in lower case (`kind/name` for the core group). */
function controllerName(revision: Json): string {
  const controller = arr(meta(revision)["ownerReferences"])
    .map(obj)
    .find((ref) => ref["controller"] === true);
  if (!controller) return "<none>";
  const apiVersion = str(controller["apiVersion"]);
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
  const kind = str(controller["kind"]);
  const groupKind = group === "" ? kind : `${kind}.${group}`;
  return groupKind === "" ? str(controller["name"]) : `${groupKind.toLowerCase()}/${str(controller["name"])}`;
}

const controllerRevisionPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Controller", "string", "Controller of the object"),
    column("Revision", "string", DOCS["ControllerRevision.revision"]),
    ageColumn(),
  ],
  cells: (cr, now) => [nameOf(cr), controllerName(cr), num(cr["revision"]), ageOf(cr, now)],
};

/** formatHPAMetrics: the first two metrics as `current/target`, `<unknown>` until a status says. */
function hpaTargets(specs: Json[], statuses: Json[]): string {
  if (specs.length === 0) return "<none>";
  const list = specs.map((spec, i) => {
    const status = obj(statuses[i]);
    const type = str(spec["type"]);
    switch (type) {
      case "External":
      case "Object": {
        const key = type === "External" ? "external" : "object";
        const target = obj(obj(spec[key])["target"]);
        const current = status[key] === undefined ? undefined : obj(obj(status[key])["current"]);
        if (target["averageValue"] !== undefined) {
          const now = current?.["averageValue"] !== undefined ? quantity(current["averageValue"]) : "<unknown>";
          return `${now}/${quantity(target["averageValue"])} (avg)`;
        }
        const now = current ? quantity(current["value"] ?? "0") : "<unknown>";
        return `${now}/${quantity(target["value"] ?? "0")}`;
      }
      case "Pods": {
        const target = obj(obj(spec["pods"])["target"]);
        const current =
          status["pods"] === undefined
            ? "<unknown>"
            : quantity(obj(obj(status["pods"])["current"])["averageValue"] ?? "0");
        return `${current}/${quantity(target["averageValue"] ?? "0")}`;
      }
      case "Resource":
      case "ContainerResource": {
        const key = type === "Resource" ? "resource" : "containerResource";
        const source = obj(spec[key]);
        const target = obj(source["target"]);
        const current = status[key] === undefined ? undefined : obj(obj(status[key])["current"]);
        const name = str(source["name"]);
        if (target["averageValue"] !== undefined) {
          const now = current ? quantity(current["averageValue"] ?? "0") : "<unknown>";
          return `${name}: ${now}/${quantity(target["averageValue"])}`;
        }
        const now =
          current?.["averageUtilization"] !== undefined ? `${num(current["averageUtilization"])}%` : "<unknown>";
        const goal = target["averageUtilization"] !== undefined ? `${num(target["averageUtilization"])}%` : "<auto>";
        return `${name}: ${now}/${goal}`;
      }
      default:
        return "<unknown type>";
    }
  });
  const shown = list.slice(0, 2).join(", ");
  return list.length > 2 ? `${shown} + ${list.length - 2} more...` : shown;
}

const horizontalPodAutoscalerPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Reference", "string", DOCS["HorizontalPodAutoscalerSpec.scaleTargetRef"]),
    column("Targets", "string", DOCS["HorizontalPodAutoscalerSpec.metrics"]),
    column("MinPods", "string", DOCS["HorizontalPodAutoscalerSpec.minReplicas"]),
    column("MaxPods", "string", DOCS["HorizontalPodAutoscalerSpec.maxReplicas"]),
    column("Replicas", "string", DOCS["HorizontalPodAutoscalerStatus.currentReplicas"]),
    ageColumn(),
  ],
  cells(stored, now) {
    // The printer reads the internal (v2-shaped) object, whichever version was asked for.
    const hpa = stored["apiVersion"] === "autoscaling/v1" ? hpaV1ToV2(stored) : stored;
    const spec = obj(hpa["spec"]);
    const status = obj(hpa["status"]);
    const ref = obj(spec["scaleTargetRef"]);
    return [
      nameOf(hpa),
      `${str(ref["kind"])}/${str(ref["name"])}`,
      hpaTargets(arr(spec["metrics"]).map(obj), arr(status["currentMetrics"]).map(obj)),
      typeof spec["minReplicas"] === "number" ? String(spec["minReplicas"]) : "<unset>",
      num(spec["maxReplicas"]),
      num(status["currentReplicas"]),
      ageOf(hpa, now),
    ];
  },
};

/** extractCSRStatus: Denied over Approved over Pending, then Failed and Issued. */
function csrCondition(csr: Json): string {
  const status = obj(csr["status"]);
  const types = new Set(arr(status["conditions"]).map((c) => str(obj(c)["type"])));
  let text = types.has("Denied") ? "Denied" : types.has("Approved") ? "Approved" : "Pending";
  if (types.has("Failed")) text += ",Failed";
  if (str(status["certificate"]) !== "") text += ",Issued";
  return text;
}

const certificateSigningRequestPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    ageColumn(),
    column("SignerName", "string", DOCS["CertificateSigningRequestSpec.signerName"]),
    column("Requestor", "string", DOCS["CertificateSigningRequestSpec.request"]),
    column("RequestedDuration", "string", DOCS["CertificateSigningRequestSpec.expirationSeconds"]),
    column("Condition", "string", DOCS["CertificateSigningRequestStatus.conditions"]),
  ],
  cells(csr, now) {
    const spec = obj(csr["spec"]);
    const seconds = spec["expirationSeconds"];
    return [
      nameOf(csr),
      ageOf(csr, now),
      str(spec["signerName"]) || "<none>",
      str(spec["username"]),
      typeof seconds === "number" ? humanDuration(seconds * 1000) : "<none>",
      csrCondition(csr),
    ];
  },
};

const runtimeClassPrinter: TablePrinter = {
  // The real column cites ObjectMeta's (absent) `handler` doc: an empty description.
  columns: [nameColumn(), column("Handler", "string", ""), ageColumn()],
  cells: (rc, now) => [nameOf(rc), str(rc["handler"]), ageOf(rc, now)],
};

const volumeAttachmentPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Attacher", "string", DOCS["VolumeAttachmentSpec.attacher"], 0, "name"),
    column("PV", "string", DOCS["VolumeAttachmentSource.persistentVolumeName"]),
    column("Node", "string", DOCS["VolumeAttachmentSpec.nodeName"]),
    column("Attached", "boolean", DOCS["VolumeAttachmentStatus.attached"]),
    ageColumn(),
  ],
  cells(va, now) {
    const spec = obj(va["spec"]);
    return [
      nameOf(va),
      str(spec["attacher"]),
      str(obj(spec["source"])["persistentVolumeName"]),
      str(spec["nodeName"]),
      obj(va["status"])["attached"] === true,
      ageOf(va, now),
    ];
  },
};

const csiNodePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"),
    ageColumn(),
  ],
  cells: (node, now) => [nameOf(node), arr(obj(node["spec"])["drivers"]).length, ageOf(node, now)],
};

function boolOr(value: unknown, fallback: boolean): boolean {
  return typeof value === "boolean" ? value : fallback;
}

const csiDriverPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("AttachRequired", "boolean", DOCS["CSIDriverSpec.attachRequired"]),
    column("PodInfoOnMount", "boolean", DOCS["CSIDriverSpec.podInfoOnMount"]),
    column("StorageCapacity", "boolean", DOCS["CSIDriverSpec.storageCapacity"]),
    column("TokenRequests", "string", DOCS["CSIDriverSpec.tokenRequests"]),
    column("RequiresRepublish", "boolean", DOCS["CSIDriverSpec.requiresRepublish"]),
    column("Modes", "string", DOCS["CSIDriverSpec.volumeLifecycleModes"]),
    ageColumn(),
  ],
  cells(driver, now) {
    const spec = obj(driver["spec"]);
    const modes = arr(spec["volumeLifecycleModes"]).map(str).join(",");
    const tokens = spec["tokenRequests"];
    return [
      nameOf(driver),
      boolOr(spec["attachRequired"], true),
      boolOr(spec["podInfoOnMount"], false),
      boolOr(spec["storageCapacity"], false),
      Array.isArray(tokens) ? tokens.map((t) => str(obj(t)["audience"])).join(",") : "<unset>",
      boolOr(spec["requiresRepublish"], false),
      modes === "" ? "<none>" : modes,
      ageOf(driver, now),
    ];
  },
};

const csiStorageCapacityPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("StorageClassName", "string", DOCS["CSIStorageCapacity.storageClassName"]),
    column("Capacity", "string", DOCS["CSIStorageCapacity.capacity"]),
  ],
  cells: (c) => [
    nameOf(c),
    str(c["storageClassName"]),
    c["capacity"] === undefined || c["capacity"] === null ? "<unset>" : quantity(c["capacity"]),
  ],
};

const validatingAdmissionPolicyPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column(
      "Validations",
      "integer",
      "Validations indicates the number of validation rules defined in this configuration",
    ),
    column("ParamKind", "string", "ParamKind specifies the kind of resources used to parameterize this policy"),
    ageColumn(),
  ],
  cells(policy, now) {
    const spec = obj(policy["spec"]);
    const paramKind = spec["paramKind"];
    return [
      nameOf(policy),
      arr(spec["validations"]).length,
      paramKind === undefined || paramKind === null
        ? "<unset>"
        : `${str(obj(paramKind)["apiVersion"])}/${str(obj(paramKind)["kind"])}`,
      ageOf(policy, now),
    ];
  },
};

/** The binding's ParamRef cell: namespace/name, name under a `*` namespace when it has none, or the selector. */
function paramRefCell(paramRef: unknown): string {
  if (paramRef === undefined || paramRef === null) return "<unset>";
  const ref = obj(paramRef);
  const name = str(ref["name"]);
  if (name !== "") return str(ref["namespace"]) !== "" ? `${str(ref["namespace"])}/${name}` : `*/${name}`;
  return ref["selector"] === undefined || ref["selector"] === null ? "<unset>" : formatLabelSelector(ref["selector"]);
}

const validatingAdmissionPolicyBindingPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("PolicyName", "string", "PolicyName indicates the policy definition which the policy binding binded to"),
    column("ParamRef", "string", "ParamRef indicates the param resource which sets the configration param"),
    ageColumn(),
  ],
  cells(binding, now) {
    const spec = obj(binding["spec"]);
    return [nameOf(binding), str(spec["policyName"]), paramRefCell(spec["paramRef"]), ageOf(binding, now)];
  },
};

const flowSchemaPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("PriorityLevel", "string", DOCS["PriorityLevelConfigurationReference.name"]),
    column("MatchingPrecedence", "string", DOCS["FlowSchemaSpec.matchingPrecedence"]),
    column("DistinguisherMethod", "string", DOCS["FlowSchemaSpec.distinguisherMethod"]),
    ageColumn(),
    column("MissingPL", "string", "references a broken or non-existent PriorityLevelConfiguration"),
  ],
  cells(fs, now) {
    const spec = obj(fs["spec"]);
    const method = spec["distinguisherMethod"];
    const dangling = arr(obj(fs["status"])["conditions"])
      .map(obj)
      .find((c) => c["type"] === "Dangling");
    return [
      nameOf(fs),
      str(obj(spec["priorityLevelConfiguration"])["name"]),
      num(spec["matchingPrecedence"]),
      method === undefined || method === null ? "<none>" : str(obj(method)["type"]),
      ageOf(fs, now),
      dangling ? str(dangling["status"]) : "?",
    ];
  },
};

const priorityLevelPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Type", "string", DOCS["PriorityLevelConfigurationSpec.type"]),
    column("NominalConcurrencyShares", "string", DOCS["LimitedPriorityLevelConfiguration.nominalConcurrencyShares"]),
    column("Queues", "string", DOCS["QueuingConfiguration.queues"]),
    column("HandSize", "string", DOCS["QueuingConfiguration.handSize"]),
    column("QueueLengthLimit", "string", DOCS["QueuingConfiguration.queueLengthLimit"]),
    ageColumn(),
  ],
  cells(pl, now) {
    const spec = obj(pl["spec"]);
    let cells: unknown[] = ["<none>", "<none>", "<none>", "<none>"];
    if (spec["limited"] !== undefined && spec["limited"] !== null) {
      const limited = obj(spec["limited"]);
      const queuing = obj(limited["limitResponse"])["queuing"];
      cells = [num(limited["nominalConcurrencyShares"]), "<none>", "<none>", "<none>"];
      if (queuing !== undefined && queuing !== null) {
        const q = obj(queuing);
        cells = [cells[0], num(q["queues"]), num(q["handSize"]), num(q["queueLengthLimit"])];
      }
    }
    return [nameOf(pl), str(spec["type"]), ...cells, ageOf(pl, now)];
  },
};

/** kube-aggregator's APIService table: the service (Local without one) and the Available condition. */
const apiServicePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    column("Service", "string", "The reference to the service that hosts this API endpoint."),
    column("Available", "string", "Whether this service is available."),
    ageColumn(),
  ],
  cells(apiService, now) {
    const service = obj(apiService["spec"])["service"];
    const available = arr(obj(apiService["status"])["conditions"])
      .map(obj)
      .find((c) => c["type"] === "Available");
    let status = "Unknown";
    if (available) {
      const s = str(available["status"]);
      const reason = str(available["reason"]);
      status = s === "True" || reason === "" ? s : `${s} (${reason})`;
    }
    return [
      nameOf(apiService),
      service === undefined || service === null
        ? "Local"
        : `${str(obj(service)["namespace"])}/${str(obj(service)["name"])}`,
      status,
      ageOf(apiService, now),
    ];
  },
};

const PRINTERS: ReadonlyMap<string, TablePrinter> = new Map([
  ["apiregistration.k8s.io/apiservices", apiServicePrinter],
  ["/podtemplates", podTemplatePrinter],
  ["/componentstatuses", componentStatusPrinter],
  ["apps/controllerrevisions", controllerRevisionPrinter],
  ["autoscaling/horizontalpodautoscalers", horizontalPodAutoscalerPrinter],
  ["certificates.k8s.io/certificatesigningrequests", certificateSigningRequestPrinter],
  ["node.k8s.io/runtimeclasses", runtimeClassPrinter],
  ["storage.k8s.io/volumeattachments", volumeAttachmentPrinter],
  ["storage.k8s.io/csinodes", csiNodePrinter],
  ["storage.k8s.io/csidrivers", csiDriverPrinter],
  ["storage.k8s.io/csistoragecapacities", csiStorageCapacityPrinter],
  ["admissionregistration.k8s.io/validatingadmissionpolicies", validatingAdmissionPolicyPrinter],
  ["admissionregistration.k8s.io/validatingadmissionpolicybindings", validatingAdmissionPolicyBindingPrinter],
  ["flowcontrol.apiserver.k8s.io/flowschemas", flowSchemaPrinter],
  ["flowcontrol.apiserver.k8s.io/prioritylevelconfigurations", priorityLevelPrinter],
]);

/** The printer of one of these kinds, or undefined for the others. */
export function clusterKindPrinter(group: string, resource: string): TablePrinter | undefined {
  return PRINTERS.get(`${group}/${resource}`);
}
