"""Each patch type the official client sends: strategic merge (a dict), JSON patch (a list), merge patch
(custom objects), server-side apply (the dynamic client), and the errors of a failing JSON patch."""
import sys

import yaml

from compat import connect, report, status_of
from kubernetes.dynamic import DynamicClient

client = connect()
v1 = client.CoreV1Api()
ns = sys.argv[1]

v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="p"), data={"a": "1"}))
# A dict is sent as application/strategic-merge-patch+json.
strategic = v1.patch_namespaced_config_map("p", ns, {"data": {"b": "2"}, "metadata": {"labels": {"x": "y"}}})
# A list is sent as application/json-patch+json.
json_patch = v1.patch_namespaced_config_map("p", ns, [{"op": "replace", "path": "/data/a", "value": "10"},
                                                       {"op": "remove", "path": "/data/b"}])
failed_test = status_of(lambda: v1.patch_namespaced_config_map(
    "p", ns, [{"op": "test", "path": "/data/a", "value": "nope"}]))
missing_path = status_of(lambda: v1.patch_namespaced_config_map(
    "p", ns, [{"op": "remove", "path": "/data/missing"}]))

dyn = DynamicClient(client.ApiClient())
cms = dyn.resources.get(api_version="v1", kind="ConfigMap")


def apply(data, manager, **kwargs):
    # This client sends an apply body only as a string (a dict fails before sending); YAML, as kubectl's.
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied", "namespace": ns}, "data": data}
    return dyn.server_side_apply(cms, body=yaml.safe_dump(doc), name="applied", namespace=ns,
                                 field_manager=manager, **kwargs)


applied = apply({"k": "v"}, "python-compat")
merged = dyn.patch(cms, body={"data": {"k": None, "m": "n"}}, name="applied", namespace=ns,
                   content_type="application/merge-patch+json")
conflict = status_of(lambda: apply({"m": "other"}, "someone-else"))
forced = apply({"m": "other"}, "someone-else", force_conflicts=True)

report(
    strategic={"data": strategic.data, "labels": strategic.metadata.labels},
    json_patch=json_patch.data,
    failed_test=failed_test,
    missing_path=missing_path,
    applied={"data": applied.to_dict()["data"],
             "managers": [m["manager"] for m in applied.to_dict()["metadata"]["managedFields"]]},
    merged=merged.to_dict()["data"],
    conflict=conflict,
    forced=forced.to_dict()["data"],
)
