/**
 * A pod spec's containers as kube-apiserver 1.32 validates them (core `validateContainers`,
 * `validateInitContainers`, `validateEphemeralContainers`, `validateContainerCommon` and what it
 * calls): names (DNS-1123 labels, unique across containers and init containers), images, ports,
 * environment, mounts and devices against the pod's volumes, pull policy, resources, security
 * context; probes and lifecycle hooks for regular containers and sidecars (init containers with
 * restartPolicy Always, SidecarContainers being on in 1.32).
 *
 * Caveats: resizePolicy (InPlacePodVerticalScaling, alpha and off in 1.32) and resource claims
 * (DynamicResourceAllocation, off) are dropped by kube-apiserver before validation and not checked.
 */
import {
  duplicate,
  type FieldError,
  type FieldPath,
  forbidden,
  invalid,
  notFound,
  notSupported,
  required,
} from "../field-errors.ts";
import { isDNS1123Label, nameIsDNSSubdomain } from "../names.ts";
import { ENV_FIELD_PATHS, validateObjectFieldSelector, validateResourceFieldSelector } from "./core-downward-api.ts";
import type { PodValidationOptions } from "./core-pod-options.ts";
import { validateLifecycle, validateProbes } from "./core-probes.ts";
import { validateResourceRequirements } from "./core-resources.ts";
import { validateContainerSecurityContext } from "./core-security-context.ts";
import { type VolumeSources, validateLocalDescendingPath, validatePathNoBacksteps } from "./core-volumes.ts";
import type { Json } from "./kind-validation.ts";
import { isConfigMapKey, isRelaxedEnvVarName, isValidPortName, isValidPortNum } from "./value-formats.ts";
import { num, obj, objects, objOrEmpty, present, str } from "./zero-values.ts";

/** supportedPortProtocols, sorted. */
const PROTOCOLS = ["SCTP", "TCP", "UDP"];
/** supportedPullPolicies, sorted. */
const PULL_POLICIES = ["Always", "IfNotPresent", "Never"];
const TERMINATION_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"];
/** supportedMountPropagations, sorted. */
const MOUNT_PROPAGATIONS = ["Bidirectional", "HostToContainer", "None"];
/** The RecursiveReadOnly modes, sorted. */
const RECURSIVE_READ_ONLY = ["Disabled", "Enabled", "IfPossible"];

/** What a container is checked against: the pod's valid volumes, grace period and options. */
export interface ContainerContext {
  readonly volumes: VolumeSources;
  readonly gracePeriod: number | undefined;
  readonly options: PodValidationOptions;
}

/** validateContainerPorts: names (IANA_SVC_NAME, unique), container and host port numbers, protocol. */
function validatePorts(ports: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  objects(ports).forEach((port, i) => {
    const at = path.index(i);
    const name = str(port["name"]);
    if (name !== "") {
      const problems = isValidPortName(name);
      if (problems.length > 0) for (const msg of problems) errs.push(invalid(at.child("name"), name, msg));
      else if (names.has(name)) errs.push(duplicate(at.child("name"), name));
      else names.add(name);
    }
    const containerPort = num(port["containerPort"]);
    if (containerPort === 0) errs.push(required(at.child("containerPort")));
    else
      for (const msg of isValidPortNum(containerPort))
        errs.push(invalid(at.child("containerPort"), containerPort, msg));
    const hostPort = num(port["hostPort"]);
    if (hostPort !== 0)
      for (const msg of isValidPortNum(hostPort)) errs.push(invalid(at.child("hostPort"), hostPort, msg));
    const protocol = str(port["protocol"]);
    if (protocol === "") errs.push(required(at.child("protocol")));
    else if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(at.child("protocol"), protocol, PROTOCOLS));
  });
  return errs;
}

/** validateConfigMapKeySelector / validateSecretKeySelector: the name as a subdomain (empty too), a key. */
function validateKeySelector(selector: Json, path: FieldPath): FieldError[] {
  const name = str(selector["name"]);
  const errs = nameIsDNSSubdomain(name, false).map((msg) => invalid(path.child("name"), name, msg));
  const key = str(selector["key"]);
  if (key === "") errs.push(required(path.child("key")));
  else for (const msg of isConfigMapKey(key)) errs.push(invalid(path.child("key"), key, msg));
  return errs;
}

