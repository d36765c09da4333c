/**
 * The pod spec's rules, shared by pods and every kind that holds a pod template (core
 * `ValidatePodSpec`, `ValidatePodTemplateSpec`, `ValidatePodSpecificAnnotations`,
 * `validatePodMetadataAndSpec` in pkg/apis/core/validation of Kubernetes 1.32), and the options the
 * strategies derive for them (GetValidationOptionsFromPodSpecAndMeta). core-pod.ts exports them to
 * the other groups and holds the core kinds.
 *
 * Expected flow: the store has applied the scheme's defaults (restartPolicy, dnsPolicy,
 * terminationGracePeriodSeconds, each container's pull policy and termination message policy, probe
 * timings ...) and checked the object's metadata; these functions report the spec's errors in
 * kube-apiserver's order. Workload kinds of other groups call `validatePodTemplateSpec` with the
 * options `podTemplateValidationOptions` derives from their stored template.
 *
 * Rules are split as kube-apiserver's file is: volumes (core-volumes.ts), containers
 * (core-container.ts), probes (core-probes.ts), resources (core-resources.ts), security contexts
 * (core-security-context.ts), scheduling (core-pod-scheduling.ts), pod updates (core-pod-update.ts).
 */
import {
  type FieldError,
  type FieldPath,
  fieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
} from "../field-errors.ts";
import { goQuote, withGoSharpV } from "../go-format.ts";
import { isDNS1123Label, nameIsDNSSubdomain } from "../names.ts";
import { validateAnnotations, validateLabels } from "../object-meta.ts";
import {
  containerResources,
  validateContainers,
  validateEphemeralContainers,
  validateImageWhitespace,
  validateInitContainers,
} from "./core-container.ts";
import type { PodValidationOptions } from "./core-pod-options.ts";
import {
  hasInvalidLabelValueInAffinity,
  hasInvalidTopologySpreadSelector,
  validateAffinity,
  validateDNSConfig,
  validateHostAliases,
  validateReadinessGates,
  validateSchedulingGates,
  validateTolerations,
  validateTopologySpreadConstraints,
} from "./core-pod-scheduling.ts";
import { usesIndivisibleHugePages, validateResourceRequirements } from "./core-resources.ts";
import { hasHostNamespacedSysctl, validateOSSpecific, validatePodSecurityContext } from "./core-security-context.ts";
import { validateLocalDescendingPath, validateLocalNonReservedPath, validateVolumes } from "./core-volumes.ts";
import type { Json } from "./kind-validation.ts";
import { inclusiveRangeError, MAX_INT32 } from "./value-formats.ts";
import { bool, num, obj, objects, objOrEmpty, present, str } from "./zero-values.ts";

const RESTART_POLICIES = ["Always", "OnFailure", "Never"];
const DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
const PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"];
/** validOS, sorted. */
const OS_NAMES = ["linux", "windows"];

const MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror";
const DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost";
const SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/";
const APPARMOR_CONTAINER_PREFIX = "container.apparmor.security.beta.kubernetes.io/";

/** The pod spec a template gets when it has none: Go defaults the zero struct. */
export const DEFAULTED_EMPTY_SPEC: Json = {
  restartPolicy: "Always",
  terminationGracePeriodSeconds: 30,
  dnsPolicy: "ClusterFirst",
  schedulerName: "default-scheduler",
  securityContext: {},
};

/** A map[string]string as Go's %#v prints it (keys sorted). */
export function goStringMap(map: unknown): object {
  const o = obj(map);
  if (o === undefined) return withGoSharpV({}, "map[string]string(nil)");
  const keys = Object.keys(o).sort();
  const text = `map[string]string{${keys.map((k) => `${goQuote(k)}:${goQuote(str(o[k]))}`).join(", ")}}`;
  return withGoSharpV({ ...o }, text);
}

/** GetDeletionCostFromPodAnnotations: an int32 without `+` or leading zeros. */
function isValidDeletionCost(value: string): boolean {
  if (!/^(-\d+|0|[1-9]\d*)$/.test(value)) return false;
  const n = Number(value);
  return Number.isInteger(n) && n >= -(MAX_INT32 + 1) && n <= MAX_INT32;
}

/** ValidateSeccompProfile: an annotation's profile name. */
function validateSeccompAnnotation(profile: string, path: FieldPath): FieldError[] {
  if (profile === "runtime/default" || profile === "docker/default" || profile === "unconfined") return [];
  if (profile.startsWith("localhost/")) return validateLocalDescendingPath(profile.slice("localhost/".length), path);
  return [invalid(path, profile, "must be a valid seccomp profile")];
}

