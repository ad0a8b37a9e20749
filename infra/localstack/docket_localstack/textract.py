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

Not emulated: FORMS/TABLES/QUERIES/LAYOUT (AnalyzeDocument, expense, lending), handwriting
(TextType is always PRINTED), rotation (no RotationAngle; polygons are the axis-aligned boxes),
Warnings, OutputConfig (accepted, ignored), KMS, IAM (RoleArn is not assumed), throttling and
quotas, job expiry. Confidence is Tesseract's word confidence (a LINE's is the mean of its
words'); PAGE blocks carry no Confidence, as in AWS. Jobs live in memory and do not survive a
restart. PDFs are rendered with poppler (``pdftoppm -r 200``); Tesseract runs with
``OMP_THREAD_LIMIT=1``.
"""

from __future__ import annotations

import base64
import binascii
import csv
import hashlib
import io
import json
import logging
import os
import secrets
import subprocess
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError
from localstack.aws.api import CommonServiceException, RequestContext, handler
from localstack.aws.connect import connect_to
from localstack.services.plugins import ServiceLifecycleHook

LOG = logging.getLogger(__name__)

MODEL_VERSION = "1.0"
MB = 1024 * 1024
SYNC_MAX_BYTES = 10 * MB
ASYNC_IMAGE_MAX_BYTES = 10 * MB
ASYNC_MAX_BYTES = 500 * MB
ASYNC_MAX_PAGES = 3000
MAX_RESULTS = 1000
RENDER_DPI = 200
WORKERS = 2
TOOL_TIMEOUT_SECONDS = 300

UNSUPPORTED_FORMAT = "Request has unsupported document format"
INVALID_FORMAT = "Request has invalid document format"
S3_UNREADABLE = (
    "Unable to get object metadata from S3. Check object key, region and/or access permissions."
)


# --- errors -----------------------------------------------------------------------------------


class DocumentError(Exception):
    """A problem with a document, named as the AWS exception a synchronous call would raise."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    def to_service_exception(self) -> CommonServiceException:
        return CommonServiceException(self.code, self.message, status_code=400)


def invalid_parameter(message: str) -> CommonServiceException:
    return CommonServiceException("InvalidParameterException", message, status_code=400)


# --- documents: type sniffing, rendering, OCR -------------------------------------------------


def sniff_format(data: bytes) -> str | None:
    """The document type from its magic bytes (PDF, PNG, JPEG, TIFF), or None."""
    if data.startswith(b"%PDF-"):
        return "PDF"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if data.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if data.startswith(b"II*\x00") or data.startswith(b"MM\x00*"):
        return "TIFF"
    return None


def check_document(data: bytes, max_bytes: int) -> str:
    """Validates size and type; returns the format or raises DocumentError."""
    if len(data) == 0:
        raise DocumentError("BadDocumentException", INVALID_FORMAT)
    fmt = sniff_format(data)
    if fmt is None:
        raise DocumentError("UnsupportedDocumentException", UNSUPPORTED_FORMAT)
    if fmt in ("PNG", "JPEG"):
        max_bytes = min(max_bytes, ASYNC_IMAGE_MAX_BYTES)
    if len(data) > max_bytes:
        raise DocumentError(
            "DocumentTooLargeException",
            f"S3 object size {len(data)} is more than the maximum limit {max_bytes}",
        )
    return fmt