/** validateEnvVarValueFrom: exactly one source, and no value beside it. */
function validateValueFrom(env: Json, path: FieldPath): FieldError[] {
  const valueFrom = obj(env["valueFrom"]);
  if (valueFrom === undefined) return [];
  const errs: FieldError[] = [];
  let sources = 0;
  const fieldRef = obj(valueFrom["fieldRef"]);
  if (fieldRef !== undefined) {
    sources++;
    errs.push(...validateObjectFieldSelector(fieldRef, ENV_FIELD_PATHS, path.child("fieldRef")));
  }
  const resourceFieldRef = obj(valueFrom["resourceFieldRef"]);
  if (resourceFieldRef !== undefined) {
    sources++;
    errs.push(...validateResourceFieldSelector(resourceFieldRef, path.child("resourceFieldRef"), false));
  }
  for (const key of ["configMapKeyRef", "secretKeyRef"]) {
    const selector = obj(valueFrom[key]);
    if (selector === undefined) continue;
    sources++;
    errs.push(...validateKeySelector(selector, path.child(key)));
  }
  if (sources === 0) {
    errs.push(
      invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"),
    );
  } else if (str(env["value"]) !== "") {
    errs.push(invalid(path, "", "may not be specified when `value` is not empty"));
  } else if (sources > 1) {
    errs.push(invalid(path, "", "may not have more than one field specified at a time"));
  }
  return errs;
}

/** ValidateEnv: names (printable ASCII but `=`, RelaxedEnvironmentVariableValidation being on) and sources. */
function validateEnv(env: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  objects(env).forEach((variable, i) => {
    const at = path.index(i);
    const name = str(variable["name"]);
    if (name === "") errs.push(required(at.child("name")));
    else for (const msg of isRelaxedEnvVarName(name)) errs.push(invalid(at.child("name"), name, msg));
    errs.push(...validateValueFrom(variable, at.child("valueFrom")));
  });
  return errs;
}

