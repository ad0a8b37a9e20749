"""A log of the AWS requests LocalStack served, so that tests can count effects at the wire.

Tests must count what was really sent (the design makes many effects unique, and Step Functions
records at most one answer to a task token however often it is sent). The log keeps, per request,
the service, the operation and a *subject*: for the operations in ``SUBJECTS``, the SHA-256 of the
request parameter that says what the request acts on (a task token is a secret: only its hash is
kept; an EventBridge ``PutEvents`` is named by its first entry's detail type and the ``eventId``
of its ``Detail``, so a test counts the publications and answers of one event; an
execution's start by its ``name`` (docket's run id); a Lambda
``Invoke`` by the ``FunctionName`` as the caller wrote it; a Textract text detection start by
its ``ClientRequestToken``, the run's OCR operation id, a job's poll by its ``JobId``, and a
synchronous read (``DetectDocumentText``) by the key of the S3 object it reads; a DynamoDB
single-item read or write by its ``TableName``). A DynamoDB request also has ``items``: how
many items it writes or reads (1 for a single-item operation or a Query/Scan, the list's
length for a transaction or batch), which the cost model turns into capacity units, and
``tables``: the table of each of those items, in order (table names are no secret), so that a
bench can say which table the units go to. A request
answered with a service error has its code as ``error`` (a refused conditional write,
``ConditionalCheckFailedException``, is billed all the same). Each request has ``atMs``, when
it was logged (unix ms, this machine's clock, which the callers on it share), so that a test can
tell that a call waited for its turn; a call our local Textract's quotas admitted also has
``admittedMs``, the instant they count it at (when LocalStack received it), so that a bench can
set each call against the slot it was sent in, and one they refused ``refusedMs``, that
instant, and ``windowMs``, those of the calls that filled its second; both have ``queuedMs``,
how long after it the quota judged the call.
``GET /_docket/requests?service=&operation=&subject=`` answers
``{"count": n, "requests": [{"service", "operation", "subject", "status", "atMs"}, ...]}`` for the
requests that match every given field; ``DELETE`` clears the log. It holds the newest
``MAX_ENTRIES`` requests.

The log sits in LocalStack's response handler chain, so it sees every request LocalStack
serves, with the status code it answered, including those our chaos rules failed.
"""

import collections
import hashlib
import json
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from localstack.aws.api import RequestContext
from localstack.aws.handlers import run_custom_response_handlers
from localstack.http import Request, Resource, Response
from localstack.services.internal import get_internal_apis
from rolo import Response as ChainResponse
from rolo.gateway import HandlerChain

LOG = logging.getLogger(__name__)

MAX_ENTRIES = 200_000

# The request context's attribute where a provider puts what its quota made of the request: the
# entry's fields ``admittedMs``, or ``refusedMs`` and ``windowMs``, and ``queuedMs`` (module docs).
QUOTA = "docket_quota"

# (service, operation) -> the request parameter whose hash is the subject (a dotted path into
# nested parameters).
SUBJECTS = {
    ("stepfunctions", "SendTaskSuccess"): "taskToken",
    ("stepfunctions", "SendTaskFailure"): "taskToken",
    ("stepfunctions", "SendTaskHeartbeat"): "taskToken",
    ("stepfunctions", "StartExecution"): "name",
    ("lambda", "Invoke"): "FunctionName",
    ("textract", "StartDocumentTextDetection"): "ClientRequestToken",
    ("textract", "DetectDocumentText"): "Document.S3Object.Name",
    ("textract", "GetDocumentTextDetection"): "JobId",
    ("dynamodb", "GetItem"): "TableName",
    ("dynamodb", "PutItem"): "TableName",
    ("dynamodb", "UpdateItem"): "TableName",
    ("dynamodb", "DeleteItem"): "TableName",
}


def event_subject(params: Mapping[str, Any] | None) -> str | None:
    """``<DetailType>\n<Detail.eventId>`` of a PutEvents request's first entry, if it has both."""
    entries = (params or {}).get("Entries") or []
    first = entries[0] if isinstance(entries, list) and entries else {}
    try:
        detail = json.loads(first.get("Detail") or "null")
    except (TypeError, ValueError):
        return None
    event_id = detail.get("eventId") if isinstance(detail, dict) else None
    detail_type = first.get("DetailType")
    if not isinstance(event_id, str) or not isinstance(detail_type, str):
        return None
    return f"{detail_type}\n{event_id}"