def run_tool(args: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    return subprocess.run(
        args, capture_output=True, env=env, timeout=TOOL_TIMEOUT_SECONDS, check=False
    )


def pdf_page_count(pdf: Path) -> int:
    result = run_tool(["pdfinfo", str(pdf)])
    if result.returncode != 0:
        raise DocumentError("BadDocumentException", INVALID_FORMAT)
    for line in result.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("Pages:"):
            return int(line.split(":", 1)[1].strip())
    raise DocumentError("BadDocumentException", INVALID_FORMAT)


def render_pdf(pdf: Path, out_dir: Path) -> list[Path]:
    """Renders every page to PNG; returns the images in page order."""
    result = run_tool(["pdftoppm", "-r", str(RENDER_DPI), "-png", str(pdf), str(out_dir / "p")])
    pages = sorted(out_dir.glob("p-*.png"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    if result.returncode != 0 or not pages:
        raise DocumentError("BadDocumentException", INVALID_FORMAT)
    return pages


@dataclass
class Word:
    text: str
    confidence: float
    box: tuple[int, int, int, int]  # left, top, width, height in pixels


@dataclass
class Line:
    words: list[Word] = field(default_factory=list)


@dataclass
class Page:
    width: int
    height: int
    lines: list[Line] = field(default_factory=list)


def parse_tsv(tsv: str) -> list[Page]:
    """Tesseract's TSV (levels 1 page .. 5 word) as pages of lines of words."""
    pages: dict[int, Page] = {}
    lines: dict[tuple, Line] = {}
    for row in csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        level, page_num = int(row["level"]), int(row["page_num"])
        box = (int(row["left"]), int(row["top"]), int(row["width"]), int(row["height"]))
        if level == 1:
            pages[page_num] = Page(width=box[2], height=box[3])
            continue
        text = (row.get("text") or "").strip()
        if level != 5 or not text:
            continue
        key = (page_num, row["block_num"], row["par_num"], row["line_num"])
        if key not in lines:
            lines[key] = Line()
            pages[page_num].lines.append(lines[key])
        confidence = min(max(float(row["conf"]), 0.0), 100.0)
        lines[key].words.append(Word(text=text, confidence=confidence, box=box))
    return [pages[n] for n in sorted(pages)]


def ocr_image(image: Path) -> list[Page]:
    """Runs Tesseract on an image (a multi-page TIFF gives several pages)."""
    result = run_tool(["tesseract", str(image), "stdout", "-l", "eng", "tsv"])
    if result.returncode != 0:
        raise DocumentError("BadDocumentException", INVALID_FORMAT)
    pages = parse_tsv(result.stdout.decode("utf-8", "replace"))
    if not pages:
        raise DocumentError("BadDocumentException", INVALID_FORMAT)
    return pages


def ocr_document(data: bytes, fmt: str, max_pages: int) -> list[Page]:
    """OCR of every page of a checked document; more than max_pages pages -> Unsupported."""
    with tempfile.TemporaryDirectory(prefix="docket-textract-") as tmp:
        work = Path(tmp)
        source = work / f"document.{fmt.lower()}"
        source.write_bytes(data)
        if fmt == "PDF":
            if pdf_page_count(source) > max_pages:
                raise DocumentError("UnsupportedDocumentException", UNSUPPORTED_FORMAT)
            pages: list[Page] = []
            for image in render_pdf(source, work):
                pages.extend(ocr_image(image))
        else:
            pages = ocr_image(source)
        if len(pages) > max_pages:
            raise DocumentError("UnsupportedDocumentException", UNSUPPORTED_FORMAT)
        return pages


# --- blocks -----------------------------------------------------------------------------------


def geometry(box: tuple[int, int, int, int], page: Page) -> dict:
    """A pixel box as AWS Geometry: fractions of the page, polygon clockwise from top-left."""

    def frac(value: float, total: int) -> float:
        return min(max(value / total, 0.0), 1.0) if total else 0.0

    left, top = frac(box[0], page.width), frac(box[1], page.height)
    width = min(frac(box[2], page.width), 1.0 - left)
    height = min(frac(box[3], page.height), 1.0 - top)
    right, bottom = left + width, top + height
    return {
        "BoundingBox": {"Width": width, "Height": height, "Left": left, "Top": top},
        "Polygon": [
            {"X": left, "Y": top},
            {"X": right, "Y": top},
            {"X": right, "Y": bottom},
            {"X": left, "Y": bottom},
        ],
    }


def union(boxes: list[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    left = min(b[0] for b in boxes)
    top = min(b[1] for b in boxes)
    right = max(b[0] + b[2] for b in boxes)
    bottom = max(b[1] + b[3] for b in boxes)
    return left, top, right - left, bottom - top


def page_blocks(page: Page, number: int) -> list[dict]:
    """PAGE, then each LINE followed by its WORDs."""
    page_block = {
        "BlockType": "PAGE",
        "Id": str(uuid.uuid4()),
        "Page": number,
        "Geometry": geometry((0, 0, page.width, page.height), page),
    }
    blocks = [page_block]
    line_ids = []
    for line in page.lines:
        words = [
            {
                "BlockType": "WORD",
                "Id": str(uuid.uuid4()),
                "Page": number,
                "Text": word.text,
                "TextType": "PRINTED",
                "Confidence": word.confidence,
                "Geometry": geometry(word.box, page),
            }
            for word in line.words
        ]
        line_block = {
            "BlockType": "LINE",
            "Id": str(uuid.uuid4()),
            "Page": number,
            "Text": " ".join(word.text for word in line.words),
            "Confidence": sum(w.confidence for w in line.words) / len(line.words),
            "Geometry": geometry(union([w.box for w in line.words]), page),
            "Relationships": [{"Type": "CHILD", "Ids": [w["Id"] for w in words]}],
        }
        line_ids.append(line_block["Id"])
        blocks.append(line_block)
        blocks.extend(words)
    if line_ids:
        page_block["Relationships"] = [{"Type": "CHILD", "Ids": line_ids}]
    return blocks


def document_blocks(pages: list[Page]) -> list[dict]:
    blocks = []
    for number, page in enumerate(pages, start=1):
        blocks.extend(page_blocks(page, number))
    return blocks


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


def run_job(job: Job) -> None:
    """Worker: fetch, check, OCR; records SUCCEEDED or FAILED, then notifies."""
    try:
        data = s3_read(job.account_id, job.region, job.s3_object, ASYNC_MAX_BYTES)
        fmt = check_document(data, ASYNC_MAX_BYTES)
        pages = ocr_document(data, fmt, ASYNC_MAX_PAGES)
        job.blocks, job.pages, job.status = document_blocks(pages), len(pages), "SUCCEEDED"
    except DocumentError as e:
        job.status, job.status_message = "FAILED", e.message
    except Exception as e:
        LOG.exception("textract: job %s failed", job.job_id)
        job.status, job.status_message = "FAILED", f"Internal error: {e}"
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
        document = request.get("Document") or {}
        try:
            if document.get("Bytes") is not None:
                data = document["Bytes"]
            else:
                s3_object = s3_location(document, "Document")
                data = s3_read(context.account_id, context.region, s3_object, SYNC_MAX_BYTES)
            fmt = check_document(data, SYNC_MAX_BYTES)
            pages = ocr_document(data, fmt, max_pages=1)
        except DocumentError as e:
            raise e.to_service_exception() from e
        return {
            "DocumentMetadata": {"Pages": len(pages)},
            "Blocks": document_blocks(pages),
            "DetectDocumentTextModelVersion": MODEL_VERSION,
        }

    @handler("StartDocumentTextDetection", expand=False)
    def start_document_text_detection(self, context: RequestContext, request: dict) -> dict:
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
                state.tokens[token] = (digest, job.job_id)
            state.jobs[job.job_id] = job
        self._pool.submit(run_job, job)
        return {"JobId": job.job_id}

    @handler("GetDocumentTextDetection", expand=False)
    def get_document_text_detection(self, context: RequestContext, request: dict) -> dict:
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