/** ValidateEnvFrom: prefixes, and one of configMapRef or secretRef (Go reports a count on the list). */
function validateEnvFrom(envFrom: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  objects(envFrom).forEach((source, i) => {
    const at = path.index(i);
    const prefix = str(source["prefix"]);
    if (prefix !== "")
      for (const msg of isRelaxedEnvVarName(prefix)) errs.push(invalid(at.child("prefix"), prefix, msg));
    let sources = 0;
    for (const key of ["configMapRef", "secretRef"]) {
      const ref = obj(source[key]);
      if (ref === undefined) continue;
      sources++;
      const name = str(ref["name"]);
      // Go checks these names as prefixes (a trailing dash allowed).
      if (name === "") errs.push(required(at.child(key, "name")));
      else for (const msg of nameIsDNSSubdomain(name, true)) errs.push(invalid(at.child(key, "name"), name, msg));
    }
    if (sources === 0) errs.push(invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"));
    else if (sources > 1) errs.push(invalid(path, "", "may not have more than one field specified at a time"));
  });
  return errs;
}

/** Whether a volume source gives a block device (a claim, or a generic ephemeral volume). */
function isClaimSource(volume: Json): boolean {
  return obj(volume["persistentVolumeClaim"]) !== undefined || obj(volume["ephemeral"]) !== undefined;
}

/** ValidateVolumeMounts: each mount names a valid volume, a unique path, sub-paths inside the volume. */
function validateVolumeMounts(container: Json, volumes: VolumeSources, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const devicePaths = new Map<string, string>();
  for (const device of objects(container["volumeDevices"]))
    devicePaths.set(str(device["name"]), str(device["devicePath"]));
  const mountPoints = new Set<string>();
  const privileged = obj(container["securityContext"])?.["privileged"] === true;
  objects(container["volumeMounts"]).forEach((mount, i) => {
    const at = path.index(i);
    const name = str(mount["name"]);
    const mountPath = str(mount["mountPath"]);
    if (name === "") errs.push(required(at.child("name")));
    if (!volumes.has(name)) errs.push(notFound(at.child("name"), name));
    if (mountPath === "") errs.push(required(at.child("mountPath")));
    if (mountPoints.has(mountPath)) errs.push(invalid(at.child("mountPath"), mountPath, "must be unique"));
    mountPoints.add(mountPath);
    if (devicePaths.has(name)) errs.push(invalid(at.child("name"), name, "must not already exist in volumeDevices"));
    if ([...devicePaths.values()].includes(mountPath)) {
      errs.push(invalid(at.child("mountPath"), mountPath, "must not already exist as a path in volumeDevices"));
    }
    // Go reports sub-path and propagation problems on the list's path, not the mount's.
    const subPath = str(mount["subPath"]);
    const subPathExpr = str(mount["subPathExpr"]);
    if (subPath !== "") errs.push(...validateLocalDescendingPath(subPath, path.child("subPath")));
    if (subPathExpr !== "") {
      if (subPath !== "") {
        errs.push(invalid(at.child("subPathExpr"), subPathExpr, "subPathExpr and subPath are mutually exclusive"));
      }
      errs.push(...validateLocalDescendingPath(subPathExpr, path.child("subPathExpr")));
    }
    const propagation = mount["mountPropagation"];
    if (present(propagation)) {
      const mode = str(propagation);
      const at2 = path.child("mountPropagation");
      if (!MOUNT_PROPAGATIONS.includes(mode)) errs.push(notSupported(at2, mode, MOUNT_PROPAGATIONS));
      if (mode === "Bidirectional" && !privileged) {
        errs.push(forbidden(at2, "Bidirectional mount propagation is available only to privileged containers"));
      }
    }
    const recursive = mount["recursiveReadOnly"];
    if (present(recursive)) {
      const mode = str(recursive);
      const at2 = path.child("recursiveReadOnly");
      if (mode === "Enabled" || mode === "IfPossible") {
        if (mount["readOnly"] !== true) errs.push(forbidden(at2, "may only be specified when readOnly is true"));
        if (present(propagation) && str(propagation) !== "None") {
          errs.push(forbidden(at2, "may only be specified when mountPropagation is None or not specified"));
        }
      } else if (mode !== "Disabled") {
        errs.push(notSupported(at2, mode, RECURSIVE_READ_ONLY));
      }
    }
  });
  return errs;
}

/** ValidateVolumeDevices: each device names a claim volume, a unique path without `..`. */
function validateVolumeDevices(container: Json, volumes: VolumeSources, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const mountPaths = new Map<string, string>();
  for (const mount of objects(container["volumeMounts"])) mountPaths.set(str(mount["name"]), str(mount["mountPath"]));
  const devicePaths = new Set<string>();
  const deviceNames = new Set<string>();
  objects(container["volumeDevices"]).forEach((device, i) => {
    const at = path.index(i);
    const name = str(device["name"]);
    const devicePath = str(device["devicePath"]);
    const volume = volumes.get(name);
    if (name === "") errs.push(required(at.child("name")));
    if (deviceNames.has(name)) errs.push(invalid(at.child("name"), name, "must be unique"));
    if (volume !== undefined && !isClaimSource(volume)) {
      errs.push(
        invalid(
          at.child("name"),
          name,
          "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
        ),
      );
    }
    if (volume === undefined) errs.push(notFound(at.child("name"), name));
    if (devicePath === "") errs.push(required(at.child("devicePath")));
    if (devicePaths.has(devicePath)) errs.push(invalid(at.child("devicePath"), devicePath, "must be unique"));
    if (devicePath !== "" && validatePathNoBacksteps(devicePath, path).length > 0) {
      errs.push(invalid(at.child("devicePath"), devicePath, "can not contain backsteps ('..')"));
    } else {
      devicePaths.add(devicePath);
    }
    if (mountPaths.has(name)) errs.push(invalid(at.child("name"), name, "must not already exist in volumeMounts"));
    if ([...mountPaths.values()].includes(devicePath)) {
      errs.push(invalid(at.child("devicePath"), devicePath, "must not already exist as a path in volumeMounts"));
    }
    if (name !== "") deviceNames.add(name);
  });
  return errs;
}

/** validateContainerCommon: what every kind of container is checked for. */
function validateContainerCommon(container: Json, path: FieldPath, context: ContainerContext): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(container["name"]);
  if (name === "") errs.push(required(path.child("name")));
  else for (const msg of isDNS1123Label(name)) errs.push(invalid(path.child("name"), name, msg));
  if (str(container["image"]) === "") errs.push(required(path.child("image")));
  const messagePolicy = str(container["terminationMessagePolicy"]);
  if (messagePolicy === "") errs.push(required(path.child("terminationMessagePolicy")));
  else if (!TERMINATION_MESSAGE_POLICIES.includes(messagePolicy)) {
    errs.push(notSupported(path.child("terminationMessagePolicy"), messagePolicy, TERMINATION_MESSAGE_POLICIES));
  }
  errs.push(...validatePorts(container["ports"], path.child("ports")));
  errs.push(...validateEnv(container["env"], path.child("env")));
  errs.push(...validateEnvFrom(container["envFrom"], path.child("envFrom")));
  errs.push(...validateVolumeMounts(container, context.volumes, path.child("volumeMounts")));
  errs.push(...validateVolumeDevices(container, context.volumes, path.child("volumeDevices")));
  const pullPolicy = str(container["imagePullPolicy"]);
  if (pullPolicy === "") errs.push(required(path.child("imagePullPolicy")));
  else if (!PULL_POLICIES.includes(pullPolicy))
    errs.push(notSupported(path.child("imagePullPolicy"), pullPolicy, PULL_POLICIES));
  errs.push(
    ...validateResourceRequirements(container["resources"], path.child("resources"), {
      allowIndivisibleHugePagesValues: context.options.allowIndivisibleHugePagesValues,
    }),
  );
  errs.push(...validateContainerSecurityContext(obj(container["securityContext"]), path.child("securityContext")));
  return errs;
}