def subject_of(service: str, operation: str, params: Mapping[str, Any] | None) -> str | None:
    """The hashed subject of a request, or None for an operation without one."""
    if (service, operation) == ("events", "PutEvents"):
        event = event_subject(params)
        return hashlib.sha256(event.encode()).hexdigest() if event else None
    path = SUBJECTS.get((service, operation))
    if path is None:
        return None
    value: Any = params or {}
    for name in path.split("."):
        value = value.get(name) if isinstance(value, Mapping) else None
    if not isinstance(value, str):
        return None
    return hashlib.sha256(value.encode()).hexdigest()


def dynamodb_items(operation: str, params: Mapping[str, Any] | None) -> int:
    """How many items a DynamoDB request names (1 for single-item operations and queries)."""
    params = params or {}
    if operation in ("TransactWriteItems", "TransactGetItems"):
        return len(params.get("TransactItems") or [])
    if operation == "BatchWriteItem":
        return sum(len(v) for v in (params.get("RequestItems") or {}).values())
    if operation == "BatchGetItem":
        return sum(len(v.get("Keys") or []) for v in (params.get("RequestItems") or {}).values())
    return 1


def dynamodb_tables(operation: str, params: Mapping[str, Any] | None) -> list[str]:
    """The table of each item a DynamoDB request names, in the order ``dynamodb_items`` counts
    them ("?" where a request does not say)."""
    params = params or {}
    if operation in ("TransactWriteItems", "TransactGetItems"):
        tables: list[str] = []
        for item in params.get("TransactItems") or []:
            inner: Mapping[str, Any] = next(iter(item.values()), {}) if item else {}
            tables.append((inner or {}).get("TableName") or "?")
        return tables
    if operation == "BatchWriteItem":
        return [t for t, v in (params.get("RequestItems") or {}).items() for _ in v]
    if operation == "BatchGetItem":
        requested = (params.get("RequestItems") or {}).items()
        return [t for t, v in requested for _ in (v.get("Keys") or [])]
    return [params.get("TableName") or "?"]


class WireLog:
    """The newest requests served, shared by the handler and the HTTP resource."""

    def __init__(self, max_entries: int = MAX_ENTRIES):
        self._lock = threading.Lock()
        self._entries: collections.deque[dict] = collections.deque(maxlen=max_entries)

    def record(
        self,
        service: str,
        operation: str,
        params: Mapping[str, Any] | None,
        status: int,
        error: str | None = None,
        quota: Mapping[str, Any] | None = None,
    ) -> None:
        entry: dict[str, Any] = {
            "service": service,
            "operation": operation,
            "subject": subject_of(service, operation, params),
            "status": status,
            "atMs": int(time.time() * 1000),
        }
        if error:
            entry["error"] = error
        if quota:
            entry.update(quota)
        if service == "dynamodb":
            entry["items"] = dynamodb_items(operation, params)
            entry["tables"] = dynamodb_tables(operation, params)
        with self._lock:
            self._entries.append(entry)

    def find(self, **fields: str) -> list[dict]:
        """The entries whose fields equal every given (non-empty) one."""
        wanted = {k: v for k, v in fields.items() if v}
        with self._lock:
            return [e for e in self._entries if all(e.get(k) == v for k, v in wanted.items())]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __call__(
        self, chain: HandlerChain[RequestContext], context: RequestContext, response: ChainResponse
    ) -> None:
        if context.service is None or context.operation is None:
            return
        self.record(
            context.service.service_name,
            context.operation.name,
            context.service_request,
            response.status_code,
            context.service_exception.code if context.service_exception else None,
            getattr(context, QUOTA, None),
        )


class RequestsResource:
    def __init__(self, log: WireLog):
        self.log = log

    def on_get(self, request: Request):
        found = self.log.find(
            service=request.args.get("service", ""),
            operation=request.args.get("operation", ""),
            subject=request.args.get("subject", ""),
        )
        body = {"count": len(found), "requests": found}
        return Response(json.dumps(body), mimetype="application/json")

    def on_delete(self, request: Request):
        self.log.clear()
        return Response(json.dumps({"count": 0}), mimetype="application/json")


WIRE_LOG = WireLog()


def install() -> None:
    """Adds the HTTP resource and the response handler (called once, at LocalStack start)."""
    get_internal_apis().add(Resource("/_docket/requests", RequestsResource(WIRE_LOG)))
    run_custom_response_handlers.append(WIRE_LOG)
    LOG.info("docket wire log installed at /_docket/requests")
