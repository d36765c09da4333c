/**
 * The built-in kinds a 1.32 kube-apiserver serves that belong to cluster components rather than to
 * workloads (controller revisions, pod templates, node runtime classes, CSI storage objects, flow
 * control, admission policies, the aggregator's APIServices), as stored objects with their scheme defaults and strategies
 * (pkg/apis/<group>/v1/defaults.go, pkg/registry/<group>/<kind>/strategy.go). No controller acts on them.
 */
import { record, served } from "./builtin-descriptor.ts";
import { defaultPodTemplate, defaultRuleScopes } from "./scheme-defaults.ts";
import type { JsonObject, ServedResource } from "./served-resource.ts";

function setIfUnset(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}

/** SetDefaults_CSIDriver (SELinuxMountReadWriteOncePod is beta and on in 1.32, so seLinuxMount is defaulted). */
function defaultCsiDriver(driver: JsonObject): void {
  const spec = record(driver, "spec");
  setIfUnset(spec, "attachRequired", true);
  setIfUnset(spec, "podInfoOnMount", false);
  setIfUnset(spec, "storageCapacity", false);
  setIfUnset(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType");
  if (!Array.isArray(spec["volumeLifecycleModes"]) || spec["volumeLifecycleModes"].length === 0) {
    spec["volumeLifecycleModes"] = ["Persistent"];
  }
  setIfUnset(spec, "requiresRepublish", false);
  setIfUnset(spec, "seLinuxMount", false);
}

/** SetDefaults_FlowSchemaSpec: precedence 0 means the default, 1000. */
function defaultFlowSchema(fs: JsonObject): void {
  const spec = record(fs, "spec");
  if (spec["matchingPrecedence"] === undefined || spec["matchingPrecedence"] === 0) spec["matchingPrecedence"] = 1000;
}

/** SetDefaults of flowcontrol/v1 priority levels: shares, lendable percent and the queuing parameters. */
function defaultPriorityLevel(pl: JsonObject): void {
  const spec = record(pl, "spec");
  const limited = spec["limited"];
  if (limited !== null && typeof limited === "object") {
    const l = limited as Record<string, unknown>;
    // v1 keeps an explicit 0 (a pointer); only an absent value becomes 30.
    setIfUnset(l, "nominalConcurrencyShares", 30);
    setIfUnset(l, "lendablePercent", 0);
    const response = l["limitResponse"] as Record<string, unknown> | undefined;
    const queuing = response?.["queuing"];
    if (queuing !== null && typeof queuing === "object") {
      const q = queuing as Record<string, unknown>;
      if (!q["handSize"]) q["handSize"] = 8;
      if (!q["queues"]) q["queues"] = 64;
      if (!q["queueLengthLimit"]) q["queueLengthLimit"] = 50;
    }
  }
  const exempt = spec["exempt"];
  if (exempt !== null && typeof exempt === "object") {
    setIfUnset(exempt as Record<string, unknown>, "nominalConcurrencyShares", 0);
    setIfUnset(exempt as Record<string, unknown>, "lendablePercent", 0);
  }
}

/** SetDefaults_MatchResources: Equivalent matching and match-all selectors; its rules' SetDefaults_Rule. */
function defaultMatchResources(match: unknown): void {
  if (match === null || typeof match !== "object") return;
  const m = match as Record<string, unknown>;
  setIfUnset(m, "namespaceSelector", {});
  setIfUnset(m, "objectSelector", {});
  setIfUnset(m, "matchPolicy", "Equivalent");
  defaultRuleScopes(m["resourceRules"]);
  defaultRuleScopes(m["excludeResourceRules"]);
}

/** SetDefaults_ValidatingAdmissionPolicySpec: failurePolicy Fail, and the match constraints' defaults. */
function defaultValidatingAdmissionPolicy(policy: JsonObject): void {
  const spec = record(policy, "spec");
  setIfUnset(spec, "failurePolicy", "Fail");
  defaultMatchResources(spec["matchConstraints"]);
}

/** The binding's match resources and SetDefaults_ParamRef (a missing parameter denies). */
function defaultValidatingAdmissionPolicyBinding(binding: JsonObject): void {
  const spec = record(binding, "spec");
  defaultMatchResources(spec["matchResources"]);
  const paramRef = spec["paramRef"];
  if (paramRef !== null && typeof paramRef === "object") {
    setIfUnset(paramRef as Record<string, unknown>, "parameterNotFoundAction", "Deny");
  }
}

/** SetDefaults_ServiceReference (apiregistration/v1): a service reference's port is 443. */
function defaultApiService(apiService: JsonObject): void {
  const service = record(apiService, "spec")["service"];
  if (service !== null && typeof service === "object") setIfUnset(service as Record<string, unknown>, "port", 443);
}

/** PrepareForCreate of the kinds whose status starts empty (status: {} on the wire). */
function emptyStatus(obj: JsonObject): void {
  obj["status"] = {};
}

export function clusterBuiltins(): ServedResource[] {
  return [
    // Stored only: no aggregation proxies to the service, and no local APIServices are registered.
    served({
      group: "apiregistration.k8s.io",
      version: "v1",
      kind: "APIService",
      plural: "apiservices",
      namespaced: false,
      categories: ["api-extensions"],
      subresources: { status: true },
      defaults: defaultApiService,
      defaultOnCreate: emptyStatus,
    }),
    served({
      group: "",
      version: "v1",
      kind: "PodTemplate",
      plural: "podtemplates",
      namespaced: true,
      defaults: defaultPodTemplate,
    }),
    served({
      group: "apps",
      version: "v1",
      kind: "ControllerRevision",
      plural: "controllerrevisions",
      namespaced: true,
    }),
    served({ group: "node.k8s.io", version: "v1", kind: "RuntimeClass", plural: "runtimeclasses", namespaced: false }),
    served({
      group: "storage.k8s.io",
      version: "v1",
      kind: "CSIDriver",
      plural: "csidrivers",
      namespaced: false,
      defaults: defaultCsiDriver,
    }),
    served({ group: "storage.k8s.io", version: "v1", kind: "CSINode", plural: "csinodes", namespaced: false }),
    served({
      group: "storage.k8s.io",
      version: "v1",
      kind: "CSIStorageCapacity",
      plural: "csistoragecapacities",
      namespaced: true,
    }),
    served({
      group: "storage.k8s.io",
      version: "v1",
      kind: "VolumeAttachment",
      plural: "volumeattachments",
      namespaced: false,
      subresources: { status: true },
      // PrepareForCreate empties the status, whose `attached` has no omitempty.
      defaultOnCreate: (va) => {
        va["status"] = { attached: false };
      },
    }),
    served({
      group: "admissionregistration.k8s.io",
      version: "v1",
      kind: "ValidatingAdmissionPolicy",
      plural: "validatingadmissionpolicies",
      namespaced: false,
      categories: ["api-extensions"],
      subresources: { status: true },
      generation: "spec",
      defaults: defaultValidatingAdmissionPolicy,
      defaultOnCreate: emptyStatus,
    }),
    served({
      group: "admissionregistration.k8s.io",
      version: "v1",
      kind: "ValidatingAdmissionPolicyBinding",
      plural: "validatingadmissionpolicybindings",
      namespaced: false,
      categories: ["api-extensions"],
      generation: "spec",
      defaults: defaultValidatingAdmissionPolicyBinding,
    }),
    served({
      group: "flowcontrol.apiserver.k8s.io",
      version: "v1",
      kind: "FlowSchema",
      plural: "flowschemas",
      namespaced: false,
      subresources: { status: true },
      generation: "spec",
      defaults: defaultFlowSchema,
      defaultOnCreate: emptyStatus,
    }),
    served({
      group: "flowcontrol.apiserver.k8s.io",
      version: "v1",
      kind: "PriorityLevelConfiguration",
      plural: "prioritylevelconfigurations",
      namespaced: false,
      subresources: { status: true },
      generation: "spec",
      defaults: defaultPriorityLevel,
      defaultOnCreate: emptyStatus,
    }),
  ];
}
