"""Unit tests of the Textract emulation's document handling (no LocalStack needed, but the
module imports LocalStack: run with the project venv from infra/localstack:

    ../../.venv/bin/python -m unittest tests/test_textract_blocks.py
"""

import unittest

from localstack.aws.api import CommonServiceException

from docket_localstack import textract, textract_ocr

TSV = "\n".join(
    [
        "\t".join(
            [
                "level",
                "page_num",
                "block_num",
                "par_num",
                "line_num",
                "word_num",
                "left",
                "top",
                "width",
                "height",
                "conf",
                "text",
            ]
        ),
        "1\t1\t0\t0\t0\t0\t0\t0\t1000\t2000\t-1\t",
        "2\t1\t1\t0\t0\t0\t100\t100\t500\t100\t-1\t",
        "3\t1\t1\t1\t0\t0\t100\t100\t500\t100\t-1\t",
        "4\t1\t1\t1\t1\t0\t100\t100\t500\t100\t-1\t",
        "5\t1\t1\t1\t1\t1\t100\t100\t200\t100\t96.5\tINVOICE",
        "5\t1\t1\t1\t1\t2\t350\t100\t250\t100\t90.5\tINV-2026-0042",
        "5\t1\t1\t1\t1\t3\t650\t100\t10\t100\t95\t ",
    ]
)


def one_page_pdf(text_lines):
    """A minimal one-page PDF (Helvetica) with correct xref offsets."""
    stream = "BT /F1 24 Tf 72 720 Td 30 TL " + " ".join(f"({t}) '" for t in text_lines) + " ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        "/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n".encode()
    out += f"startxref\n{xref}\n%%EOF\n".encode()
    return out


class BlocksTest(unittest.TestCase):
    def test_tsv_words_become_line_and_word_blocks_with_page_fractions(self):
        pages = textract_ocr.parse_tsv(TSV)
        blocks = textract_ocr.document_blocks(pages)

        kinds = [b["BlockType"] for b in blocks]
        self.assertEqual(kinds, ["PAGE", "LINE", "WORD", "WORD"])
        page, line, first, second = blocks
        self.assertEqual(line["Text"], "INVOICE INV-2026-0042")
        self.assertAlmostEqual(line["Confidence"], 93.5)
        self.assertEqual(page["Relationships"], [{"Type": "CHILD", "Ids": [line["Id"]]}])
        self.assertEqual(line["Relationships"][0]["Ids"], [first["Id"], second["Id"]])
        box = first["Geometry"]["BoundingBox"]
        for key, value in {"Width": 0.2, "Height": 0.05, "Left": 0.1, "Top": 0.05}.items():
            self.assertAlmostEqual(box[key], value)
        corner = first["Geometry"]["Polygon"][2]
        self.assertAlmostEqual(corner["X"], 0.3)
        self.assertAlmostEqual(corner["Y"], 0.1)
        self.assertEqual(first["TextType"], "PRINTED")
        self.assertNotIn("Confidence", page)

    def test_magic_bytes_decide_supported_and_empty_is_bad(self):
        self.assertEqual(textract_ocr.check_document(b"%PDF-1.7 ...", 100), "PDF")
        with self.assertRaises(textract_ocr.DocumentError) as e:
            textract_ocr.check_document(b"hello world", 100)
        self.assertEqual(e.exception.code, "UnsupportedDocumentException")
        with self.assertRaises(textract_ocr.DocumentError) as e:
            textract_ocr.check_document(b"", 100)
        self.assertEqual(e.exception.code, "BadDocumentException")
        with self.assertRaises(textract_ocr.DocumentError) as e:
            textract_ocr.check_document(b"%PDF-" + b"x" * 200, 100)
        self.assertEqual(e.exception.code, "DocumentTooLargeException")

    def test_corrupt_pdf_is_a_bad_document(self):
        with self.assertRaises(textract_ocr.DocumentError) as e:
            textract_ocr.ocr_document(b"%PDF-1.4\ngarbage", "PDF", max_pages=1)
        self.assertEqual(e.exception.code, "BadDocumentException")

    def test_known_text_pdf_is_read_by_tesseract(self):
        pdf = one_page_pdf(["INVOICE", "Number INV-2026-0042", "Total 1234.56 EUR"])
        pages = textract_ocr.ocr_document(pdf, "PDF", max_pages=1)

        words = [w.text for line in pages[0].lines for w in line.words]
        self.assertIn("INVOICE", words)
        self.assertIn("INV-2026-0042", words)

    def test_paging_token_belongs_to_its_job(self):
        token = textract.encode_token("job-a", 5)
        self.assertEqual(textract.decode_token(token, "job-a"), 5)
        with self.assertRaises(CommonServiceException):
            textract.decode_token(token, "job-b")


if __name__ == "__main__":
    unittest.main()
