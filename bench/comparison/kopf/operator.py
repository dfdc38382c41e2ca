"""The seed's Kopf Microservice operator, for `npm run bench -- --scenarios compare` only.

Reassembled from the seed articles (the Kopf series: the `accept` handler; `desired_resources`,
`read_child`, `check_owner`, `ensure`, `write_phase` and the 10-second timer), adapted only to
run against a local control plane with a kubeconfig instead of a ServiceAccount:

    KUBECONFIG=<path> kopf run --standalone --namespace <ns> operator.py

Behaviour kept from the seed:
- `accept` on create, spec update and resume: logs the input and sets status.phase Accepted
  through Kopf's `patch` (Kopf writes it when the handler returns);
- `reconcile` on the same causes and on a timer every 10 s: renders the Deployment and Service,
  reads both children (live GETs: the seed watches no child resources), checks ownership of
  both before writing either, creates what is missing, replaces what differs (`contains`), then
  `write_phase` re-reads the CR, checks UID, generation and deletion, and writes the phase;
- InvalidSpec / OwnershipConflict → phase Failed, managedResources cleared, kopf.PermanentError;
  API errors → kopf.TemporaryError (Kopf's default retry delay);
- Kopf settings as in the seed: Event posting off, dynamic namespace/CRD scanning off, handler
  progress and the last-handled configuration kept in annotations, not in status.

Added, because the seed articles stop before it (the article on rollout and endpoints is not
among them): `report_health`, run by the same timer after `reconcile`, reads the Deployment and
the Service's EndpointSlices and writes the Ready/Progressing/Stalled conditions and
status.rollout the way Converge judges them (packages/operators/src/operators/microservice/rollout.ts), only when
they change. status.observedGeneration is written by `write_phase` (the seed marks statuses
with the generation they describe).

Environment: KUBECONFIG (required), BENCH_KOPF_WORKERS (settings.execution.max_workers; unset
keeps Kopf's default thread pool, min(32, CPUs + 4)).
"""
from __future__ import annotations

import datetime
import logging
import os
from copy import deepcopy
from typing import Any

import kopf
from kubernetes import client, config
from kubernetes.client.rest import ApiException

Json = dict[str, Any]

GROUP, VERSION, PLURAL = "platform.example.io", "v1", "microservices"
API_VERSION = f"{GROUP}/{VERSION}"
TIMEOUT = (5, 20)
GENERATION_ANNOTATION = "platform.example.io/generation"
OTLP_ENDPOINT = "http://otel-collector.observability.svc.cluster.local:4317"
USER_AGENT = "bench-kopf/0.1 (kubernetes-python)"

# The seed runs in the cluster with a ServiceAccount; here the kubeconfig of the local control plane.
config.load_kube_config(config_file=os.environ["KUBECONFIG"])
api = client.ApiClient()
api.user_agent = USER_AGENT
apps = client.AppsV1Api(api)
core = client.CoreV1Api(api)
custom = client.CustomObjectsApi(api)
discovery = client.DiscoveryV1Api(api)


class InvalidSpec(Exception):
    pass


class OwnershipConflict(Exception):
    pass


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.posting.enabled = False
    settings.scanning.disabled = True
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage()
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage()
    workers = os.environ.get("BENCH_KOPF_WORKERS")
    if workers:
        settings.execution.max_workers = int(workers)


@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.update(GROUP, VERSION, PLURAL, field="spec")
@kopf.on.resume(GROUP, VERSION, PLURAL)
def accept(name, namespace, spec, logger, patch, **_):
    logger.info("Accepted %s/%s: image=%s port=%s", namespace, name,
                (spec.get("container") or {}).get("image"), (spec.get("container") or {}).get("port"))
    patch.status["phase"] = "Accepted"


def labels_for(name: str) -> dict[str, str]:
    return {
        "app": name,
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/instance": name,
        "app.kubernetes.io/managed-by": "converge",
    }


def desired_resources(cr: Json) -> tuple[Json, Json]:
    meta, spec = cr["metadata"], cr.get("spec") or {}
    name, namespace = meta["name"], meta["namespace"]
    container = spec.get("container") or {}
    image, port = container.get("image"), container.get("port")
    if not isinstance(image, str) or not image:
        raise InvalidSpec("spec.container.image is required")
    if not isinstance(port, int) or not 1 <= port <= 65535:
        raise InvalidSpec("spec.container.port must be an integer from 1 to 65535")
    labels = labels_for(name)
    owner = {"apiVersion": API_VERSION, "kind": "Microservice", "name": name,
             "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}
    probe = lambda path: {"httpGet": {"path": path, "port": port}}  # noqa: E731
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels),
                     "annotations": {GENERATION_ANNOTATION: str(meta["generation"])},
                     "ownerReferences": [owner]},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"containers": [{
                    "name": "app",
                    "image": image,
                    "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
                    "env": [
                        {"name": "ASPNETCORE_URLS", "value": f"http://+:{port}"},
                        {"name": "OTEL_SERVICE_NAME", "value": name},
                        {"name": "OTEL_SERVICE_VERSION", "value": image},
                        {"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": OTLP_ENDPOINT},
                    ],
                    "readinessProbe": probe("/health/ready"),
                    "livenessProbe": probe("/health/live"),
                    "resources": {"requests": {"cpu": "25m", "memory": "128Mi"}},
                }]},
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels),
                     "ownerReferences": [owner]},
        "spec": {"type": "ClusterIP", "selector": {"app": name},
                 "ports": [{"name": "http", "protocol": "TCP", "port": port, "targetPort": port}]},
    }
    return deployment, service


