"""Textract's document handling: checking a document, OCR with Tesseract, and AWS-shaped Blocks.

No AWS state here (the provider in :mod:`.textract` fetches the bytes and keeps the jobs): bytes in,
``Page`` objects and PAGE/LINE/WORD blocks out. PDFs are rendered with poppler (``pdftoppm -r
200``); Tesseract runs with ``OMP_THREAD_LIMIT=1`` (OpenMP threads are much slower on 2 cores).
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from localstack.aws.api import CommonServiceException

MB = 1024 * 1024
IMAGE_MAX_BYTES = 10 * MB  # PNG and JPEG, in every call
RENDER_DPI = 200
TOOL_TIMEOUT_SECONDS = 300

UNSUPPORTED_FORMAT = "Request has unsupported document format"
INVALID_FORMAT = "Request has invalid document format"


# --- errors -----------------------------------------------------------------------------------


class DocumentError(Exception):
    """A problem with a document, named as the AWS exception a synchronous call would raise."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    def to_service_exception(self) -> CommonServiceException:
        return CommonServiceException(self.code, self.message, status_code=400)


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
        max_bytes = min(max_bytes, IMAGE_MAX_BYTES)
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
