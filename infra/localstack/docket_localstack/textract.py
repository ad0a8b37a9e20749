"""Amazon Textract text detection for LocalStack, backed by Tesseract OCR.

Community LocalStack has no Textract. This provider serves the text-detection part of the API
(``PROVIDER_OVERRIDE_TEXTRACT=docket``) so that the pipeline can run offline.

Emulated:
- ``DetectDocumentText``: one page (PNG, JPEG, TIFF or single-page PDF) from ``Document.Bytes``
  or ``Document.S3Object`` (Bucket, Name, optional Version), answered synchronously.
- ``StartDocumentTextDetection`` / ``GetDocumentTextDetection``: asynchronous jobs on a small
  thread pool (multi-page PDFs and TIFFs give one PAGE block per page); ``ClientRequestToken``
  idempotency (same token and parameters -> same JobId, other parameters ->
  ``IdempotentParameterMismatchException``); ``MaxResults``/``NextToken`` paging over Blocks;
  the completion message to ``NotificationChannel.SNSTopicArn`` (SUCCEEDED or FAILED).
- Blocks PAGE, LINE and WORD with uuid Ids, Page numbers, ``Geometry`` (BoundingBox and a
  4-point Polygon, as fractions of the page) and CHILD relationships PAGE->LINE, LINE->WORD.
  Order: the PAGE block, then each LINE followed by its WORDs.
- Errors under AWS's names: InvalidParameterException, InvalidS3ObjectException,
  UnsupportedDocumentException (magic bytes are not PDF/PNG/JPEG/TIFF, or more than one page in a
  synchronous call), BadDocumentException (right magic bytes but undecodable, or empty),
  DocumentTooLargeException (10 MB synchronous and for images, 500 MB for asynchronous PDF/TIFF),
  InvalidJobIdException, IdempotentParameterMismatchException. Problems with the document's
  content found while an asynchronous job runs make the job FAILED with a StatusMessage.

- AWS's default quotas (calls per second per operation, asynchronous jobs at once), refused with
  AWS's exceptions: see :mod:`.textract_quota`.
- For scale runs, OCR from a content-hash cache and a simulated duration per page: see
  :mod:`.textract_scale`.

Not emulated: FORMS/TABLES/QUERIES/LAYOUT (AnalyzeDocument, expense, lending), handwriting
(TextType is always PRINTED), rotation (no RotationAngle; polygons are the axis-aligned boxes),
Warnings, OutputConfig (accepted, ignored), KMS, IAM (RoleArn is not assumed), job expiry.
Confidence is Tesseract's word confidence (a LINE's is the mean of its words'); PAGE blocks
carry no Confidence, as in AWS. Jobs live in memory and do not survive a restart. The documents
themselves (checks, OCR, Blocks) are handled in :mod:`.textract_ocr`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError
from localstack.aws.api import CommonServiceException, RequestContext, handler
from localstack.aws.connect import connect_to
from localstack.services.plugins import ServiceLifecycleHook

from docket_localstack import request_clock
from docket_localstack.textract_ocr import (
    MB,
    UNSUPPORTED_FORMAT,
    DocumentError,
    Page,
    check_document,
    document_blocks,
    ocr_document,
)
from docket_localstack.textract_quota import QUOTAS, ThroughputExceeded
from docket_localstack.textract_scale import SCALE
from docket_localstack.wire_log import QUOTA

LOG = logging.getLogger(__name__)

MODEL_VERSION = "1.0"
SYNC_MAX_BYTES = 10 * MB
ASYNC_MAX_BYTES = 500 * MB
ASYNC_MAX_PAGES = 3000
MAX_RESULTS = 1000
WORKERS = 2

S3_UNREADABLE = (
    "Unable to get object metadata from S3. Check object key, region and/or access permissions."
)


# --- errors -----------------------------------------------------------------------------------


def invalid_parameter(message: str) -> CommonServiceException:
    return CommonServiceException("InvalidParameterException", message, status_code=400)


# --- S3 and SNS -------------------------------------------------------------------------------


def s3_location(container: dict | None, field_name: str) -> dict:
    """The S3Object of a Document/DocumentLocation, with Bucket and Name present."""
    s3_object = (container or {}).get("S3Object")
    if not s3_object:
        raise invalid_parameter(f"{field_name} must contain an S3Object")
    if not s3_object.get("Bucket") or not s3_object.get("Name"):
        raise invalid_parameter("S3Object must contain Bucket and Name")
    return s3_object


def s3_args(s3_object: dict) -> dict:
    args = {"Bucket": s3_object["Bucket"], "Key": s3_object["Name"]}
    if s3_object.get("Version"):
        args["VersionId"] = s3_object["Version"]
    return args


def s3_client(account_id: str, region: str):
    return connect_to(aws_access_key_id=account_id, region_name=region).s3


def s3_size(account_id: str, region: str, s3_object: dict) -> int:
    """The object's size; InvalidS3ObjectException if it cannot be read."""
    try:
        head = s3_client(account_id, region).head_object(**s3_args(s3_object))
    except ClientError as e:
        LOG.debug("textract: head_object %s failed: %s", s3_object, e)
        raise DocumentError("InvalidS3ObjectException", S3_UNREADABLE) from e
    return int(head.get("ContentLength", 0))


