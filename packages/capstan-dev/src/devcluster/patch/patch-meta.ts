/**
 * Type information for the built-in kinds, shared by strategic merge patch and server-side apply.
 *
 * kube-apiserver reads it from two places that describe the same Go structs: the struct tags
 * (`patchStrategy`, `patchMergeKey`) drive strategic merge, and the OpenAPI extensions generated from
 * `+listType`/`+listMapKey`/`+mapType`/`+structType` markers drive structured-merge-diff. One tree here
 * carries both, so the two engines never disagree about which lists are keyed.
 *
 * The tables are transcribed from k8s.io/api (core/v1, apps/v1, rbac/v1, admissionregistration/v1,
 * apiextensions/v1, autoscaling/v2, certificates/v1, node/v1, storage/v1, flowcontrol/v1),
 * k8s.io/kube-aggregator (apiregistration/v1) and k8s.io/apimachinery (ObjectMeta, LabelSelector,
 * Condition), at release-1.32.
 *
 * Caveats:
 * - Only fields whose merge behaviour differs from the default are listed. A key a struct does not
 *   list is treated as a struct field of unknown type ({@link LOOSE}): maps merge key by key, lists
 *   are atomic — what a Go struct field without tags gets. Unknown fields and wrong types of built-in
 *   kinds are caught when the result is decoded (rest/builtin-decoding.ts), not by these tables.
 * - Tables are by group and kind, not version: autoscaling/v1 HorizontalPodAutoscalers use the v2
 *   table, which fits them because v1's struct has no lists nor maps (its other metrics and
 *   conditions travel in annotations).
 * - `+union`/`+unionDiscriminator` markers (flowcontrol/v1 Subject, PriorityLevelConfigurationSpec,
 *   LimitResponse) are not modelled; those structs merge as plain structs.
 */

/** A leaf value (string, number, boolean, null). */
export interface ScalarType {
  readonly kind: "scalar";
}

/**
 * A value of unknown type. structured-merge-diff's "deduced" type: maps are granular and every key
 * is a map entry, lists are atomic. `looseStruct` makes map keys behave as struct fields instead
 * (no `.` marker for a non-empty nested map), which is what a Go struct field is.
 */
export interface DeducedType {
  readonly kind: "deduced";
  readonly looseStruct?: boolean;
}

/** A JSON object: a struct (named fields), a string-keyed map (element type), or both (CRD schemas). */
export interface MapType {
  readonly kind: "map";
  /** Struct fields (OpenAPI `properties`). */
  readonly fields?: Readonly<Record<string, TypeNode>>;
  /** Type of keys that are not struct fields (OpenAPI `additionalProperties`, Go maps). */
  readonly elementType?: TypeNode;
  /** `+structType=atomic` / `x-kubernetes-map-type: atomic`: apply owns and replaces it as one value. */
  readonly atomic?: boolean;
  /** Strategic merge `patchStrategy:"replace"` on this field: a patch replaces the whole map. */
  readonly replaceOnPatch?: boolean;
  /**
   * Keys outside `fields` are errors (`field not declared in schema`) rather than untyped struct
   * fields. Set for CRD schemas, whose pruning makes unknown fields impossible in stored objects.
   */
  readonly closed?: boolean;
}

/** A JSON array. */
export interface ListType {
  readonly kind: "list";
  readonly elementType: TypeNode;
  /** Server-side apply list semantics (`x-kubernetes-list-type`). */
  readonly listType: "atomic" | "set" | "map";
  /** `x-kubernetes-list-map-keys` for `listType: map`. */
  readonly keys?: readonly string[];
  /** Defaults of key fields (`+default` on a key, e.g. a port's protocol `TCP`). */
  readonly keyDefaults?: Readonly<Record<string, unknown>>;
  /**
   * Strategic merge `patchStrategy:"merge"`: present when patches merge this list (by `mergeKey`
   * for lists of objects, by value for primitives). Absent: a patch replaces the list.
   */
  readonly strategicMerge?: { readonly mergeKey?: string };
}

export type TypeNode = ScalarType | DeducedType | MapType | ListType;

/** The type tree strategic merge and apply consult for one kind (rooted at the object). */
export type PatchMeta = TypeNode;

export const SCALAR: ScalarType = { kind: "scalar" };
/** Untyped value: maps granular, lists atomic (structured-merge-diff's deduced type). */
export const DEDUCED: DeducedType = { kind: "deduced" };
/** An unlisted field of a Go struct: nested objects are structs too, lists atomic. */
export const LOOSE: DeducedType = { kind: "deduced", looseStruct: true };

