"""A CRD created with ApiextensionsV1Api, then its objects through CustomObjectsApi: create, get, list,
status, replace, delete, and a watch over all namespaces."""
import sys

from compat import connect, report, status_of, wait_until
from kubernetes import watch

client = connect()
ns = sys.argv[1]
ext = client.ApiextensionsV1Api()
co = client.CustomObjectsApi()
GROUP, VERSION, PLURAL = "compat.example.com", "v1", "gizmos"

ext.create_custom_resource_definition({
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{PLURAL}.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": PLURAL, "singular": "gizmo", "kind": "Gizmo", "shortNames": ["gz"]},
        "versions": [{
            "name": VERSION, "served": True, "storage": True,
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 1}}},
                "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
            }}},
        }],
    },
})


def established():
    crd = ext.read_custom_resource_definition(f"{PLURAL}.{GROUP}")
    return any(c.type == "Established" and c.status == "True" for c in (crd.status.conditions or []))


wait_until(established, what="the CRD to be Established")

body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Gizmo", "metadata": {"name": "g1"}, "spec": {"size": 2}}
created = wait_until(lambda: co.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, body),
                     what="the kind to be served")
invalid = status_of(lambda: co.create_namespaced_custom_object(
    GROUP, VERSION, ns, PLURAL, {**body, "metadata": {"name": "g2"}, "spec": {"size": 0}}))
listed = co.list_cluster_custom_object(GROUP, VERSION, PLURAL)
status = co.patch_namespaced_custom_object_status(GROUP, VERSION, ns, PLURAL, "g1", {"status": {"phase": "Ready"}})
# The status subresource ignores spec changes; the main resource ignores status changes.
ignored_spec = co.patch_namespaced_custom_object_status(GROUP, VERSION, ns, PLURAL, "g1", {"spec": {"size": 9}})
current = co.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "g1")
current["spec"]["size"] = 3
replaced = co.replace_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "g1", current)
stale = status_of(lambda: co.replace_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "g1", current))

w = watch.Watch()
seen = []
for e in w.stream(co.list_cluster_custom_object, GROUP, VERSION, PLURAL,
                  resource_version=listed["metadata"]["resourceVersion"]):
    seen.append(e["type"])
    if e["type"] == "MODIFIED" and e["object"]["spec"]["size"] == 3:
        co.delete_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "g1")
    if e["type"] == "DELETED":
        w.stop()

report(
    created_generation=created["metadata"]["generation"],
    invalid=invalid,
    listed_kind=listed["kind"],
    listed_names=[i["metadata"]["name"] for i in listed["items"]],
    status_phase=status["status"]["phase"],
    spec_after_status_patch=ignored_spec["spec"]["size"],
    replaced_generation=replaced["metadata"]["generation"],
    stale=stale,
    seen=seen,
)