def read_child(kind: str, namespace: str, name: str) -> Json | None:
    read = apps.read_namespaced_deployment if kind == "Deployment" else core.read_namespaced_service
    try:
        return api.sanitize_for_serialization(read(name, namespace, _request_timeout=TIMEOUT))
    except ApiException as error:
        if error.status == 404:
            return None
        raise


def check_owner(current: Json, cr: Json) -> None:
    owners = current["metadata"].get("ownerReferences", [])
    if not any(owner.get("uid") == cr["metadata"]["uid"]
               and owner.get("apiVersion") == API_VERSION
               and owner.get("kind") == "Microservice"
               and owner.get("controller") is True for owner in owners):
        raise OwnershipConflict(
            f'{current["kind"]}/{current["metadata"]["name"]} is not owned by this CR')


def contains(current: Any, desired: Any) -> bool:
    """Extra dictionary keys are not differences; lists must match in length and item by item."""
    if isinstance(desired, dict):
        return isinstance(current, dict) and all(
            key in current and contains(current[key], value) for key, value in desired.items())
    if isinstance(desired, list):
        return (isinstance(current, list) and len(current) == len(desired)
                and all(contains(c, d) for c, d in zip(current, desired)))
    return current == desired


def ensure(desired: Json, current: Json | None, cr: Json, logger: logging.Logger) -> None:
    kind = desired["kind"]
    namespace, name = cr["metadata"]["namespace"], cr["metadata"]["name"]
    if current is None:
        create = (apps.create_namespaced_deployment if kind == "Deployment"
                  else core.create_namespaced_service)
        create(namespace, desired, _request_timeout=TIMEOUT)
        logger.info("Created %s/%s", kind, name)
        return
    check_owner(current, cr)
    if contains(current, desired):
        return
    replacement = deepcopy(current)
    replacement["metadata"]["labels"] = {
        **current["metadata"].get("labels", {}), **desired["metadata"]["labels"]}
    if kind == "Deployment":
        replacement["spec"] = desired["spec"]
        replace = apps.replace_namespaced_deployment
    else:
        replacement["spec"].update(desired["spec"])
        replace = core.replace_namespaced_service
    replacement.pop("status", None)
    replace(name, namespace, replacement, _request_timeout=TIMEOUT)
    logger.info("Updated %s/%s", kind, name)


def write_phase(cr: Json, logger: logging.Logger, phase: str, managed: bool) -> None:
    meta = cr["metadata"]
    namespace, name = meta["namespace"], meta["name"]
    try:
        live = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name,
                                                   _request_timeout=TIMEOUT)
    except ApiException as error:
        if error.status == 404:
            return
        raise
    lm = live["metadata"]
    if lm["uid"] != meta["uid"] or lm.get("generation") != meta.get("generation") or lm.get("deletionTimestamp"):
        logger.info("%s/%s changed while it was handled; not writing %s", namespace, name, phase)
        return
    status: Json = {
        "phase": phase,
        "observedGeneration": meta.get("generation"),
        "managedResources": {"deployment": name, "service": name} if managed else None,
    }
    custom.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, PLURAL, name,
                                                 {"status": status}, _request_timeout=TIMEOUT)


def reconcile_cr(cr: Json, logger: logging.Logger) -> None:
    namespace, name = cr["metadata"]["namespace"], cr["metadata"]["name"]
    try:
        desired_deployment, desired_service = desired_resources(cr)
        deployment = read_child("Deployment", namespace, name)
        service = read_child("Service", namespace, name)
        # Check both names before modifying either resource.
        for resource in (deployment, service):
            if resource is not None:
                check_owner(resource, cr)
        ensure(desired_deployment, deployment, cr, logger)
        ensure(desired_service, service, cr, logger)
        write_phase(cr, logger, "ResourcesApplied", managed=True)
    except (InvalidSpec, OwnershipConflict) as error:
        logger.error("%s: %s", type(error).__name__, error)
        write_phase(cr, logger, "Failed", managed=False)
        raise kopf.PermanentError(str(error)) from error
    except ApiException as error:
        logger.warning("API error %s %s; retrying later", error.status, error.reason)
        raise kopf.TemporaryError(f"API error {error.status}: {error.reason}") from error