/**
 * The declared struct field `name` of `node`. `name` is an object key from request data, so a key
 * such as `constructor` or `__proto__` must not find Object.prototype's member; the own-property check
 * runs only on a hit, which keeps map entries (most keys) at one lookup.
 */
export function structField(node: MapType, name: string): TypeNode | undefined {
  const field = node.fields?.[name];
  return field !== undefined && Object.hasOwn(node.fields!, name) ? field : undefined;
}

/** The type of struct field `name` (or map value) inside `node`, LOOSE/DEDUCED for unknown keys. */
export function childType(node: TypeNode, name: string): { type: TypeNode; isField: boolean } {
  if (node.kind === "map") {
    const field = structField(node, name);
    if (field) return { type: field, isField: true };
    if (node.elementType) return { type: node.elementType, isField: false };
    return { type: LOOSE, isField: true };
  }
  if (node.kind === "deduced" && node.looseStruct) return { type: LOOSE, isField: true };
  return { type: DEDUCED, isField: false };
}

/** The element type of a list node; lists of unknown type hold untyped values. */
export function elementTypeOf(node: TypeNode): TypeNode {
  if (node.kind === "list") return node.elementType;
  return node.kind === "deduced" && node.looseStruct ? LOOSE : DEDUCED;
}

// ---- builders (tables only) ----

function struct(fields: Record<string, TypeNode>, opts: { atomic?: boolean } = {}): MapType {
  return opts.atomic ? { kind: "map", fields, atomic: true } : { kind: "map", fields };
}

/** A Go `map[string][]string` (e.g. a CSR's `extra`): entries merge key by key, each value atomic. */
function stringListMap(): MapType {
  return { kind: "map", elementType: atomicList(SCALAR) };
}

function stringMap(opts: { atomic?: boolean } = {}): MapType {
  return opts.atomic ? { kind: "map", elementType: SCALAR, atomic: true } : { kind: "map", elementType: SCALAR };
}

function atomicList(elementType: TypeNode = LOOSE): ListType {
  return { kind: "list", elementType, listType: "atomic" };
}

/** A list of primitives with `+listType=set`; `merge` when it also has `patchStrategy=merge`. */
function setList(merge: boolean): ListType {
  return merge
    ? { kind: "list", elementType: SCALAR, listType: "set", strategicMerge: {} }
    : { kind: "list", elementType: SCALAR, listType: "set" };
}

/** `+listType=map` with its keys; `mergeKey` when it also has `patchStrategy=merge`. */
function keyedList(
  keys: string[],
  elementType: MapType,
  mergeKey?: string,
  keyDefaults?: Record<string, unknown>,
): ListType {
  return {
    kind: "list",
    elementType,
    listType: "map",
    keys,
    ...(keyDefaults ? { keyDefaults } : {}),
    ...(mergeKey ? { strategicMerge: { mergeKey } } : {}),
  };
}

const ENTRY = struct({});

/** metav1.LabelSelector: `+structType=atomic`. */
const labelSelector = struct({ matchLabels: stringMap(), matchExpressions: atomicList() }, { atomic: true });

/** metav1.ObjectMeta. */
export const OBJECT_META: MapType = struct({
  labels: stringMap(),
  annotations: stringMap(),
  ownerReferences: keyedList(["uid"], ENTRY, "uid"),
  finalizers: setList(true),
  managedFields: atomicList(),
});

const conditions = keyedList(["type"], ENTRY, "type");

const probe = struct({
  exec: struct({ command: atomicList(SCALAR) }),
  httpGet: struct({ httpHeaders: atomicList() }),
});

const lifecycleHandler = struct({
  exec: struct({ command: atomicList(SCALAR) }),
  httpGet: struct({ httpHeaders: atomicList() }),
});

const resources = struct({
  limits: stringMap(),
  requests: stringMap(),
  claims: keyedList(["name"], ENTRY),
});

/** core/v1 Container (and EphemeralContainer, which has the same tags). */
const container = struct({
  command: atomicList(SCALAR),
  args: atomicList(SCALAR),
  ports: keyedList(["containerPort", "protocol"], ENTRY, "containerPort", { protocol: "TCP" }),
  envFrom: atomicList(),
  env: keyedList(["name"], ENTRY, "name"),
  resources,
  resizePolicy: atomicList(),
  volumeMounts: keyedList(["mountPath"], ENTRY, "mountPath"),
  volumeDevices: keyedList(["devicePath"], ENTRY, "devicePath"),
  livenessProbe: probe,
  readinessProbe: probe,
  startupProbe: probe,
  lifecycle: struct({ postStart: lifecycleHandler, preStop: lifecycleHandler }),
  securityContext: struct({ capabilities: struct({ add: atomicList(SCALAR), drop: atomicList(SCALAR) }) }),
});