def s3_read(account_id: str, region: str, s3_object: dict, max_bytes: int) -> bytes:
    """The object's bytes; InvalidS3ObjectException / DocumentTooLargeException."""
    size = s3_size(account_id, region, s3_object)
    if size > max_bytes:
        raise DocumentError(
            "DocumentTooLargeException",
            f"S3 object size {size} is more than the maximum limit {max_bytes}",
        )
    try:
        response = s3_client(account_id, region).get_object(**s3_args(s3_object))
        return response["Body"].read()
    except ClientError as e:
        raise DocumentError("InvalidS3ObjectException", S3_UNREADABLE) from e


def publish_completion(job: Job) -> None:
    """Posts the documented completion message to the job's SNS topic (best effort)."""
    topic_arn = job.notification_channel.get("SNSTopicArn")
    if not topic_arn:
        LOG.warning("textract: job %s has no SNSTopicArn to notify", job.job_id)
        return
    message = {
        "JobId": job.job_id,
        "Status": job.status,
        "API": "StartDocumentTextDetection",
        "Timestamp": int(time.time() * 1000),
        "DocumentLocation": {
            "S3ObjectName": job.s3_object["Name"],
            "S3Bucket": job.s3_object["Bucket"],
        },
    }
    if job.job_tag:
        message["JobTag"] = job.job_tag
    try:
        arn_parts = topic_arn.split(":")
        region, account_id = arn_parts[3], arn_parts[4]
        sns = connect_to(aws_access_key_id=account_id, region_name=region).sns
        sns.publish(TopicArn=topic_arn, Message=json.dumps(message))
    except Exception as e:  # the job's outcome stands even if nobody hears of it
        LOG.warning("textract: could not notify %s of job %s: %s", topic_arn, job.job_id, e)


def admit(context: RequestContext, operation: str) -> None:
    """Counts a call of `operation` against its quota at the instant LocalStack received it (or
    refuses it), and marks on the request, for the wire log, that instant (``admittedMs``;
    refused: ``refusedMs`` and ``windowMs``) and how long after it the quota judged it
    (``queuedMs``)."""
    received = request_clock.received(context)
    queued = {"queuedMs": int((time.monotonic() - received[0]) * 1000)} if received else {}
    try:
        admitted_ms = QUOTAS.admit(context.account_id, context.region, operation, received)
    except ThroughputExceeded as refused:
        judged = {"refusedMs": refused.refused_ms, "windowMs": refused.window_ms, **queued}
        setattr(context, QUOTA, judged)
        raise
    setattr(context, QUOTA, {"admittedMs": admitted_ms, **queued})


