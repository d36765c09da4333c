/**
 * Security contexts as kube-apiserver 1.32 validates them (core `validatePodSpecSecurityContext`,
 * `ValidateSecurityContext`, `validateSeccompProfileField`, `ValidateAppArmorProfileField`,
 * `validateSysctls`): user and group ids in range, seccomp and AppArmor profiles well formed, sysctl
 * names, and the combinations the kernel cannot honour.
 *
 * Assumptions: privileged containers are allowed, as kubeadm, kind and envtest start kube-apiserver
 * (`--allow-privileged=true`). Fields of alpha features that are off in 1.32 (procMount,
 * supplementalGroupsPolicy, seLinuxChangePolicy) are not checked: kube-apiserver drops them.
 */
import {
  duplicate,
  type FieldError,
  type FieldPath,
  forbidden,
  invalid,
  notSupported,
  required,
  tooLong,
} from "../field-errors.ts";
import { goQuote, withGoSharpV } from "../go-format.ts";
import { byteLength } from "../names.ts";
import type { PodValidationOptions } from "./core-pod-options.ts";
import { validateLocalDescendingPath } from "./core-volumes.ts";
import type { Json } from "./kind-validation.ts";
import { isValidUnixId } from "./value-formats.ts";
import { bool, list, num, obj, objects, present, str, strings } from "./zero-values.ts";

const SECCOMP_TYPES = ["Localhost", "RuntimeDefault", "Unconfined"];
const APPARMOR_TYPES = ["Localhost", "RuntimeDefault", "Unconfined"];
/** validFSGroupChangePolicies, sorted. */
const FS_GROUP_CHANGE_POLICIES = ["Always", "OnRootMismatch"];
/** PATH_MAX - 1: the longest AppArmor localhost profile name. */
const MAX_LOCALHOST_PROFILE_LENGTH = 4095;
const SYSCTL_MAX_LENGTH = 253;
const SYSCTL_SEGMENT = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?";
const SYSCTL_REGEX_TEXT = `^(${SYSCTL_SEGMENT}[\\./])*${SYSCTL_SEGMENT}$`;
const sysctlRe = new RegExp(SYSCTL_REGEX_TEXT);

/** A Go pointer as %#v prints it: its address differs on every run (made up here), nil stays nil. */
function goPointer(type: string, value: unknown): string {
  return present(value) ? `(*${type})(0xc000000000)` : `(*${type})(nil)`;
}

/** A core.SeccompProfile as %#v prints it. */
function seccompSharpV(profile: Json): object {
  return withGoSharpV(
    { ...profile },
    `core.SeccompProfile{Type:${goQuote(str(profile["type"]))}, LocalhostProfile:${goPointer("string", profile["localhostProfile"])}}`,
  );
}

/** A core.SecurityContext as %#v prints it (fields in the internal struct's order). */
function securityContextSharpV(sc: Json): object {
  const fields: Array<[string, string, string]> = [
    ["Capabilities", "capabilities", "core.Capabilities"],
    ["Privileged", "privileged", "bool"],
    ["SELinuxOptions", "seLinuxOptions", "core.SELinuxOptions"],
    ["WindowsOptions", "windowsOptions", "core.WindowsSecurityContextOptions"],
    ["RunAsUser", "runAsUser", "int64"],
    ["RunAsGroup", "runAsGroup", "int64"],
    ["RunAsNonRoot", "runAsNonRoot", "bool"],
    ["ReadOnlyRootFilesystem", "readOnlyRootFilesystem", "bool"],
    ["AllowPrivilegeEscalation", "allowPrivilegeEscalation", "bool"],
    ["ProcMount", "procMount", "core.ProcMountType"],
    ["SeccompProfile", "seccompProfile", "core.SeccompProfile"],
    ["AppArmorProfile", "appArmorProfile", "core.AppArmorProfile"],
  ];
  const text = fields.map(([goName, key, type]) => `${goName}:${goPointer(type, sc[key])}`).join(", ");
  return withGoSharpV({ ...sc }, `core.SecurityContext{${text}}`);
}

/** validateSeccompProfileField. */
function validateSeccompProfile(profile: Json | undefined, path: FieldPath): FieldError[] {
  if (profile === undefined) return [];
  const errs: FieldError[] = [];
  const type = str(profile["type"]);
  if (type === "") errs.push(required(path.child("type"), "type is required when seccompProfile is set"));
  else if (!SECCOMP_TYPES.includes(type)) errs.push(notSupported(path.child("type"), type, SECCOMP_TYPES));
  const localhost = profile["localhostProfile"];
  if (type === "Localhost") {
    if (!present(localhost)) {
      errs.push(required(path.child("localhostProfile"), "must be set when seccomp type is Localhost"));
    } else {
      errs.push(...validateLocalDescendingPath(str(localhost), path.child("localhostProfile")));
    }
  } else if (present(localhost)) {
    errs.push(
      invalid(path.child("localhostProfile"), seccompSharpV(profile), "can only be set when seccomp type is Localhost"),
    );
  }
  return errs;
}