function containerNames(spec: Json): string[] {
  return ["initContainers", "containers", "ephemeralContainers"].flatMap((k) =>
    objects(spec[k]).map((c) => str(c["name"])),
  );
}

/** ValidatePodSpecificAnnotations: mirror-pod, deletion-cost, seccomp and AppArmor annotations. */
export function validatePodSpecificAnnotations(
  annotations: unknown,
  spec: Json,
  path: FieldPath,
  options: PodValidationOptions,
): FieldError[] {
  const errs: FieldError[] = [];
  const a = obj(annotations) ?? {};
  if (Object.hasOwn(a, MIRROR_POD_ANNOTATION) && str(spec["nodeName"]) === "") {
    errs.push(
      invalid(
        path.key(MIRROR_POD_ANNOTATION),
        str(a[MIRROR_POD_ANNOTATION]),
        "must set spec.nodeName if mirror pod annotation is set",
      ),
    );
  }
  if (!options.allowInvalidPodDeletionCost && Object.hasOwn(a, DELETION_COST_ANNOTATION)) {
    const cost = str(a[DELETION_COST_ANNOTATION]);
    if (!isValidDeletionCost(cost))
      errs.push(invalid(path.key(DELETION_COST_ANNOTATION), cost, "must be a 32bit integer"));
  }
  if (Object.hasOwn(a, SECCOMP_POD_ANNOTATION)) {
    errs.push(...validateSeccompAnnotation(str(a[SECCOMP_POD_ANNOTATION]), path.child(SECCOMP_POD_ANNOTATION)));
  }
  for (const [key, value] of Object.entries(a)) {
    if (key.startsWith(SECCOMP_CONTAINER_PREFIX)) errs.push(...validateSeccompAnnotation(str(value), path.child(key)));
  }
  const names = containerNames(spec);
  for (const [key, value] of Object.entries(a)) {
    if (!key.startsWith(APPARMOR_CONTAINER_PREFIX)) continue;
    const container = key.slice(APPARMOR_CONTAINER_PREFIX.length);
    if (!names.includes(container)) errs.push(invalid(path.key(key), container, "container not found"));
    const profile = str(value);
    if (
      profile !== "" &&
      profile !== "runtime/default" &&
      profile !== "unconfined" &&
      !profile.startsWith("localhost/")
    ) {
      errs.push(invalid(path.key(key), profile, `invalid AppArmor profile name: ${goQuote(profile)}`));
    }
  }
  return errs;
}

/** The containers of a spec with their paths, as VisitContainersWithPath visits them (init first). */
function visitContainers(spec: Json, specPath: FieldPath): Array<[Json, FieldPath]> {
  return ["initContainers", "containers", "ephemeralContainers"].flatMap((key) =>
    objects(spec[key]).map((c, i): [Json, FieldPath] => [c, specPath.child(key).index(i)]),
  );
}

/** validateSeccompAnnotationsAndFieldsMatch. */
function seccompMismatch(annotation: string, profile: Json, path: FieldPath): FieldError[] {
  const type = str(profile["type"]);
  const typeMismatch = forbidden(path.child("type"), "seccomp type in annotation and field must match");
  if (type === "Unconfined" && annotation !== "unconfined") return [typeMismatch];
  if (type === "RuntimeDefault" && annotation !== "runtime/default" && annotation !== "docker/default")
    return [typeMismatch];
  if (type === "Localhost") {
    if (!annotation.startsWith("localhost/")) return [typeMismatch];
    if (
      !present(profile["localhostProfile"]) ||
      annotation.slice("localhost/".length) !== str(profile["localhostProfile"])
    ) {
      return [forbidden(path.child("localhostProfile"), "seccomp profile in annotation and field must match")];
    }
  }
  return [];
}

/** validateSeccompAnnotationsAndFields: annotations and seccompProfile fields agree where both are given. */
export function validateSeccompAnnotationsAndFields(meta: Json, spec: Json, specPath: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const annotations = obj(meta["annotations"]) ?? {};
  const podProfile = obj(obj(spec["securityContext"])?.["seccompProfile"]);
  if (podProfile !== undefined && Object.hasOwn(annotations, SECCOMP_POD_ANNOTATION)) {
    errs.push(
      ...seccompMismatch(
        str(annotations[SECCOMP_POD_ANNOTATION]),
        podProfile,
        specPath.child("securityContext", "seccompProfile"),
      ),
    );
  }
  for (const [container, at] of visitContainers(spec, specPath)) {
    const profile = obj(obj(container["securityContext"])?.["seccompProfile"]);
    const key = SECCOMP_CONTAINER_PREFIX + str(container["name"]);
    if (profile !== undefined && Object.hasOwn(annotations, key)) {
      errs.push(...seccompMismatch(str(annotations[key]), profile, at.child("securityContext", "seccompProfile")));
    }
  }
  return errs;
}

