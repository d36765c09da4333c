/**
 * The JSON fields of metav1.ObjectMeta (k8s.io/apimachinery/pkg/apis/meta/v1/types.go), in the Go
 * struct's order: the order the real server prints them in (rest/encoding.ts), and the fields a custom
 * object's decoding keeps in `metadata` (validation/schema-prune.ts).
 */
export const OBJECT_META_FIELDS: readonly string[] = [
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
];
