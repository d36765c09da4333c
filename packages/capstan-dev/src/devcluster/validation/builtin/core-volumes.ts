/**
 * A pod spec's volumes as kube-apiserver 1.32 validates them (core `ValidateVolumes`,
 * `validateVolumeSource` and its sources' validators): each named (a unique DNS-1123 label) with
 * exactly one source, each source's required fields, file modes, and the paths a volume writes
 * (`items[].path` relative, without `..`). Also the path rules container mounts share.
 *
 * Caveats: the `image` source (ImageVolume, alpha and off in 1.32) is dropped by kube-apiserver before
 * validation, so a volume holding only it has no source; clusterTrustBundle projections (alpha, off)
 * likewise count as no source. The in-tree azureDisk source is checked without its declarative
 * defaults (scheme-defaults.ts does not apply them), so its disk URI is only checked against a kind
 * the object gives.
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
import { goQuote } from "../go-format.ts";
import { byteLength, isDNS1123Label, isDNS1123Subdomain, nameIsDNSSubdomain } from "../names.ts";
import { validateAnnotations, validateLabels } from "../object-meta.ts";
import { VOLUME_FIELD_PATHS, validateObjectFieldSelector, validateResourceFieldSelector } from "./core-downward-api.ts";
import type { PodValidationOptions } from "./core-pod-options.ts";
import { validateClaimSpec } from "./core-pvc.ts";
import type { Json } from "./kind-validation.ts";
import { parseQuantity } from "./quantity.ts";
import { inclusiveRangeError } from "./value-formats.ts";
import { list, num, obj, objects, objOrEmpty, present, str } from "./zero-values.ts";

const MORE_THAN_ONE = "may not specify more than 1 volume type";
const FILE_MODE_ERROR = "must be a number between 0 and 0777 (octal), both inclusive";
const MAX_FILE_MODE = 0o777;
/** pdPartitionErrorMsg: Go words the 0-255 check as 1-255. */
const PARTITION_ERROR = inclusiveRangeError(1, 255);
const MAX_LUN = 255;
/** The shortest and longest projected service-account token lifetimes. */
const MIN_TOKEN_SECONDS = 10 * 60;
const MAX_TOKEN_SECONDS = 2 ** 32;
/** iSCSI: `<volume name>:<targetPortal>` names the initiator's session and must fit in 64 characters. */
const ISCSI_SESSION_MAX = 64;
const CSI_DRIVER_MAX_LENGTH = 63;

/** A valid volume's source, by volume name: what mounts and devices refer to. */
export type VolumeSources = Map<string, Json>;

/** validatePathNoBacksteps: no `..` element. */
export function validatePathNoBacksteps(target: string, path: FieldPath): FieldError[] {
  return target.split("/").includes("..") ? [invalid(path, target, "must not contain '..'")] : [];
}

/** validateLocalDescendingPath: relative, no `..` element. */
export function validateLocalDescendingPath(target: string, path: FieldPath): FieldError[] {
  const errs = target.startsWith("/") ? [invalid(path, target, "must be a relative path")] : [];
  return [...errs, ...validatePathNoBacksteps(target, path)];
}

/** ValidateLocalNonReservedPath: relative, no `..` element, not starting with `..`. */
export function validateLocalNonReservedPath(target: string, path: FieldPath): FieldError[] {
  const errs = validateLocalDescendingPath(target, path);
  if (target.startsWith("..") && !target.startsWith("../"))
    errs.push(invalid(path, target, "must not start with '..'"));
  return errs;
}

function validateMode(mode: unknown, path: FieldPath): FieldError[] {
  return typeof mode === "number" && (mode > MAX_FILE_MODE || mode < 0) ? [invalid(path, mode, FILE_MODE_ERROR)] : [];
}

function requiredString(source: Json, key: string, path: FieldPath, detail = ""): FieldError[] {
  return str(source[key]) === "" ? [required(path.child(key), detail)] : [];
}

/** validateKeyToPath: an item of a secret or configMap source. */
function validateKeyToPath(item: Json, path: FieldPath): FieldError[] {
  const errs = [...requiredString(item, "key", path), ...requiredString(item, "path", path)];
  errs.push(...validateLocalNonReservedPath(str(item["path"]), path.child("path")));
  errs.push(...validateMode(item["mode"], path.child("mode")));
  return errs;
}

function validateItems(source: Json, path: FieldPath): FieldError[] {
  return objects(source["items"]).flatMap((item, i) => validateKeyToPath(item, path.child("items").index(i)));
}