/** ValidateAppArmorProfileField. */
function validateAppArmorProfile(profile: Json | undefined, path: FieldPath): FieldError[] {
  if (profile === undefined) return [];
  const errs: FieldError[] = [];
  const type = str(profile["type"]);
  const localhost = profile["localhostProfile"];
  switch (type) {
    case "Localhost":
      if (!present(localhost)) {
        errs.push(required(path.child("localhostProfile"), "must be set when AppArmor type is Localhost"));
      } else {
        const name = str(localhost);
        if (name.trim() !== name) {
          errs.push(invalid(path.child("localhostProfile"), name, "must not be padded with whitespace"));
        } else if (name === "") {
          errs.push(required(path.child("localhostProfile"), "must be set when AppArmor type is Localhost"));
        }
        if (byteLength(name) > MAX_LOCALHOST_PROFILE_LENGTH) {
          errs.push(tooLong(path.child("localhostProfile"), MAX_LOCALHOST_PROFILE_LENGTH));
        }
      }
      break;
    case "RuntimeDefault":
    case "Unconfined":
      if (present(localhost)) {
        errs.push(
          invalid(path.child("localhostProfile"), str(localhost), "can only be set when AppArmor type is Localhost"),
        );
      }
      break;
    case "":
      errs.push(required(path.child("type"), "type is required when appArmorProfile is set"));
      break;
    default:
      errs.push(notSupported(path.child("type"), type, APPARMOR_TYPES));
  }
  return errs;
}

function validateIds(sc: Json, keys: readonly string[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of keys) {
    if (!present(sc[key])) continue;
    const id = num(sc[key]);
    for (const msg of isValidUnixId(id)) errs.push(invalid(path.child(key), id, msg));
  }
  return errs;
}

/** utilsysctl.GetNamespace: which kernel namespace a sysctl belongs to (slash-separated names normalised). */
function sysctlNamespace(name: string): "ipc" | "net" | undefined {
  const firstSep = name.search(/[./]/);
  const normalized =
    firstSep !== -1 && name[firstSep] === "/" ? name.replace(/[./]/g, (c) => (c === "/" ? "." : "/")) : name;
  if (normalized === "kernel.sem") return "ipc";
  if (["kernel.shm", "kernel.msg", "fs.mqueue."].some((p) => normalized.startsWith(p))) return "ipc";
  if (normalized.startsWith("net.")) return "net";
  return undefined;
}

function validateSysctls(spec: Json, sc: Json, path: FieldPath, options: PodValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  objects(sc["sysctls"]).forEach((sysctl, i) => {
    const at = path.index(i).child("name");
    const name = str(sysctl["name"]);
    if (name === "") errs.push(required(at));
    else if (byteLength(name) > SYSCTL_MAX_LENGTH || !sysctlRe.test(name)) {
      errs.push(
        invalid(at, name, `must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_REGEX_TEXT}`),
      );
    } else if (seen.has(name)) {
      errs.push(duplicate(at, name));
    }
    if (!options.allowNamespacedSysctlsForHostNetAndHostIPC) {
      const ns = sysctlNamespace(name);
      if (bool(spec["hostNetwork"]) && ns === "net")
        errs.push(invalid(at, name, "may not be specified when 'hostNetwork' is true"));
      else if (bool(spec["hostIPC"]) && ns === "ipc")
        errs.push(invalid(at, name, "may not be specified when 'hostIPC' is true"));
    }
    seen.add(name);
  });
  return errs;
}

/** Whether a stored spec has a network or IPC sysctl on the host's namespace (an update may keep it). */
export function hasHostNamespacedSysctl(spec: Json): boolean {
  const sc = obj(spec["securityContext"]) ?? {};
  return objects(sc["sysctls"]).some((s) => {
    const ns = sysctlNamespace(str(s["name"]));
    return (bool(spec["hostNetwork"]) && ns === "net") || (bool(spec["hostIPC"]) && ns === "ipc");
  });
}

/**
 * validatePodSpecSecurityContext. The internal PodSecurityContext also holds the pod's hostPID and
 * shareProcessNamespace, so Go reports them under `securityContext`.
 */
