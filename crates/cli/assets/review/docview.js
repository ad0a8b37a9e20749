// The document of a task: PDF pages drawn by pdf.js onto canvases, TIFF pages (which browsers
// cannot draw) decoded by UTIF.js onto canvases, other images as <img>, and the outline of each
// field's evidence over its page (positioned in fractions, so it scales with it).

import * as api from "./api.js";
import { h, fieldLabel } from "./ui.js";

const PDFJS = "/assets/vendor/pdfjs/pdf.min.mjs";
const PDFJS_WORKER = "/assets/vendor/pdfjs/pdf.worker.min.mjs";
const SHOWN_IMAGES = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"];

// UTIF.js reads pako (its inflate) as a global when it loads: classic scripts, in this order.
const UTIF_SCRIPTS = ["/assets/vendor/pako/pako_inflate.min.js", "/assets/vendor/utif/UTIF.js"];

let utif = null;
function loadUtif() {
  utif ??= UTIF_SCRIPTS.reduce(
    (before, src) => before.then(() => new Promise((loaded, failed) => {
      document.head.append(h("script", { src, onload: loaded, onerror: () => failed(new Error(`${src} did not load`)) }));
    })),
    Promise.resolve(),
  ).then(() => window.UTIF);
  return utif;
}

// The TIFF compressions UTIF.js decodes (none, CCITT G3/G4, LZW, JPEG old and new, Deflate,
// PackBits); it draws any other as a black page, so such a page is refused before it is drawn.
const TIFF_DEFLATE = 8;
const TIFF_LEGACY_DEFLATE = 32946; // the same zlib stream under its older code (libtiff writes it)
const TIFF_DECODED = [1, 3, 4, 5, 6, 7, TIFF_DEFLATE, 32773];

/** The compression of TIFF page `ifd`, legacy Deflate renamed as the Deflate it is. */
function tiffCompression(ifd) {
  const code = (ifd.t259 && ifd.t259[0]) || 1;
  if (code !== TIFF_LEGACY_DEFLATE) return code;
  ifd.t259 = [TIFF_DEFLATE];
  return TIFF_DEFLATE;
}

/** The pages of a TIFF: its image directories but the reduced-resolution ones (thumbnails). */
function tiffPages(UTIF, bytes) {
  const reduced = (ifd) => ((ifd.t254 && ifd.t254[0]) || 0) & 1;
  return UTIF.decode(bytes).filter((ifd) => !reduced(ifd));
}

let pdfjs = null;
async function loadPdfjs() {
  if (!pdfjs) {
    pdfjs = await import(PDFJS);
    pdfjs.GlobalWorkerOptions.workerSrc = PDFJS_WORKER;
  }
  return pdfjs;
}

function pct(x) {
  return `${Math.min(100, Math.max(0, Number(x) * 100))}%`;
}

/**
 * Draws task `taskId`'s document into `container` (#pages) with the outlines of `evidence`'s
 * fields; `onOutline(field)` is called when an outline is clicked. Answers
 * `{ready, highlight(field), dispose()}`; `ready` settles once every page is drawn.
 */