const volume = struct({
  configMap: struct({ items: atomicList() }),
  secret: struct({ items: atomicList() }),
  downwardAPI: struct({ items: atomicList() }),
  projected: struct({ sources: atomicList() }),
});

/** core/v1 PodSpec. */
const podSpec = struct({
  volumes: keyedList(["name"], volume, "name"),
  initContainers: keyedList(["name"], container, "name"),
  containers: keyedList(["name"], container, "name"),
  ephemeralContainers: keyedList(["name"], container, "name"),
  nodeSelector: stringMap({ atomic: true }),
  imagePullSecrets: keyedList(["name"], ENTRY, "name"),
  tolerations: atomicList(),
  hostAliases: keyedList(["ip"], struct({ hostnames: atomicList(SCALAR) }), "ip"),
  readinessGates: atomicList(),
  topologySpreadConstraints: keyedList(["topologyKey", "whenUnsatisfiable"], ENTRY, "topologyKey"),
  schedulingGates: keyedList(["name"], ENTRY, "name"),
  resourceClaims: keyedList(["name"], ENTRY, "name"),
  overhead: stringMap(),
  securityContext: struct({ supplementalGroups: atomicList(SCALAR), sysctls: atomicList() }),
  dnsConfig: struct({ nameservers: atomicList(SCALAR), searches: atomicList(SCALAR), options: atomicList() }),
});

const podStatus = struct({
  conditions,
  // `+patchStrategy=merge +patchMergeKey=ip` but `+listType=atomic`: strategic merge merges, apply replaces.
  hostIPs: { kind: "list", elementType: ENTRY, listType: "atomic", strategicMerge: { mergeKey: "ip" } },
  resourceClaimStatuses: keyedList(["name"], ENTRY, "name"),
  podIPs: keyedList(["ip"], ENTRY, "ip"),
  initContainerStatuses: atomicList(),
  containerStatuses: atomicList(),
  ephemeralContainerStatuses: atomicList(),
});

const podTemplateSpec = struct({ metadata: OBJECT_META, spec: podSpec });

function kind(fields: Record<string, TypeNode>): MapType {
  return struct({ metadata: OBJECT_META, ...fields });
}

const policyRules = atomicList(
  struct({
    verbs: atomicList(SCALAR),
    apiGroups: atomicList(SCALAR),
    resources: atomicList(SCALAR),
    resourceNames: atomicList(SCALAR),
    nonResourceURLs: atomicList(SCALAR),
  }),
);

const webhook = struct({
  rules: atomicList(),
  matchConditions: keyedList(["name"], ENTRY, "name"),
  namespaceSelector: labelSelector,
  objectSelector: labelSelector,
});

const jobSpec = struct({ selector: labelSelector, template: podTemplateSpec });

/** JobStatus.conditions: `+listType=atomic` for apply, merged by `type` for strategic merge. */
const jobConditions: ListType = {
  kind: "list",
  elementType: ENTRY,
  listType: "atomic",
  strategicMerge: { mergeKey: "type" },
};

/** Conditions with `+listType=map +listMapKey=type` but no `patchStrategy`: apply keys them, strategic merge replaces. */
const applyKeyedConditions = keyedList(["type"], ENTRY);

/** autoscaling/v2 HPAScalingRules. */
const hpaScalingRules = struct({ policies: atomicList() });

/** core/v1 PersistentVolumeSpec as VolumeAttachment's `source.inlineVolumeSpec` carries it (CSI fields). */
const secretReference = struct({}, { atomic: true });
const inlineVolumeSpec = struct({
  capacity: stringMap(),
  accessModes: atomicList(SCALAR),
  mountOptions: atomicList(SCALAR),
  nodeAffinity: struct({ required: struct({ nodeSelectorTerms: atomicList() }, { atomic: true }) }),
  csi: struct({
    volumeAttributes: stringMap(),
    controllerPublishSecretRef: secretReference,
    nodeStageSecretRef: secretReference,
    nodePublishSecretRef: secretReference,
    controllerExpandSecretRef: secretReference,
    nodeExpandSecretRef: secretReference,
  }),
});

