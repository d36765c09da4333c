"""An ImmortalContainer controller in the style of seed 001 (written by us): a watcher thread per kind
feeding a work queue, and a reconcile thread that fetches the object, creates its pod when missing and
patches the status. Runs until killed; prints "watching" once both watches are open."""
import copy
import queue
import sys
import threading

from compat import connect
from kubernetes import watch
from kubernetes.client.rest import ApiException

client = connect()
core = client.CoreV1Api()
customs = client.CustomObjectsApi()
GROUP, VERSION, PLURAL, KIND = "immortalcontainer.flugel.it", "v1alpha1", "immortalcontainers", "ImmortalContainer"
work = queue.Queue()


def watch_forever(list_fn, on_event, *args):
    # Each stream lists anew (no resourceVersion): level-triggered, as the seed's threaded watcher.
    while True:
        for event in watch.Watch().stream(list_fn, *args, timeout_seconds=5):
            on_event(event)


def on_immortal(event):
    meta = event["object"]["metadata"]
    work.put(f"{meta['namespace']}/{meta['name']}")


def on_pod(event):
    pod = event["object"]
    for ref in pod.metadata.owner_references or []:
        if ref.kind == KIND and ref.controller:
            work.put(f"{pod.metadata.namespace}/{ref.name}")


def new_pod(ic):
    meta = ic["metadata"]
    return client.V1Pod(
        metadata=client.V1ObjectMeta(
            name=meta["name"] + "-immortalpod",
            labels={"controller": meta["name"]},
            namespace=meta["namespace"],
            owner_references=[client.V1OwnerReference(
                api_version=f"{GROUP}/{VERSION}", controller=True, kind=KIND, name=meta["name"], uid=meta["uid"])],
        ),
        spec=client.V1PodSpec(containers=[client.V1Container(name="acontainer", image=ic["spec"]["image"])]),
    )


def reconcile(key):
    ns, name = key.split("/")
    try:
        ic = customs.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, name)
    except ApiException as e:
        if e.status == 404:
            return
        raise
    definition = new_pod(ic)
    try:
        core.read_namespaced_pod(definition.metadata.name, ns)
        return
    except ApiException as e:
        if e.status != 404:
            raise
    pod = core.create_namespaced_pod(ns, definition)
    status = copy.deepcopy(ic)
    status["status"] = {"currentPod": pod.metadata.name,
                        "startTimes": ic.get("status", {}).get("startTimes", 0) + 1}
    customs.patch_namespaced_custom_object_status(GROUP, VERSION, ns, PLURAL, name, status)


def reconcile_forever():
    while True:
        key = work.get()
        try:
            reconcile(key)
        except ApiException as e:
            print(f"reconcile {key} failed: {e.status} {e.reason}", file=sys.stderr, flush=True)
            if e.status == 409:
                work.put(key)


threading.Thread(target=watch_forever, args=(customs.list_cluster_custom_object, on_immortal, GROUP, VERSION, PLURAL),
                 daemon=True).start()
threading.Thread(target=watch_forever, args=(core.list_pod_for_all_namespaces, on_pod), daemon=True).start()
print("watching", flush=True)
reconcile_forever()