# --- jobs -------------------------------------------------------------------------------------


@dataclass
class Job:
    job_id: str
    account_id: str
    region: str
    s3_object: dict
    job_tag: str | None
    notification_channel: dict
    status: str = "IN_PROGRESS"
    status_message: str | None = None
    pages: int = 0
    blocks: list[dict] = field(default_factory=list)


@dataclass
class RegionState:
    jobs: dict[str, Job] = field(default_factory=dict)
    tokens: dict[str, tuple[str, str]] = field(default_factory=dict)  # token -> (digest, job id)


def request_digest(request: dict) -> str:
    """What makes two start requests 'the same' for ClientRequestToken idempotency."""
    relevant = {k: v for k, v in request.items() if k != "ClientRequestToken"}
    return hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()


def job_for_token(state: RegionState, token: str, digest: str) -> str | None:
    """The JobId an earlier start with this token made, if any; a mismatch is an error."""
    previous = state.tokens.get(token)
    if previous is None:
        return None
    if previous[0] != digest:
        raise CommonServiceException(
            "IdempotentParameterMismatchException",
            "ClientRequestToken was reused with different parameters",
            status_code=400,
        )
    return previous[1]


def encode_token(job_id: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{job_id}:{offset}".encode()).decode()


def decode_token(token: str, job_id: str) -> int:
    try:
        owner, offset = base64.urlsafe_b64decode(token.encode()).decode().rsplit(":", 1)
        if owner == job_id and int(offset) >= 0:
            return int(offset)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        pass
    raise invalid_parameter("Invalid NextToken")


def read_pages(data: bytes, fmt: str, max_pages: int) -> list[Page]:
    """The document's pages: from the scale runs' cache when it has them, else by OCR."""
    pages = SCALE.cached(data)
    if pages is None:
        pages = ocr_document(data, fmt, max_pages)
        SCALE.store(data, pages)
    elif len(pages) > max_pages:
        raise DocumentError("UnsupportedDocumentException", UNSUPPORTED_FORMAT)
    return pages


def run_job(job: Job) -> None:
    """Worker: fetch, check, OCR; the job ends SUCCEEDED or FAILED no sooner than its simulated
    duration (scale runs), the rest of which runs on a timer, not on a worker."""
    started = time.monotonic()
    pages: list[Page] = []
    try:
        data = s3_read(job.account_id, job.region, job.s3_object, ASYNC_MAX_BYTES)
        fmt = check_document(data, ASYNC_MAX_BYTES)
        pages = read_pages(data, fmt, ASYNC_MAX_PAGES)
        outcome: tuple[str, str | None] = ("SUCCEEDED", None)
    except DocumentError as e:
        outcome = ("FAILED", e.message)
    except Exception as e:
        LOG.exception("textract: job %s failed", job.job_id)
        outcome = ("FAILED", f"Internal error: {e}")
    SCALE.when_read(len(pages), started, lambda: end_job(job, pages, outcome))


def end_job(job: Job, pages: list[Page], outcome: tuple[str, str | None]) -> None:
    """Records the job's outcome, gives its slot back and notifies."""
    status, message = outcome
    if status == "SUCCEEDED":
        job.blocks, job.pages = document_blocks(pages), len(pages)
    job.status_message = message
    job.status = status
    QUOTAS.end_job(job.account_id, job.region)
    if job.notification_channel:
        publish_completion(job)


# --- the provider -----------------------------------------------------------------------------


class TextractProvider(ServiceLifecycleHook):
    service = "textract"

    def __init__(self):
        self._lock = threading.Lock()
        self._states: dict[tuple[str, str], RegionState] = {}
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="textract-job")

    def on_before_stop(self):
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _state(self, context: RequestContext) -> RegionState:
        key = (context.account_id, context.region)
        with self._lock:
            return self._states.setdefault(key, RegionState())

    @handler("DetectDocumentText", expand=False)
    def detect_document_text(self, context: RequestContext, request: dict) -> dict:
        admit(context, "DetectDocumentText")
        document = request.get("Document") or {}
        try:
            if document.get("Bytes") is not None:
                data = document["Bytes"]
            else:
                s3_object = s3_location(document, "Document")
                data = s3_read(context.account_id, context.region, s3_object, SYNC_MAX_BYTES)
            fmt = check_document(data, SYNC_MAX_BYTES)
            started = time.monotonic()
            pages = read_pages(data, fmt, max_pages=1)
        except DocumentError as e:
            raise e.to_service_exception() from e
        SCALE.wait_read(len(pages), started)
        return {
            "DocumentMetadata": {"Pages": len(pages)},
            "Blocks": document_blocks(pages),
            "DetectDocumentTextModelVersion": MODEL_VERSION,
        }

    @handler("StartDocumentTextDetection", expand=False)
    def start_document_text_detection(self, context: RequestContext, request: dict) -> dict:
        admit(context, "StartDocumentTextDetection")
        s3_object = s3_location(request.get("DocumentLocation"), "DocumentLocation")
        state = self._state(context)
        token = request.get("ClientRequestToken")
        digest = request_digest(request)
        if token:
            with self._lock:
                existing = job_for_token(state, token, digest)
            if existing:
                return {"JobId": existing}
        try:
            size = s3_size(context.account_id, context.region, s3_object)
        except DocumentError as e:
            raise e.to_service_exception() from e
        if size > ASYNC_MAX_BYTES:
            raise CommonServiceException(
                "DocumentTooLargeException",
                f"S3 object size {size} is more than the maximum limit {ASYNC_MAX_BYTES}",
                status_code=400,
            )
        job = Job(
            job_id=secrets.token_hex(32),
            account_id=context.account_id,
            region=context.region,
            s3_object=dict(s3_object),
            job_tag=request.get("JobTag"),
            notification_channel=dict(request.get("NotificationChannel") or {}),
        )
        with self._lock:
            if token:
                existing = job_for_token(state, token, digest)  # a concurrent start may have won
                if existing:
                    return {"JobId": existing}
            QUOTAS.start_job(context.account_id, context.region, "StartDocumentTextDetection")
            if token:
                state.tokens[token] = (digest, job.job_id)
            state.jobs[job.job_id] = job
        self._pool.submit(run_job, job)
        return {"JobId": job.job_id}

    @handler("GetDocumentTextDetection", expand=False)
    def get_document_text_detection(self, context: RequestContext, request: dict) -> dict:
        admit(context, "GetDocumentTextDetection")
        job_id = request.get("JobId")
        state = self._state(context)
        with self._lock:
            job = state.jobs.get(job_id) if job_id is not None else None
        if job is None:
            raise CommonServiceException(
                "InvalidJobIdException", f"Request has invalid Job Id: {job_id}", status_code=400
            )
        max_results = request.get("MaxResults")
        if max_results is None:
            max_results = MAX_RESULTS
        if not isinstance(max_results, int) or max_results < 1:
            raise invalid_parameter("MaxResults must be at least 1")
        max_results = min(max_results, MAX_RESULTS)

        response: dict[str, Any] = {
            "JobStatus": job.status,
            "DetectDocumentTextModelVersion": MODEL_VERSION,
        }
        if job.status == "FAILED":
            response["StatusMessage"] = job.status_message
        if job.status != "SUCCEEDED":
            return response
        offset = decode_token(request["NextToken"], job.job_id) if request.get("NextToken") else 0
        end = offset + max_results
        response["DocumentMetadata"] = {"Pages": job.pages}
        response["Blocks"] = job.blocks[offset:end]
        if end < len(job.blocks):
            response["NextToken"] = encode_token(job.job_id, end)
        return response
