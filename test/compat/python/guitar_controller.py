"""A Guitar controller in the style of seed 004 (written by us): creates its CRD when missing, then one
watch over all namespaces wrapped in `while True`, resuming from the last resourceVersion, reviewing each
guitar not yet reviewed. Runs until killed; prints "watching" before its first watch."""
import os

import yaml
from compat import connect
from kubernetes import watch

client = connect()
DOMAIN = "kool.karmalabs.local"
REVIEWS = {"fender": "Excellent guitar. Strats are the best", "gibson": "Classy guitar, but heavy",
           "ibanez": "Fast neck, good for metal"}

ext = client.ApiextensionsV1Api()
current = [x["spec"]["names"]["kind"].lower() for x in ext.list_custom_resource_definition().to_dict()["items"]]
if "guitar" not in current:
    with open(os.path.join(os.path.dirname(__file__), "guitar-crd.yaml")) as f:
        ext.create_custom_resource_definition(yaml.safe_load(f))

crds = client.CustomObjectsApi()


def review_guitar(obj):
    meta = obj["metadata"]
    brand = obj["spec"].get("brand", "").lower()
    obj["spec"]["review"] = True
    obj["spec"]["comment"] = REVIEWS.get(brand, "Unknown brand, cannot review")
    crds.replace_namespaced_custom_object(DOMAIN, "v1", meta["namespace"], "guitars", meta["name"], obj)


def served():
    try:
        crds.list_cluster_custom_object(DOMAIN, "v1", "guitars")
        return True
    except client.exceptions.ApiException:
        return False


while not served():
    pass
print("watching", flush=True)
resource_version = ""
while True:
    stream = watch.Watch().stream(crds.list_cluster_custom_object, DOMAIN, "v1", "guitars",
                                  resource_version=resource_version, timeout_seconds=5)
    for event in stream:
        obj = event["object"]
        spec = obj.get("spec")
        if not spec:
            continue
        resource_version = obj["metadata"]["resourceVersion"]
        if event["type"] == "DELETED" or spec.get("review", False):
            continue
        review_guitar(obj)