/** validateDownwardAPIVolumeFile: Go reports its errors on the source's path, not the item's. */
function validateDownwardAPIFile(file: Json, path: FieldPath): FieldError[] {
  const errs = requiredString(file, "path", path);
  errs.push(...validateLocalNonReservedPath(str(file["path"]), path.child("path")));
  const fieldRef = obj(file["fieldRef"]);
  const resourceFieldRef = obj(file["resourceFieldRef"]);
  if (fieldRef !== undefined) {
    errs.push(...validateObjectFieldSelector(fieldRef, VOLUME_FIELD_PATHS, path.child("fieldRef")));
    if (resourceFieldRef !== undefined) {
      errs.push(invalid(path, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"));
    }
  } else if (resourceFieldRef !== undefined) {
    errs.push(...validateResourceFieldSelector(resourceFieldRef, path.child("resourceFieldRef"), true));
  } else {
    errs.push(required(path, "one of fieldRef and resourceFieldRef is required"));
  }
  errs.push(...validateMode(file["mode"], path.child("mode")));
  return errs;
}

/** validateProjectionSources: one kind per source, no two files at one path. */
function validateProjected(source: Json, path: FieldPath, options: PodValidationOptions): FieldError[] {
  const errs = validateMode(source["defaultMode"], path.child("defaultMode"));
  const paths = new Set<string>();
  const claim = (p: string, badValue: string) => {
    if (p === "") return;
    if (paths.has(p)) errs.push(invalid(path, badValue, "conflicting duplicate paths"));
    else paths.add(p);
  };
  objects(source["sources"]).forEach((projection, i) => {
    const at = path.child("sources").index(i);
    let kinds = 0;
    for (const key of ["secret", "configMap"] as const) {
      const ref = obj(projection[key]);
      if (ref === undefined) continue;
      kinds++;
      errs.push(...requiredString(ref, "name", at.child(key)));
      objects(ref["items"]).forEach((item, j) => {
        errs.push(...validateKeyToPath(item, at.child(key).child("items").index(j)));
        claim(str(item["path"]), str(ref["name"]));
      });
    }
    const downward = obj(projection["downwardAPI"]);
    if (downward !== undefined) {
      kinds++;
      for (const file of objects(downward["items"])) {
        errs.push(...validateDownwardAPIFile(file, at.child("downwardAPI")));
        claim(str(file["path"]), str(file["path"]));
      }
    }
    const token = obj(projection["serviceAccountToken"]);
    if (token !== undefined) {
      kinds++;
      const seconds = num(token["expirationSeconds"]);
      const secondsPath = at.child("serviceAccountToken").child("expirationSeconds");
      if (seconds < MIN_TOKEN_SECONDS) {
        errs.push(invalid(secondsPath, seconds, "may not specify a duration less than 10 minutes"));
      }
      if (seconds > MAX_TOKEN_SECONDS) {
        errs.push(invalid(secondsPath, seconds, "may not specify a duration larger than 2^32 seconds"));
      }
      // Go reports the token's path on the projected source's path.
      const tokenPath = str(token["path"]);
      if (tokenPath === "") errs.push(required(path.child("path")));
      else if (!options.allowNonLocalProjectedTokenPath) {
        errs.push(...validateLocalNonReservedPath(tokenPath, path.child("path")));
      }
    }
    if (kinds > 1) errs.push(forbidden(at, "may not specify more than 1 volume type per source"));
  });
  return errs;
}

/** ValidateTemplateObjectMeta: a claim template's metadata holds labels and annotations only. */
function validateTemplateObjectMeta(meta: Json, path: FieldPath): FieldError[] {
  const errs = [...validateAnnotations(meta["annotations"], path.child("annotations"))];
  errs.push(...validateLabels(meta["labels"], path.child("labels")));
  // ObjectMeta's other fields in Go struct order, named as validateFieldAllowList lower-cases them.
  const others: Array<[string, string]> = [
    ["name", "name"],
    ["generateName", "generateName"],
    ["namespace", "namespace"],
    ["selfLink", "selfLink"],
    ["uid", "uID"],
    ["resourceVersion", "resourceVersion"],
    ["generation", "generation"],
    ["creationTimestamp", "creationTimestamp"],
    ["deletionTimestamp", "deletionTimestamp"],
    ["deletionGracePeriodSeconds", "deletionGracePeriodSeconds"],
    ["ownerReferences", "ownerReferences"],
    ["finalizers", "finalizers"],
    ["managedFields", "managedFields"],
  ];
  for (const [key, goName] of others) {
    const value = meta[key];
    const set = present(value) && value !== "" && value !== 0 && !(Array.isArray(value) && value.length === 0);
    if (set) errs.push(forbidden(path.child(goName), "cannot be set"));
  }
  return errs;
}

const IQN = /iqn\.\d{4}-\d{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\t\n\f\r ]+)$/;
const EUI = /^eui.[A-Za-z0-9]{16}$/;
const NAA = /^naa.[A-Za-z0-9]{32}$/;

function iscsiNameErrors(value: string, path: FieldPath, prefixMessage: string): FieldError[] {
  if (!value.startsWith("iqn") && !value.startsWith("eui") && !value.startsWith("naa")) {
    return [invalid(path, value, prefixMessage)];
  }
  const pattern = value.startsWith("iqn") ? IQN : value.startsWith("eui") ? EUI : NAA;
  return pattern.test(value) ? [] : [invalid(path, value, "must be valid format")];
}

function validateISCSI(iscsi: Json, path: FieldPath): FieldError[] {
  const errs = requiredString(iscsi, "targetPortal", path);
  const iqn = str(iscsi["iqn"]);
  if (iqn === "") errs.push(required(path.child("iqn")));
  else errs.push(...iscsiNameErrors(iqn, path.child("iqn"), "must be valid format starting with iqn, eui, or naa"));
  const lun = num(iscsi["lun"]);
  if (lun < 0 || lun > MAX_LUN) errs.push(invalid(path.child("lun"), lun, inclusiveRangeError(0, MAX_LUN)));
  if ((iscsi["chapAuthDiscovery"] === true || iscsi["chapAuthSession"] === true) && !present(iscsi["secretRef"])) {
    errs.push(required(path.child("secretRef")));
  }
  if (present(iscsi["initiatorName"])) {
    const initiator = str(iscsi["initiatorName"]);
    errs.push(
      ...iscsiNameErrors(initiator, path.child("initiatorname"), "must be valid format starting with iqn, eui, or naa"),
    );
  }
  return errs;
}

function validateFC(fc: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const wwns = list(fc["targetWWNs"]);
  const wwids = list(fc["wwids"]);
  if (wwns.length < 1 && wwids.length < 1) {
    errs.push(required(path.child("targetWWNs"), "must specify either targetWWNs or wwids, but not both"));
  }
  if (wwns.length !== 0 && wwids.length !== 0) {
    errs.push(invalid(path.child("targetWWNs"), wwns, "targetWWNs and wwids can not be specified simultaneously"));
  }
  if (wwns.length !== 0) {
    if (!present(fc["lun"])) errs.push(required(path.child("lun"), "lun is required if targetWWNs is specified"));
    else if (num(fc["lun"]) < 0 || num(fc["lun"]) > MAX_LUN) {
      errs.push(invalid(path.child("lun"), num(fc["lun"]), inclusiveRangeError(0, MAX_LUN)));
    }
  }
  return errs;
}

/** net.SplitHostPort's acceptance: `host:port` or `[v6]:port`, one colon outside brackets. */
function isHostPort(pair: string): boolean {
  return /^(\[[^\]]*\]|[^:[\]]*):[^:[\]]*$/.test(pair);
}