/** AccumulateUniqueHostPorts: no two ports of `containers` on one protocol/hostIP/hostPort. */
function hostPortConflicts(containers: readonly Json[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  containers.forEach((container, ci) => {
    objects(container["ports"]).forEach((port, pi) => {
      const hostPort = num(port["hostPort"]);
      if (hostPort === 0) return;
      const key = `${str(port["protocol"])}/${str(port["hostIP"])}/${hostPort}`;
      if (seen.has(key)) errs.push(duplicate(path.index(ci).child("ports").index(pi).child("hostPort"), key));
      else seen.add(key);
    });
  });
  return errs;
}

/** validateContainers: at least one; unique names; hooks and probes; no restartPolicy; host ports. */
export function validateContainers(containers: unknown, path: FieldPath, context: ContainerContext): FieldError[] {
  const items = objects(containers);
  if (items.length === 0) return [required(path)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  items.forEach((container, i) => {
    const at = path.index(i);
    errs.push(...validateContainerCommon(container, at, context));
    const name = str(container["name"]);
    if (names.has(name)) errs.push(duplicate(at.child("name"), name));
    else names.add(name);
    const lifecycle = obj(container["lifecycle"]);
    if (lifecycle !== undefined)
      errs.push(...validateLifecycle(lifecycle, context.gracePeriod, at.child("lifecycle"), context.options));
    errs.push(...validateProbes(container, context.gracePeriod, at, context.options));
    if (present(container["restartPolicy"])) {
      errs.push(forbidden(at.child("restartPolicy"), "may not be set for non-init containers"));
    }
  });
  errs.push(...hostPortConflicts(items, path));
  return errs;
}

const WITHOUT_RESTART_ALWAYS = "may not be set for init containers without restartPolicy=Always";

/** validateInitContainers: names unique with the regular ones; hooks and probes only for sidecars. */
export function validateInitContainers(
  initContainers: unknown,
  regular: unknown,
  path: FieldPath,
  context: ContainerContext,
): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set(objects(regular).map((c) => str(c["name"])));
  objects(initContainers).forEach((container, i) => {
    const at = path.index(i);
    errs.push(...validateContainerCommon(container, at, context));
    let restartAlways = false;
    if (present(container["restartPolicy"])) {
      const policy = str(container["restartPolicy"]);
      if (policy !== "Always") errs.push(notSupported(at.child("restartPolicy"), policy, ["Always"]));
      restartAlways = policy === "Always";
    }
    const name = str(container["name"]);
    if (names.has(name)) errs.push(duplicate(at.child("name"), name));
    else if (name !== "") names.add(name);
    // Init containers run one by one: Go checks each alone, as the only (index 0) container of the list.
    errs.push(...hostPortConflicts([container], path));
    const lifecycle = obj(container["lifecycle"]);
    if (restartAlways) {
      if (lifecycle !== undefined)
        errs.push(...validateLifecycle(lifecycle, context.gracePeriod, at.child("lifecycle"), context.options));
      errs.push(...validateProbes(container, context.gracePeriod, at, context.options));
    } else {
      if (lifecycle !== undefined) errs.push(forbidden(at.child("lifecycle"), WITHOUT_RESTART_ALWAYS));
      for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) {
        if (present(container[probe])) errs.push(forbidden(at.child(probe), WITHOUT_RESTART_ALWAYS));
      }
    }
  });
  return errs;
}

