/**
 * The ServiceAccount admission plugin's defaulting of pods (plugin/pkg/admission/serviceaccount):
 * a pod created without `spec.serviceAccountName` runs as `default`, and core/v1's deprecated alias
 * `spec.serviceAccount` reads back as the same name (Convert_core_PodSpec_To_v1_PodSpec writes it
 * from serviceAccountName; the other way it is taken when serviceAccountName is empty).
 *
 * Expected flow: the object store runs this mutator on every write of a pod, before validation.
 *
 * Guarantees: mirror pods (annotation `kubernetes.io/config.mirror`) are left alone, as the plugin
 * leaves them; other kinds are untouched.
 *
 * Caveats: the plugin also refuses a pod whose ServiceAccount does not exist (403 after a few
 * retries) and mounts the `kube-api-access-*` projected token volume; neither is done here, so pods
 * can be created in a namespace before its `default` ServiceAccount exists, and no token volume
 * appears in their spec.
 */
import type { JsonObject, ServedResource } from "../registry/served-resource.ts";
import type { ObjectMutator } from "../rest/types.ts";

/** DefaultServiceAccountName. */
const DEFAULT_SERVICE_ACCOUNT_NAME = "default";
/** kubelet's ConfigMirrorAnnotationKey: pods the kubelet mirrors from static manifests. */
const MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror";

export const podServiceAccountMutator: ObjectMutator = (served: ServedResource, obj: JsonObject) => {
  if (served.group !== "" || served.plural !== "pods") return undefined;
  const spec = obj["spec"];
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) return undefined;
  const podSpec = spec as Record<string, unknown>;
  const annotations = (obj.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations;
  const mirror = annotations !== null && typeof annotations === "object" && MIRROR_POD_ANNOTATION in annotations;
  const named = nonEmpty(podSpec["serviceAccountName"]) ?? nonEmpty(podSpec["serviceAccount"]);
  const name = named ?? (mirror ? undefined : DEFAULT_SERVICE_ACCOUNT_NAME);
  if (name === undefined) return undefined;
  podSpec["serviceAccountName"] = name;
  podSpec["serviceAccount"] = name;
  return undefined;
};

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