function validateQuobyte(quobyte: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const registry = str(quobyte["registry"]);
  const detail = "must be a host:port pair or multiple pairs separated by commas";
  if (registry === "") errs.push(required(path.child("registry"), detail));
  else if (byteLength(str(quobyte["tenant"])) >= 65) {
    errs.push(required(path.child("tenant"), "must be a UUID and may not exceed a length of 64 characters"));
  } else {
    for (const pair of registry.split(","))
      if (!isHostPort(pair)) errs.push(invalid(path.child("registry"), registry, detail));
  }
  errs.push(...requiredString(quobyte, "volume", path));
  return errs;
}

function validateFlocker(flocker: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(flocker["datasetName"]);
  const uuid = str(flocker["datasetUUID"]);
  if (name === "" && uuid === "") errs.push(required(path, "one of datasetName and datasetUUID is required"));
  if (name !== "" && uuid !== "") {
    errs.push(invalid(path, "resource", "datasetName and datasetUUID can not be specified simultaneously"));
  }
  if (name.includes("/")) errs.push(invalid(path.child("datasetName"), name, "must not contain '/'"));
  return errs;
}

function validateFlex(flex: Json, path: FieldPath): FieldError[] {
  const errs = requiredString(flex, "driver", path);
  for (const key of Object.keys(objOrEmpty(flex["options"]))) {
    const slash = key.indexOf("/");
    const normalized = `.${(slash === -1 ? key : key.slice(0, slash)).toLowerCase()}`;
    if (normalized.endsWith(".kubernetes.io") || normalized.endsWith(".k8s.io")) {
      errs.push(invalid(path.child("options").key(key), key, "kubernetes.io and k8s.io namespaces are reserved"));
    }
  }
  return errs;
}