export function renderDocument(container, taskId, evidence, onOutline) {
  let disposed = false;
  let loading = null; // pdf.js's loading task, which also ends the document's worker
  let objectUrl = null;
  let active = null;
  const boxes = (evidence && evidence.fields) || {};

  function page(number, drawing, label) {
    const el = h("div", { class: "page", dataset: { page: String(number) }, role: "group", "aria-label": label }, drawing);
    for (const [field, where] of Object.entries(boxes)) {
      if (!where || Number(where.page) !== number || !where.box) continue;
      const b = where.box;
      el.append(h("button", {
        type: "button", tabindex: "-1",
        class: field === active ? "outline active" : "outline",
        dataset: { field },
        "aria-label": `${fieldLabel(field)}: where it was read`,
        title: fieldLabel(field),
        // A little air around the words (fractions of the page).
        style: {
          left: pct(b.left - 0.006), top: pct(b.top - 0.004),
          width: pct(b.width + 0.012), height: pct(b.height + 0.008),
        },
        onclick: () => onOutline(field),
      }));
    }
    container.append(el);
    return el;
  }

  function message(text, ...extra) {
    container.append(h("div", { class: "doc-message", role: "note" }, h("p", {}, text), ...extra));
  }

  async function draw() {
    const { blob, type } = await api.getDocument(taskId);
    if (disposed) return;
    objectUrl = URL.createObjectURL(blob);
    const download = h("a", { href: objectUrl, download: `${taskId}`, class: "download" }, "Download the document");
    if (type === "application/pdf") {
      const lib = await loadPdfjs();
      loading = lib.getDocument({ data: new Uint8Array(await blob.arrayBuffer()), isEvalSupported: false });
      const pdf = await loading.promise;
      for (let n = 1; n <= pdf.numPages && !disposed; n++) {
        const p = await pdf.getPage(n);
        const canvas = h("canvas", { role: "img", "aria-label": `Page ${n} of ${pdf.numPages}` });
        const el = page(n, canvas, `Page ${n}`);
        const base = p.getViewport({ scale: 1 });
        const cssWidth = Math.max(container.clientWidth || 0, 700);
        const scale = Math.min(2400, cssWidth * (window.devicePixelRatio || 1)) / base.width;
        const viewport = p.getViewport({ scale });
        canvas.width = Math.floor(viewport.width);
        canvas.height = Math.floor(viewport.height);
        el.style.aspectRatio = `${base.width} / ${base.height}`;
        await p.render({ canvas, viewport }).promise;
        if (!disposed) el.dataset.rendered = "true";
      }
      container.append(h("p", { class: "doc-links" }, download));
    } else if (SHOWN_IMAGES.includes(type)) {
      const img = h("img", { alt: "The document", src: objectUrl });
      const el = page(1, img, "Page 1");
      try {
        await img.decode();
      } catch {
        el.remove();
        message(`This image (${type}) could not be displayed.`, download);
        return;
      }
      if (!disposed) el.dataset.rendered = "true";
      container.append(h("p", { class: "doc-links" }, download));
    } else if (type === "image/tiff") {
      const UTIF = await loadUtif();
      const bytes = await blob.arrayBuffer();
      let pages;
      try {
        pages = tiffPages(UTIF, bytes);
      } catch {
        pages = [];
      }
      if (!pages.length) {
        message("This TIFF image could not be read here; the fields on this page still work.", download);
        return;
      }
      for (let n = 1; n <= pages.length && !disposed; n++) {
        const ifd = pages[n - 1];
        const canvas = h("canvas", { role: "img", "aria-label": `Page ${n} of ${pages.length}` });
        const el = page(n, canvas, `Page ${n}`);
        try {
          const compression = tiffCompression(ifd);
          if (!TIFF_DECODED.includes(compression)) throw new Error(`compression ${compression} is not decoded here`);
          UTIF.decodeImage(bytes, ifd);
          canvas.width = ifd.width;
          canvas.height = ifd.height;
          el.style.aspectRatio = `${ifd.width} / ${ifd.height}`;
          const rgba = new Uint8ClampedArray(UTIF.toRGBA8(ifd).buffer);
          canvas.getContext("2d").putImageData(new ImageData(rgba, ifd.width, ifd.height), 0, 0);
        } catch (e) {
          // An encoding UTIF.js does not decode: this page only.
          el.replaceChildren(h("p", { class: "doc-message" }, `Page ${n} could not be drawn (${e.message}).`));
          continue;
        }
        if (!disposed) el.dataset.rendered = "true";
      }
      container.append(h("p", { class: "doc-links" }, download));
    } else {
      message(`This document's type (${type || "unknown"}) cannot be displayed here; the fields on this page still work.`, download);
    }
  }

  // Scrolls the document's own column (not the window: on a narrow screen the fields are below
  // the document and must stay in view) so that `el` shows.
  function reveal(el) {
    const scroller = container.closest(".doc-col");
    if (!scroller || scroller.scrollHeight <= scroller.clientHeight) return;
    const s = scroller.getBoundingClientRect();
    const r = el.getBoundingClientRect();
    if (r.top < s.top || r.bottom > s.bottom) scroller.scrollTop += r.top - s.top - s.height / 3;
  }

  const ready = draw().catch((e) => {
    if (!disposed) message(`The document could not be shown: ${e.message}`);
    throw e;
  });

  return {
    ready,
    highlight(field) {
      active = field;
      for (const o of container.querySelectorAll(".outline")) {
        const on = o.dataset.field === field;
        o.classList.toggle("active", on);
        if (on) reveal(o);
      }
    },
    dispose() {
      disposed = true;
      loading?.destroy().catch(() => {});
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    },
  };
}
