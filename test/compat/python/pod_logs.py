"""A pod's log: read at once, and followed (follow=True keeps the stream open while the container runs)."""
import sys

import urllib3
from compat import connect, report, wait_until

client = connect()
v1 = client.CoreV1Api()
ns = sys.argv[1]

v1.create_namespaced_pod(ns, client.V1Pod(
    metadata=client.V1ObjectMeta(name="logger"),
    spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="busybox")])))
wait_until(lambda: v1.read_namespaced_pod("logger", ns).status.phase == "Running", what="the pod to run")
log = v1.read_namespaced_pod_log("logger", ns)

followed = "returned"
try:
    # A followed log of a running container does not end: the read times out.
    v1.read_namespaced_pod_log("logger", ns, follow=True, _request_timeout=(5, 1))
except urllib3.exceptions.ReadTimeoutError:
    followed = "open"
except client.exceptions.ApiException as e:
    followed = f"error {e.status}"
except Exception as e:  # urllib3 wraps the read timeout differently across versions
    followed = "open" if "timed out" in str(e).lower() else f"{type(e).__name__}: {e}"

report(log=log, followed=followed)