const AZURE_CACHING_MODES = ["None", "ReadOnly", "ReadWrite"];
const AZURE_DISK_KINDS = ["Dedicated", "Managed", "Shared"];

function validateAzureDisk(disk: Json, path: FieldPath): FieldError[] {
  const errs = [...requiredString(disk, "diskName", path), ...requiredString(disk, "diskURI", path)];
  if (present(disk["cachingMode"]) && !AZURE_CACHING_MODES.includes(str(disk["cachingMode"]))) {
    errs.push(notSupported(path.child("cachingMode"), str(disk["cachingMode"]), AZURE_CACHING_MODES));
  }
  if (present(disk["kind"])) {
    const kind = str(disk["kind"]);
    const uri = str(disk["diskURI"]);
    if (!AZURE_DISK_KINDS.includes(kind)) errs.push(notSupported(path.child("kind"), kind, AZURE_DISK_KINDS));
    if (kind === "Managed" && !uri.startsWith("/subscriptions/")) {
      errs.push(
        notSupported(path.child("diskURI"), uri, [
          "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}",
        ]),
      );
    }
    if (kind !== "Managed" && !uri.startsWith("https://")) {
      errs.push(
        notSupported(path.child("diskURI"), uri, [
          "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd",
        ]),
      );
    }
  }
  return errs;
}

function validateStorageOS(storageos: Json, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const volumeName = str(storageos["volumeName"]);
  if (volumeName === "") errs.push(required(path.child("volumeName")));
  else for (const msg of isDNS1123Label(volumeName)) errs.push(invalid(path.child("volumeName"), volumeName, msg));
  const namespace = str(storageos["volumeNamespace"]);
  if (namespace !== "") {
    for (const msg of isDNS1123Label(namespace)) errs.push(invalid(path.child("volumeNamespace"), namespace, msg));
  }
  const secretRef = obj(storageos["secretRef"]);
  if (secretRef && str(secretRef["name"]) === "") errs.push(required(path.child("secretRef", "name")));
  return errs;
}

/** ValidateCSIDriverName. */
function validateCSIDriverName(driver: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (driver === "") errs.push(required(path));
  if (byteLength(driver) > CSI_DRIVER_MAX_LENGTH) errs.push(tooLong(path, CSI_DRIVER_MAX_LENGTH));
  for (const msg of isDNS1123Subdomain(driver.toLowerCase())) errs.push(invalid(path, driver, msg));
  return errs;
}

function validateCSI(csi: Json, path: FieldPath): FieldError[] {
  const errs = validateCSIDriverName(str(csi["driver"]), path.child("driver"));
  const secretRef = obj(csi["nodePublishSecretRef"]);
  if (secretRef !== undefined) {
    const name = str(secretRef["name"]);
    if (name === "") errs.push(required(path.child("nodePublishSecretRef", "name")));
    // Go reports a bad secret name on csi.name.
    else for (const msg of nameIsDNSSubdomain(name, false)) errs.push(invalid(path.child("name"), name, msg));
  }
  return errs;
}

function validateEphemeral(ephemeral: Json, path: FieldPath): FieldError[] {
  const template = obj(ephemeral["volumeClaimTemplate"]);
  const at = path.child("volumeClaimTemplate");
  if (template === undefined) return [required(at)];
  const spec = objOrEmpty(template["spec"]);
  return [
    ...validateTemplateObjectMeta(objOrEmpty(template["metadata"]), at.child("metadata")),
    ...validateClaimSpec(spec, at.child("spec"), {
      allowInvalidLabelValueInSelector: false,
    }),
  ];
}

type SourceCheck = (source: Json, path: FieldPath, options: PodValidationOptions) => FieldError[];

/**
 * The sources in validateVolumeSource's order: JSON name, the name Go gives a second source's
 * Forbidden path (it spells two of them its own way), the path its own checks use, and the checks.
 */