/** validateAppArmorAnnotationsAndFieldsMatchOnCreate (skipped for windows pods). */
export function validateAppArmorAnnotationsAndFields(meta: Json, spec: Json, specPath: FieldPath): FieldError[] {
  if (str(obj(spec["os"])?.["name"]) === "windows") return [];
  const errs: FieldError[] = [];
  const annotations = obj(meta["annotations"]) ?? {};
  const podProfile = obj(obj(spec["securityContext"])?.["appArmorProfile"]);
  for (const [container, at] of visitContainers(spec, specPath)) {
    const profile = obj(obj(container["securityContext"])?.["appArmorProfile"]) ?? podProfile;
    const key = APPARMOR_CONTAINER_PREFIX + str(container["name"]);
    if (profile === undefined || !Object.hasOwn(annotations, key)) continue;
    const annotation = str(annotations[key]);
    const path = at.child("securityContext", "appArmorProfile");
    const typeMismatch = forbidden(path.child("type"), "apparmor type in annotation and field must match");
    switch (str(profile["type"])) {
      case "Unconfined":
        if (annotation !== "unconfined") errs.push(typeMismatch);
        break;
      case "RuntimeDefault":
        if (annotation !== "runtime/default") errs.push(typeMismatch);
        break;
      case "Localhost":
        if (!annotation.startsWith("localhost/")) errs.push(typeMismatch);
        else if (
          !present(profile["localhostProfile"]) ||
          annotation.slice("localhost/".length) !== str(profile["localhostProfile"])
        ) {
          errs.push(forbidden(path.child("localhostProfile"), "apparmor profile in annotation and field must match"));
        }
        break;
    }
  }
  return errs;
}

/** validatePodHostNetworkDeps: on the host's network a port's hostPort is its containerPort. */
function validateHostNetworkPorts(spec: Json, specPath: FieldPath, options: PodValidationOptions): FieldError[] {
  if (!bool(spec["hostNetwork"])) return [];
  const errs: FieldError[] = [];
  objects(spec["containers"]).forEach((container, i) => {
    objects(container["ports"]).forEach((port, j) => {
      const hostPort = num(port["hostPort"]);
      if ((options.resourceIsPod || hostPort !== 0) && hostPort !== num(port["containerPort"])) {
        errs.push(
          invalid(
            specPath.child("containers").index(i).child("ports").index(j).child("hostPort"),
            hostPort,
            "must match `containerPort` when `hostNetwork` is true",
          ),
        );
      }
    });
  });
  return errs;
}

function nameErrors(value: string, path: FieldPath, rule: (v: string) => string[]): FieldError[] {
  return value === "" ? [] : rule(value).map((msg) => invalid(path, value, msg));
}

/**
 * ValidatePodSpec. `podName` is the pod's own name (undefined for templates): generic ephemeral
 * volumes' claims are named after it.
 */
