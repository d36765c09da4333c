"""Delete options as the official client sends them: orphan_dependents=True in the query, a
V1DeleteOptions body with a propagation policy, and preconditions that fail."""
import sys

from compat import connect, report, status_of, wait_until

client = connect()
v1 = client.CoreV1Api()
ns = sys.argv[1]


def owned_cm(name, owner):
    ref = client.V1OwnerReference(api_version="v1", kind="ConfigMap", name=owner.metadata.name,
                                  uid=owner.metadata.uid)
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, owner_references=[ref]))


def gone(name):
    return status_of(lambda: v1.read_namespaced_config_map(name, ns)) is not None


owner = v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="owner")))
v1.create_namespaced_config_map(ns, owned_cm("orphan-me", owner))
v1.delete_namespaced_config_map("owner", ns, orphan_dependents=True)
wait_until(lambda: gone("owner"), what="the orphaning owner to go")
orphan = wait_until(lambda: (lambda cm: cm if not cm.metadata.owner_references else None)(
    v1.read_namespaced_config_map("orphan-me", ns)), what="the ownerReference to be removed")

owner2 = v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="owner2")))
v1.create_namespaced_config_map(ns, owned_cm("collect-me", owner2))
v1.delete_namespaced_config_map("owner2", ns, body=client.V1DeleteOptions(propagation_policy="Foreground"))
wait_until(lambda: gone("owner2") and gone("collect-me"), what="foreground deletion")

kept = v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="kept")))
precondition = status_of(lambda: v1.delete_namespaced_config_map(
    "kept", ns, body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="not-its-uid"))))
deleted = v1.delete_namespaced_config_map(
    "kept", ns, body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=kept.metadata.uid)))

report(orphan_kept=orphan.metadata.name, precondition=precondition, deleted_kind=deleted.kind,
       kept_gone=gone("kept"))