const SOURCES: ReadonlyArray<readonly [string, string, string, SourceCheck]> = [
  [
    "emptyDir",
    "emptyDir",
    "emptyDir",
    (s, p) => {
      const limit = parseQuantity(s["sizeLimit"]);
      return limit !== undefined && limit.sign < 0
        ? [forbidden(p.child("sizeLimit"), "SizeLimit field must be a valid resource quantity")]
        : [];
    },
  ],
  [
    "hostPath",
    "hostPath",
    "hostPath",
    (s, p) => {
      const hostPath = str(s["path"]);
      if (hostPath === "") return [required(p.child("path"))];
      const errs = validatePathNoBacksteps(hostPath, p.child("path"));
      if (present(s["type"]) && !HOST_PATH_TYPES.includes(str(s["type"]))) {
        errs.push(notSupported(p.child("type"), str(s["type"]), HOST_PATH_TYPES));
      }
      return errs;
    },
  ],
  [
    "gitRepo",
    "gitRepo",
    "gitRepo",
    (s, p) => [
      ...requiredString(s, "repository", p),
      ...validateLocalDescendingPath(str(s["directory"]), p.child("directory")),
    ],
  ],
  ["gcePersistentDisk", "gcePersistentDisk", "persistentDisk", (s, p) => validateDisk(s, p, "pdName")],
  ["awsElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore", (s, p) => validateDisk(s, p, "volumeID")],
  [
    "secret",
    "secret",
    "secret",
    (s, p) => [
      ...requiredString(s, "secretName", p),
      ...validateMode(s["defaultMode"], p.child("defaultMode")),
      ...validateItems(s, p),
    ],
  ],
  [
    "nfs",
    "nfs",
    "nfs",
    (s, p) => {
      const errs = [...requiredString(s, "server", p), ...requiredString(s, "path", p)];
      if (!str(s["path"]).startsWith("/"))
        errs.push(invalid(p.child("path"), str(s["path"]), "must be an absolute path"));
      return errs;
    },
  ],
  ["iscsi", "iscsi", "iscsi", (s, p) => validateISCSI(s, p)],
  [
    "glusterfs",
    "glusterfs",
    "glusterfs",
    (s, p) => [...requiredString(s, "endpoints", p), ...requiredString(s, "path", p)],
  ],
  ["flocker", "flocker", "flocker", (s, p) => validateFlocker(s, p)],
  [
    "persistentVolumeClaim",
    "persistentVolumeClaim",
    "persistentVolumeClaim",
    (s, p) => requiredString(s, "claimName", p),
  ],
  [
    "rbd",
    "rbd",
    "rbd",
    (s, p) => [
      ...(list(s["monitors"]).length === 0 ? [required(p.child("monitors"))] : []),
      ...requiredString(s, "image", p),
    ],
  ],
  [
    "cinder",
    "cinder",
    "cinder",
    (s, p) => {
      const errs = requiredString(s, "volumeID", p);
      const secretRef = obj(s["secretRef"]);
      if (secretRef && str(secretRef["name"]) === "") errs.push(required(p.child("secretRef", "name")));
      return errs;
    },
  ],
  ["cephfs", "cephFS", "cephfs", (s, p) => (list(s["monitors"]).length === 0 ? [required(p.child("monitors"))] : [])],
  ["quobyte", "quobyte", "quobyte", (s, p) => validateQuobyte(s, p)],
  [
    "downwardAPI",
    "downwarAPI",
    "downwardAPI",
    (s, p) => [
      ...validateMode(s["defaultMode"], p.child("defaultMode")),
      ...objects(s["items"]).flatMap((file) => validateDownwardAPIFile(file, p)),
    ],
  ],
  ["fc", "fc", "fc", (s, p) => validateFC(s, p)],
  ["flexVolume", "flexVolume", "flexVolume", (s, p) => validateFlex(s, p)],
  [
    "configMap",
    "configMap",
    "configMap",
    (s, p) => [
      ...requiredString(s, "name", p),
      ...validateMode(s["defaultMode"], p.child("defaultMode")),
      ...validateItems(s, p),
    ],
  ],
  [
    "azureFile",
    "azureFile",
    "azureFile",
    (s, p) => [...requiredString(s, "secretName", p), ...requiredString(s, "shareName", p)],
  ],
  ["vsphereVolume", "vsphereVolume", "vsphereVolume", (s, p) => requiredString(s, "volumePath", p)],
  ["photonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk", (s, p) => requiredString(s, "pdID", p)],
  ["portworxVolume", "portworxVolume", "portworxVolume", (s, p) => requiredString(s, "volumeID", p)],
  ["azureDisk", "azureDisk", "azureDisk", (s, p) => validateAzureDisk(s, p)],
  ["storageos", "storageos", "storageos", (s, p) => validateStorageOS(s, p)],
  ["projected", "projected", "projected", validateProjected],
  [
    "scaleIO",
    "scaleIO",
    "scaleIO",
    (s, p) => [
      ...requiredString(s, "gateway", p),
      ...requiredString(s, "system", p),
      ...requiredString(s, "volumeName", p),
    ],
  ],
  ["csi", "csi", "csi", (s, p) => validateCSI(s, p)],
  ["ephemeral", "ephemeral", "ephemeral", (s, p) => validateEphemeral(s, p)],
];