/** admissionregistration/v1 MatchResources: `+structType=atomic`. */
const matchResources = struct(
  {
    namespaceSelector: labelSelector,
    objectSelector: labelSelector,
    resourceRules: atomicList(),
    excludeResourceRules: atomicList(),
  },
  { atomic: true },
);

/** Built-in kinds by `group/Kind` (core group: `/Kind`). */
const BUILTIN: ReadonlyMap<string, PatchMeta> = new Map<string, PatchMeta>([
  ["/Pod", kind({ spec: podSpec, status: podStatus })],
  ["/ConfigMap", kind({ data: stringMap(), binaryData: stringMap() })],
  ["/Secret", kind({ data: stringMap(), stringData: stringMap() })],
  [
    "/Service",
    kind({
      spec: struct({
        ports: keyedList(["port", "protocol"], ENTRY, "port", { protocol: "TCP" }),
        selector: stringMap({ atomic: true }),
        clusterIPs: atomicList(SCALAR),
        externalIPs: atomicList(SCALAR),
        loadBalancerSourceRanges: atomicList(SCALAR),
        ipFamilies: atomicList(SCALAR),
      }),
      status: struct({ loadBalancer: struct({ ingress: atomicList() }), conditions }),
    }),
  ],
  ["/Namespace", kind({ spec: struct({ finalizers: atomicList(SCALAR) }), status: struct({ conditions }) })],
  [
    "/Node",
    kind({
      spec: struct({ podCIDRs: setList(true), taints: atomicList() }),
      status: struct({
        capacity: stringMap(),
        allocatable: stringMap(),
        conditions,
        addresses: keyedList(["type"], ENTRY, "type"),
        images: atomicList(),
        volumesInUse: atomicList(SCALAR),
        volumesAttached: atomicList(),
      }),
    }),
  ],
  ["/ServiceAccount", kind({ secrets: keyedList(["name"], ENTRY, "name"), imagePullSecrets: atomicList() })],
  ["/Event", kind({})],
  ["events.k8s.io/Event", kind({})],
  ["coordination.k8s.io/Lease", kind({})],
  [
    "apps/Deployment",
    kind({
      spec: struct({ selector: labelSelector, template: podTemplateSpec, strategy: struct({}) }),
      status: struct({ conditions }),
    }),
  ],
  [
    "apps/ReplicaSet",
    kind({ spec: struct({ selector: labelSelector, template: podTemplateSpec }), status: struct({ conditions }) }),
  ],
  [
    "apps/StatefulSet",
    kind({
      spec: struct({ selector: labelSelector, template: podTemplateSpec, volumeClaimTemplates: atomicList() }),
      status: struct({ conditions }),
    }),
  ],
  [
    "apps/DaemonSet",
    kind({ spec: struct({ selector: labelSelector, template: podTemplateSpec }), status: struct({ conditions }) }),
  ],
  ["batch/Job", kind({ spec: jobSpec, status: struct({ conditions: jobConditions }) })],
  ["batch/CronJob", kind({ spec: struct({ jobTemplate: struct({ metadata: OBJECT_META, spec: jobSpec }) }) })],
  ["networking.k8s.io/Ingress", kind({})],
  ["networking.k8s.io/IngressClass", kind({})],
  ["networking.k8s.io/NetworkPolicy", kind({ spec: struct({ podSelector: labelSelector }) })],
  ["/PersistentVolumeClaim", kind({ spec: struct({ selector: labelSelector }), status: struct({ conditions }) })],
  ["/PersistentVolume", kind({})],
  ["/Endpoints", kind({})],
  [
    "/ReplicationController",
    kind({
      spec: struct({ selector: stringMap({ atomic: true }), template: podTemplateSpec }),
      status: struct({ conditions }),
    }),
  ],
  ["/LimitRange", kind({})],
  ["/ResourceQuota", kind({})],
  ["policy/PodDisruptionBudget", kind({ spec: struct({ selector: labelSelector }), status: struct({ conditions }) })],
  ["discovery.k8s.io/EndpointSlice", kind({})],
  ["storage.k8s.io/StorageClass", kind({})],
  ["scheduling.k8s.io/PriorityClass", kind({})],
  ["rbac.authorization.k8s.io/Role", kind({ rules: policyRules })],
  [
    "rbac.authorization.k8s.io/ClusterRole",
    kind({ rules: policyRules, aggregationRule: struct({ clusterRoleSelectors: atomicList(labelSelector) }) }),
  ],
  ["rbac.authorization.k8s.io/RoleBinding", kind({ subjects: atomicList() })],
  ["rbac.authorization.k8s.io/ClusterRoleBinding", kind({ subjects: atomicList() })],
  [
    "apiextensions.k8s.io/CustomResourceDefinition",
    kind({
      spec: struct({
        versions: atomicList(),
        names: struct({ shortNames: atomicList(SCALAR), categories: atomicList(SCALAR) }),
      }),
      status: struct({
        conditions: keyedList(["type"], ENTRY),
        acceptedNames: struct({ shortNames: atomicList(SCALAR), categories: atomicList(SCALAR) }),
        storedVersions: atomicList(SCALAR),
      }),
    }),
  ],
  [
    "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
    kind({ webhooks: keyedList(["name"], webhook, "name") }),
  ],
  [
    "admissionregistration.k8s.io/MutatingWebhookConfiguration",
    kind({ webhooks: keyedList(["name"], webhook, "name") }),
  ],
  ["/ComponentStatus", kind({ conditions })],
  ["/PodTemplate", kind({ template: podTemplateSpec })],
  // runtime.RawExtension `data`: left to the default (an untyped struct field).
  ["apps/ControllerRevision", kind({})],
  [
    "autoscaling/HorizontalPodAutoscaler",
    kind({
      spec: struct({
        metrics: atomicList(),
        behavior: struct({ scaleUp: hpaScalingRules, scaleDown: hpaScalingRules }),
      }),
      status: struct({ currentMetrics: atomicList(), conditions }),
    }),
  ],
  [
    "certificates.k8s.io/CertificateSigningRequest",
    kind({
      spec: struct({ usages: atomicList(SCALAR), groups: atomicList(SCALAR), extra: stringListMap() }),
      status: struct({ conditions: applyKeyedConditions }),
    }),
  ],
  ["apiregistration.k8s.io/APIService", kind({ status: struct({ conditions }) })],
  [
    "node.k8s.io/RuntimeClass",
    kind({
      overhead: struct({ podFixed: stringMap() }),
      scheduling: struct({ nodeSelector: stringMap({ atomic: true }), tolerations: atomicList() }),
    }),
  ],
  [
    "storage.k8s.io/CSIDriver",
    kind({ spec: struct({ volumeLifecycleModes: setList(false), tokenRequests: atomicList() }) }),
  ],
  [
    "storage.k8s.io/CSINode",
    kind({
      spec: struct({
        drivers: keyedList(["name"], struct({ topologyKeys: atomicList(SCALAR) }), "name"),
      }),
    }),
  ],
  ["storage.k8s.io/CSIStorageCapacity", kind({ nodeTopology: labelSelector })],
  [
    "storage.k8s.io/VolumeAttachment",
    kind({
      spec: struct({ source: struct({ inlineVolumeSpec }) }),
      status: struct({ attachmentMetadata: stringMap() }),
    }),
  ],
  [
    "admissionregistration.k8s.io/ValidatingAdmissionPolicy",
    kind({
      spec: struct({
        paramKind: struct({}, { atomic: true }),
        matchConstraints: matchResources,
        validations: atomicList(),
        auditAnnotations: atomicList(),
        matchConditions: keyedList(["name"], ENTRY, "name"),
        variables: keyedList(["name"], struct({}, { atomic: true }), "name"),
      }),
      status: struct({
        typeChecking: struct({ expressionWarnings: atomicList() }),
        conditions: applyKeyedConditions,
      }),
    }),
  ],
  [
    "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
    kind({
      spec: struct({
        paramRef: struct({}, { atomic: true }),
        matchResources,
        validationActions: setList(false),
      }),
    }),
  ],
  [
    "flowcontrol.apiserver.k8s.io/FlowSchema",
    kind({ spec: struct({ rules: atomicList() }), status: struct({ conditions }) }),
  ],
  ["flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration", kind({ status: struct({ conditions }) })],
]);

/**
 * The patch metadata of a built-in kind, or undefined for kinds without a table (custom resources:
 * strategic merge is refused for them; apply takes their type from the CRD schema instead).
 */
export function builtinPatchMeta(group: string, kindName: string): PatchMeta | undefined {
  return BUILTIN.get(`${group}/${kindName}`);
}

/** The `group/Kind` keys with a table (tests and docs list them). */
export function builtinPatchMetaKinds(): string[] {
  return [...BUILTIN.keys()];
}