@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.update(GROUP, VERSION, PLURAL, field="spec")
@kopf.on.resume(GROUP, VERSION, PLURAL)
def reconcile(body, logger, **_):
    reconcile_cr(deepcopy(dict(body)), logger)


def assess_rollout(deployment: Json, generation: int, ready_endpoints: int) -> tuple[str, str, Json]:
    """Converge's assessRollout (packages/operators/src/operators/microservice/rollout.ts)."""
    desired = (deployment.get("spec") or {}).get("replicas", 1)
    st = deployment.get("status") or {}
    summary = {"replicas": desired, "updatedReplicas": st.get("updatedReplicas", 0),
               "availableReplicas": st.get("availableReplicas", 0), "readyEndpoints": ready_endpoints}
    meta = deployment["metadata"]
    stamped = (meta.get("annotations") or {}).get(GENERATION_ANNOTATION) == str(generation)
    if not stamped or st.get("observedGeneration", 0) < meta.get("generation", 1):
        return "InProgress", "waiting for the Deployment controller to observe the new spec", summary
    for c in st.get("conditions") or []:
        if c.get("type") == "Progressing" and c.get("status") == "False" and c.get("reason") == "ProgressDeadlineExceeded":
            return "Stalled", f"rollout stalled: {c.get('message') or 'progress deadline exceeded'}", summary
    if (summary["updatedReplicas"] != desired or summary["availableReplicas"] != desired
            or st.get("replicas", 0) != desired or st.get("unavailableReplicas", 0) != 0):
        return ("InProgress", f"rolling out: {summary['updatedReplicas']}/{desired} updated, "
                f"{summary['availableReplicas']}/{desired} available", summary)
    if ready_endpoints < 1:
        return "EndpointsNotReady", "pods are available but the Service has no ready endpoint yet", summary
    return "Available", f"{desired}/{desired} replicas available, {ready_endpoints} ready endpoints", summary


def set_condition(conditions: list[Json], generation: int, type_: str, status: str, reason: str, message: str) -> list[Json]:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    out = [dict(c) for c in conditions]
    existing = next((c for c in out if c.get("type") == type_), None)
    entry = {"type": type_, "status": status, "reason": reason, "message": message,
             "observedGeneration": generation,
             "lastTransitionTime": existing["lastTransitionTime"] if existing and existing.get("status") == status and existing.get("lastTransitionTime") else now}
    if existing is not None:
        out[out.index(existing)] = entry
    else:
        out.append(entry)
    return out


def report_health(cr: Json, logger: logging.Logger) -> None:
    meta, status = cr["metadata"], cr.get("status") or {}
    namespace, name, generation = meta["namespace"], meta["name"], meta.get("generation")
    if status.get("phase") != "ResourcesApplied" or status.get("observedGeneration") != generation:
        return
    deployment = read_child("Deployment", namespace, name)
    if deployment is None:
        return
    slices = discovery.list_namespaced_endpoint_slice(
        namespace, label_selector=f"kubernetes.io/service-name={name}", _request_timeout=TIMEOUT)
    ready = sum(1 for s in slices.items for e in (s.endpoints or [])
                if (e.conditions is None or e.conditions.ready is not False) and e.addresses)
    state, message, summary = assess_rollout(deployment, generation, ready)
    conditions = status.get("conditions") or []
    conditions = set_condition(conditions, generation, "Ready", "True" if state == "Available" else "False",
                               {"Available": "Available", "InProgress": "RolloutInProgress",
                                "Stalled": "RolloutStalled", "EndpointsNotReady": "EndpointsNotReady"}[state], message)
    if state == "InProgress":
        conditions = set_condition(conditions, generation, "Progressing", "True", "RolloutInProgress", message)
    else:
        conditions = set_condition(conditions, generation, "Progressing", "False",
                                   "RolloutStalled" if state == "Stalled" else "RolloutComplete", message)
    if state == "Stalled":
        conditions = set_condition(conditions, generation, "Stalled", "True", "RolloutStalled", message)
    else:
        conditions = set_condition(conditions, generation, "Stalled", "False", "NotStalled", "")
    if conditions == status.get("conditions") and summary == status.get("rollout"):
        return
    custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, PLURAL, name,
        {"status": {"conditions": conditions, "rollout": summary}}, _request_timeout=TIMEOUT)
    logger.info("Ready=%s: %s", "True" if state == "Available" else "False", message)


@kopf.timer(GROUP, VERSION, PLURAL, interval=10)
def periodic(body, logger, **_):
    cr = deepcopy(dict(body))
    reconcile_cr(cr, logger)
    try:
        report_health(cr, logger)
    except ApiException as error:
        logger.warning("API error %s %s while reading health; next check in 10 s", error.status, error.reason)