/** supportedHostPathTypes, sorted ("" is an unset type). */
const HOST_PATH_TYPES = [
  "",
  "BlockDevice",
  "CharDevice",
  "Directory",
  "DirectoryOrCreate",
  "File",
  "FileOrCreate",
  "Socket",
];

function validateDisk(source: Json, path: FieldPath, idKey: string): FieldError[] {
  const errs = requiredString(source, idKey, path);
  const partition = num(source["partition"]);
  if (partition < 0 || partition > MAX_LUN) errs.push(invalid(path.child("partition"), partition, PARTITION_ERROR));
  return errs;
}

/** validateVolumeSource: exactly one source, and its own rules. */
function validateVolumeSource(
  volume: Json,
  path: FieldPath,
  volumeName: string,
  podName: string | undefined,
  options: PodValidationOptions,
): FieldError[] {
  const errs: FieldError[] = [];
  let sources = 0;
  for (const [key, forbiddenName, checkName, check] of SOURCES) {
    const source = obj(volume[key]);
    if (source === undefined) continue;
    if (sources > 0) {
      errs.push(forbidden(path.child(forbiddenName), MORE_THAN_ONE));
      continue;
    }
    sources++;
    errs.push(...check(source, path.child(checkName), options));
    if (key === "iscsi" && present(source["initiatorName"])) {
      const session = `${volumeName}:${str(source["targetPortal"])}`;
      if (byteLength(session) > ISCSI_SESSION_MAX) {
        errs.push(
          invalid(
            path.child("name"),
            volumeName,
            "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.",
          ),
        );
      }
    }
    if (key === "ephemeral" && podName !== undefined && podName !== "" && volumeName !== "") {
      // The claim a generic ephemeral volume creates is named <pod>-<volume>.
      const claimName = `${podName}-${volumeName}`;
      for (const msg of nameIsDNSSubdomain(claimName, false)) {
        errs.push(invalid(path.child("name"), volumeName, `PVC name ${goQuote(claimName)}: ${msg}`));
      }
    }
  }
  if (sources === 0) errs.push(required(path, "must specify a volume type"));
  return errs;
}

/**
 * ValidateVolumes: each volume's source, then its name (required, a DNS-1123 label, unique). Returns
 * the valid volumes by name, which container mounts are checked against. `podName` is the pod's
 * name (undefined for templates): generic ephemeral volumes' claims are named after it.
 */
export function validateVolumes(
  volumes: unknown,
  path: FieldPath,
  podName: string | undefined,
  options: PodValidationOptions,
): { sources: VolumeSources; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const sources: VolumeSources = new Map();
  const items = objects(volumes);
  const createdClaims = new Set<string>();
  if (podName) {
    for (const volume of items) if (obj(volume["ephemeral"])) createdClaims.add(`${podName}-${str(volume["name"])}`);
  }
  items.forEach((volume, i) => {
    const at = path.index(i);
    const name = str(volume["name"]);
    const el = validateVolumeSource(volume, at, name, podName, options);
    if (name === "") el.push(required(at.child("name")));
    else for (const msg of isDNS1123Label(name)) el.push(invalid(at.child("name"), name, msg));
    if (sources.has(name)) el.push(duplicate(at.child("name"), name));
    if (el.length === 0) sources.set(name, volume);
    else errors.push(...el);
    const claim = obj(volume["persistentVolumeClaim"]);
    if (claim && createdClaims.has(str(claim["claimName"]))) {
      errors.push(
        invalid(
          at.child("persistentVolumeClaim").child("claimName"),
          str(claim["claimName"]),
          "must not reference a PVC that gets created for an ephemeral volume",
        ),
      );
    }
  });
  return { sources, errors };
}
