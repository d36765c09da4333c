"""List, then watch from the list's resourceVersion, resuming across timeout_seconds as a controller does."""
import sys

from compat import connect, report
from kubernetes import watch

client = connect()
v1 = client.CoreV1Api()
ns = sys.argv[1]


def cm(name):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data={"k": name})


v1.create_namespaced_config_map(ns, cm("before"))
listed = v1.list_namespaced_config_map(ns)
v1.create_namespaced_config_map(ns, cm("first"))

w = watch.Watch()
# The stream ends by itself when the server ends the watch at timeout_seconds.
first = [(e["type"], e["object"].metadata.name) for e in
         w.stream(v1.list_namespaced_config_map, ns, resource_version=listed.metadata.resource_version,
                  timeout_seconds=1)]

v1.create_namespaced_config_map(ns, cm("second"))
resumed = [(e["type"], e["object"].metadata.name) for e in
           w.stream(v1.list_namespaced_config_map, ns, resource_version=w.resource_version, timeout_seconds=1)]

# allow_watch_bookmarks=True: a BOOKMARK comes before the server ends the watch.
bookmarks = [(e["type"], e["raw_object"]["metadata"].get("resourceVersion") is not None) for e in
             watch.Watch().stream(v1.list_namespaced_config_map, ns, resource_version=w.resource_version,
                                  allow_watch_bookmarks=True, timeout_seconds=3)]

# Without a timeout the client resumes until stopped; a deletion after its resourceVersion arrives.
v1.delete_namespaced_config_map("first", ns)
w3 = watch.Watch()
deleted = []
for e in w3.stream(v1.list_namespaced_config_map, ns, resource_version=w.resource_version):
    if e["type"] == "DELETED":
        deleted.append(e["object"].metadata.name)
        w3.stop()

report(first=first, resumed=resumed, bookmarks=bookmarks, deleted=deleted)
