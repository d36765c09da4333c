"""Shared by the compatibility scripts: connect with the official client, fail loudly, report JSON.

Each script is run by test/compat/python-client.e2e.test.ts with KUBECONFIG pointing at the embedded
API server; its last line of output is a JSON object the test asserts on.
"""
import json
import os
import sys
import time

from kubernetes import client, config


def connect():
    config.load_kube_config(config_file=os.environ["KUBECONFIG"])
    return client


def report(**results):
    print(json.dumps(results, default=str), flush=True)


def wait_until(predicate, timeout=20.0, what="condition"):
    """Polls `predicate` until it returns something truthy; a script's own helper, as user code would have."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            sys.exit("timed out waiting for " + what)
        time.sleep(0.05)


def status_of(call):
    """The HTTP status and the Status body's reason of an ApiException a call raises (None if none)."""
    try:
        call()
    except client.exceptions.ApiException as e:
        body = json.loads(e.body) if e.body else {}
        return {"status": e.status, "reason": body.get("reason"), "message": body.get("message")}
    return None