/** validateContainerOnlyForPod: a pod's (not a template's) image has no surrounding whitespace. */
export function validateImageWhitespace(container: Json, path: FieldPath): FieldError[] {
  const image = str(container["image"]);
  return image.trim() !== image
    ? [invalid(path.child("image"), image, "must not have leading or trailing whitespace")]
    : [];
}

/** EphemeralContainerCommon's fields in Go struct order, and whether an ephemeral container may set them. */
const EPHEMERAL_FIELDS: ReadonlyArray<readonly [string, boolean]> = [
  ["name", true],
  ["image", true],
  ["command", true],
  ["args", true],
  ["workingDir", true],
  ["ports", false],
  ["envFrom", true],
  ["env", true],
  ["resources", false],
  ["resizePolicy", false],
  ["restartPolicy", false],
  ["volumeMounts", true],
  ["volumeDevices", true],
  ["livenessProbe", false],
  ["readinessProbe", false],
  ["startupProbe", false],
  ["lifecycle", false],
  ["terminationMessagePath", true],
  ["terminationMessagePolicy", true],
  ["imagePullPolicy", true],
  ["securityContext", true],
  ["stdin", true],
  ["stdinOnce", true],
  ["tty", true],
];

/** Whether a decoded member differs from its Go zero value (an empty struct, list or map is zero). */
function isSet(value: unknown): boolean {
  if (value === undefined || value === null || value === "" || value === 0 || value === false) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.values(value as Json).some(isSet);
  return true;
}

/** validateEphemeralContainers: common rules, unique names, a known target, no pod-service fields. */
export function validateEphemeralContainers(spec: Json, path: FieldPath, context: ContainerContext): FieldError[] {
  const items = objects(spec["ephemeralContainers"]);
  if (items.length === 0) return [];
  const errs: FieldError[] = [];
  const others = new Set<string>();
  for (const key of ["containers", "initContainers"]) for (const c of objects(spec[key])) others.add(str(c["name"]));
  const names = new Set(others);
  items.forEach((container, i) => {
    const at = path.index(i);
    errs.push(...validateContainerCommon(container, at, context));
    errs.push(...validateImageWhitespace(container, at));
    const name = str(container["name"]);
    if (names.has(name)) errs.push(duplicate(at.child("name"), name));
    else names.add(name);
    const target = str(container["targetContainerName"]);
    if (target !== "" && !others.has(target)) errs.push(notFound(at.child("targetContainerName"), target));
    for (const [key, allowed] of EPHEMERAL_FIELDS) {
      if (!allowed && isSet(container[key]))
        errs.push(forbidden(at.child(key), "cannot be set for an Ephemeral Container"));
    }
    objects(container["volumeMounts"]).forEach((mount, j) => {
      for (const key of ["subPath", "subPathExpr"]) {
        if (str(mount[key]) !== "") {
          errs.push(
            forbidden(at.child("volumeMounts").index(j).child(key), "cannot be set for an Ephemeral Container"),
          );
        }
      }
    });
  });
  return errs;
}

/** The resource lists of every container of a spec (for the hugepages ratchet). */
export function containerResources(spec: Json): unknown[] {
  return ["containers", "initContainers"].flatMap((key) => objects(spec[key]).map((c) => objOrEmpty(c)["resources"]));
}