export function validatePodSecurityContext(spec: Json, path: FieldPath, options: PodValidationOptions): FieldError[] {
  const sc = obj(spec["securityContext"]) ?? {};
  const errs = validateIds(sc, ["fsGroup", "runAsUser", "runAsGroup"], path);
  list(sc["supplementalGroups"]).forEach((gid, g) => {
    for (const msg of isValidUnixId(num(gid)))
      errs.push(invalid(path.child("supplementalGroups").index(g), num(gid), msg));
  });
  if (spec["shareProcessNamespace"] === true && bool(spec["hostPID"])) {
    errs.push(
      invalid(path.child("shareProcessNamespace"), true, "ShareProcessNamespace and HostPID cannot both be enabled"),
    );
  }
  if (list(sc["sysctls"]).length > 0) errs.push(...validateSysctls(spec, sc, path.child("sysctls"), options));
  if (present(sc["fsGroupChangePolicy"]) && !FS_GROUP_CHANGE_POLICIES.includes(str(sc["fsGroupChangePolicy"]))) {
    errs.push(
      notSupported(path.child("fsGroupChangePolicy"), str(sc["fsGroupChangePolicy"]), FS_GROUP_CHANGE_POLICIES),
    );
  }
  errs.push(...validateSeccompProfile(obj(sc["seccompProfile"]), path.child("seccompProfile")));
  errs.push(...validateAppArmorProfile(obj(sc["appArmorProfile"]), path.child("appArmorProfile")));
  return errs;
}

/** ValidateSecurityContext: a container's. */
export function validateContainerSecurityContext(sc: Json | undefined, path: FieldPath): FieldError[] {
  if (sc === undefined) return [];
  const errs = validateIds(sc, ["runAsUser", "runAsGroup"], path);
  errs.push(...validateSeccompProfile(obj(sc["seccompProfile"]), path.child("seccompProfile")));
  if (sc["allowPrivilegeEscalation"] === false) {
    if (sc["privileged"] === true) {
      errs.push(
        invalid(
          path,
          securityContextSharpV(sc),
          "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
        ),
      );
    }
    for (const cap of strings(obj(sc["capabilities"])?.["add"])) {
      if (cap === "CAP_SYS_ADMIN") {
        errs.push(
          invalid(
            path,
            securityContextSharpV(sc),
            "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
          ),
        );
      }
    }
  }
  errs.push(...validateAppArmorProfile(obj(sc["appArmorProfile"]), path.child("appArmorProfile")));
  return errs;
}

/** What a linux pod may not set (validateLinux), or a windows pod (validateWindows). */
export function validateOSSpecific(spec: Json, os: string, specPath: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const sc = obj(spec["securityContext"]) ?? {};
  // VisitContainersWithPath: init containers first.
  const containers = ["initContainers", "containers", "ephemeralContainers"].flatMap((key) =>
    objects(spec[key]).map((c, i) => [c, specPath.child(key).index(i)] as const),
  );
  if (os === "linux") {
    if (present(sc["windowsOptions"])) {
      errs.push(
        forbidden(specPath.child("securityContext", "windowsOptions"), "windows options cannot be set for a linux pod"),
      );
    }
    for (const [c, at] of containers) {
      if (present(obj(c["securityContext"])?.["windowsOptions"])) {
        errs.push(
          forbidden(at.child("securityContext", "windowsOptions"), "windows options cannot be set for a linux pod"),
        );
      }
    }
    return errs;
  }
  const windowsOnly = "cannot be set for a windows pod";
  const podFields: Array<[string, FieldPath]> = [
    ["appArmorProfile", specPath.child("securityContext", "appArmorProfile")],
    ["seLinuxOptions", specPath.child("securityContext", "seLinuxOptions")],
  ];
  for (const [key, at] of podFields) if (present(sc[key])) errs.push(forbidden(at, windowsOnly));
  if (present(spec["hostUsers"])) errs.push(forbidden(specPath.child("hostUsers"), windowsOnly));
  if (bool(spec["hostPID"])) errs.push(forbidden(specPath.child("hostPID"), windowsOnly));
  if (bool(spec["hostIPC"])) errs.push(forbidden(specPath.child("hostIPC"), windowsOnly));
  for (const key of ["seccompProfile", "fsGroup", "fsGroupChangePolicy"]) {
    if (present(sc[key])) errs.push(forbidden(specPath.child("securityContext", key), windowsOnly));
  }
  if (list(sc["sysctls"]).length > 0) errs.push(forbidden(specPath.child("securityContext", "sysctls"), windowsOnly));
  if (present(spec["shareProcessNamespace"]))
    errs.push(forbidden(specPath.child("shareProcessNamespace"), windowsOnly));
  for (const key of ["runAsUser", "runAsGroup", "supplementalGroups"]) {
    if (present(sc[key])) errs.push(forbidden(specPath.child("securityContext", key), windowsOnly));
  }
  for (const [c, at] of containers) {
    const csc = obj(c["securityContext"]);
    if (csc === undefined) continue;
    for (const key of [
      "appArmorProfile",
      "seLinuxOptions",
      "seccompProfile",
      "capabilities",
      "readOnlyRootFilesystem",
      "privileged",
      "allowPrivilegeEscalation",
      "procMount",
      "runAsUser",
      "runAsGroup",
    ]) {
      if (present(csc[key])) errs.push(forbidden(at.child("securityContext", key), windowsOnly));
    }
  }
  return errs;
}