export function validatePodSpec(
  spec: Json,
  podName: string | undefined,
  path: FieldPath,
  options: PodValidationOptions,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!present(spec["terminationGracePeriodSeconds"])) errs.push(required(path.child("terminationGracePeriodSeconds")));
  const gracePeriod = present(spec["terminationGracePeriodSeconds"])
    ? num(spec["terminationGracePeriodSeconds"])
    : undefined;
  const volumes = validateVolumes(spec["volumes"], path.child("volumes"), podName, options);
  errs.push(...volumes.errors);
  const context = { volumes: volumes.sources, gracePeriod, options };
  errs.push(...validateContainers(spec["containers"], path.child("containers"), context));
  errs.push(
    ...validateInitContainers(spec["initContainers"], spec["containers"], path.child("initContainers"), context),
  );
  errs.push(...validateEphemeralContainers(spec, path.child("ephemeralContainers"), context));
  errs.push(...validateHostNetworkPorts(spec, path, options));

  const restartPolicy = str(spec["restartPolicy"]);
  if (restartPolicy === "") errs.push(required(path.child("restartPolicy")));
  else if (!RESTART_POLICIES.includes(restartPolicy)) {
    errs.push(notSupported(path.child("restartPolicy"), restartPolicy, RESTART_POLICIES));
  }
  const dnsPolicy = str(spec["dnsPolicy"]);
  if (dnsPolicy === "") errs.push(required(path.child("dnsPolicy")));
  else if (!DNS_POLICIES.includes(dnsPolicy)) errs.push(notSupported(path.child("dnsPolicy"), dnsPolicy, DNS_POLICIES));
  errs.push(...validateLabels(spec["nodeSelector"], path.child("nodeSelector")));
  errs.push(...validatePodSecurityContext(spec, path.child("securityContext"), options));
  errs.push(...validateAffinity(spec["affinity"], path.child("affinity"), options));
  errs.push(...validateDNSConfig(spec["dnsConfig"], dnsPolicy, path.child("dnsConfig")));
  errs.push(...validateReadinessGates(spec["readinessGates"], path.child("readinessGates")));
  errs.push(...validateSchedulingGates(spec["schedulingGates"], path.child("schedulingGates")));
  errs.push(
    ...validateTopologySpreadConstraints(
      spec["topologySpreadConstraints"],
      path.child("topologySpreadConstraints"),
      options,
    ),
  );
  errs.push(
    ...nameErrors(str(spec["serviceAccountName"]), path.child("serviceAccountName"), (v) =>
      nameIsDNSSubdomain(v, false),
    ),
  );
  errs.push(...nameErrors(str(spec["nodeName"]), path.child("nodeName"), (v) => nameIsDNSSubdomain(v, false)));
  if (present(spec["activeDeadlineSeconds"])) {
    const deadline = num(spec["activeDeadlineSeconds"]);
    if (deadline < 1 || deadline > MAX_INT32) {
      errs.push(invalid(path.child("activeDeadlineSeconds"), deadline, inclusiveRangeError(1, MAX_INT32)));
    }
  }
  errs.push(...nameErrors(str(spec["hostname"]), path.child("hostname"), isDNS1123Label));
  errs.push(...nameErrors(str(spec["subdomain"]), path.child("subdomain"), isDNS1123Label));
  errs.push(...validateTolerations(spec["tolerations"], path.child("tolerations")));
  errs.push(...validateHostAliases(spec["hostAliases"], path.child("hostAliases")));
  errs.push(
    ...nameErrors(str(spec["priorityClassName"]), path.child("priorityClassName"), (v) => nameIsDNSSubdomain(v, false)),
  );
  if (present(spec["runtimeClassName"])) {
    const runtimeClass = str(spec["runtimeClassName"]);
    for (const msg of nameIsDNSSubdomain(runtimeClass, false))
      errs.push(invalid(path.child("runtimeClassName"), runtimeClass, msg));
  }
  if (present(spec["preemptionPolicy"])) {
    const policy = str(spec["preemptionPolicy"]);
    if (policy === "") errs.push(required(path.child("preemptionPolicy")));
    else if (!PREEMPTION_POLICIES.includes(policy))
      errs.push(notSupported(path.child("preemptionPolicy"), policy, PREEMPTION_POLICIES));
  }
  if (present(spec["overhead"])) {
    errs.push(
      ...validateResourceRequirements({ limits: spec["overhead"] }, path.child("overhead"), {
        allowIndivisibleHugePagesValues: options.allowIndivisibleHugePagesValues,
      }),
    );
  }
  const os = obj(spec["os"]);
  if (os !== undefined) {
    const name = str(os["name"]);
    if (name === "") errs.push(required(path.child("os", "name"), "cannot be empty"));
    else if (!OS_NAMES.includes(name)) errs.push(notSupported(path.child("os"), name, OS_NAMES));
    else errs.push(...validateOSSpecific(spec, name, path));
  }
  return errs;
}

/**
 * GetValidationOptionsFromPodSpecAndMeta: 1.32's feature defaults, loosened for what the stored spec
 * (`old`) already holds.
 */
function specValidationOptions(oldSpec: Json | undefined, oldAnnotations: unknown): PodValidationOptions {
  if (oldSpec === undefined) return {};
  const sleepsZero = ["initContainers", "containers"].some((key) =>
    objects(oldSpec[key]).some((c) =>
      ["postStart", "preStop"].some((hook) => {
        const sleep = obj(obj(obj(c["lifecycle"])?.[hook])?.["sleep"]);
        return sleep !== undefined && num(sleep["seconds"]) === 0;
      }),
    ),
  );
  const nonLocalToken = objects(oldSpec["volumes"]).some((v) =>
    objects(obj(v["projected"])?.["sources"]).some((s) => {
      const token = obj(s["serviceAccountToken"]);
      return token !== undefined && validateLocalNonReservedPath(str(token["path"]), fieldPath("path")).length > 0;
    }),
  );
  const annotations = obj(oldAnnotations) ?? {};
  const oldCost = annotations[DELETION_COST_ANNOTATION];
  return {
    allowIndivisibleHugePagesValues: usesIndivisibleHugePages(containerResources(oldSpec)),
    allowInvalidLabelValueInSelector: hasInvalidLabelValueInAffinity(oldSpec["affinity"]),
    allowInvalidTopologySpreadConstraintLabelSelector: hasInvalidTopologySpreadSelector(
      oldSpec["topologySpreadConstraints"],
    ),
    allowNonLocalProjectedTokenPath: nonLocalToken,
    allowNamespacedSysctlsForHostNetAndHostIPC: hasHostNamespacedSysctl(oldSpec),
    allowPodLifecycleSleepActionZeroValue: sleepsZero,
    allowInvalidPodDeletionCost: oldCost !== undefined && !isValidDeletionCost(str(oldCost)),
  };
}

/** The options for validating `next`'s template given the stored `old` one (GetValidationOptionsFromPodTemplate). */
export function podTemplateValidationOptions(_next: unknown, old: unknown): PodValidationOptions {
  const template = obj(old);
  if (template === undefined) return {};
  return specValidationOptions(objOrEmpty(template["spec"]), undefined);
}

/** The options for a pod's spec given the stored pod, if any. */
export function podValidationOptions(old: Json | undefined): PodValidationOptions {
  const options =
    old === undefined ? {} : specValidationOptions(objOrEmpty(old["spec"]), objOrEmpty(old["metadata"])["annotations"]);
  return { ...options, resourceIsPod: true };
}

/** ValidatePodTemplateSpec: the template's labels and annotations, and its pod spec. */
export function validatePodTemplateSpec(
  template: unknown,
  path: FieldPath,
  options: PodValidationOptions = {},
): FieldError[] {
  const t = objOrEmpty(template);
  const meta = objOrEmpty(t["metadata"]);
  const spec = obj(t["spec"]) ?? DEFAULTED_EMPTY_SPEC;
  // Go reports the template's labels and annotations under the template's own path (no `metadata`).
  const errs = [
    ...validateLabels(meta["labels"], path.child("labels")),
    ...validateAnnotations(meta["annotations"], path.child("annotations")),
    ...validatePodSpecificAnnotations(meta["annotations"], spec, path.child("annotations"), options),
    ...validatePodSpec(spec, undefined, path.child("spec"), options),
    ...validateSeccompAnnotationsAndFields(meta, spec, path.child("spec")),
    ...validateAppArmorAnnotationsAndFields(meta, spec, path.child("spec")),
  ];
  if (objects(spec["ephemeralContainers"]).length > 0) {
    errs.push(forbidden(path.child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"));
  }
  return errs;
}

/**
 * validatePodMetadataAndSpec without the ObjectMeta (checked by the caller): the pod-specific
 * annotations, the spec, and what only a pod (not a template) is held to.
 */
export function validatePodMetadataAndSpec(pod: Json, options: PodValidationOptions): FieldError[] {
  const meta = objOrEmpty(pod["metadata"]);
  const spec = objOrEmpty(pod["spec"]);
  const specPath = fieldPath("spec");
  const errs = [
    ...validatePodSpecificAnnotations(meta["annotations"], spec, fieldPath("metadata", "annotations"), options),
    ...validatePodSpec(spec, str(meta["name"]), specPath, options),
  ];
  if (str(spec["serviceAccountName"]) === "") {
    objects(spec["volumes"]).forEach((volume, vi) => {
      objects(obj(volume["projected"])?.["sources"]).forEach((source, si) => {
        if (present(source["serviceAccountToken"])) {
          errs.push(
            forbidden(
              specPath.child("volumes").index(vi).child("projected", "sources").index(si).child("serviceAccountToken"),
              "must not be specified when serviceAccountName is not set",
            ),
          );
        }
      });
    });
  }
  for (const key of ["containers", "initContainers"]) {
    objects(spec[key]).forEach((c, i) => {
      errs.push(...validateImageWhitespace(c, specPath.child(key).index(i)));
    });
  }
  return errs;
}
