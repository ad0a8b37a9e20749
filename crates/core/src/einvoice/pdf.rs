//! The files a PDF carries attached (PDF/A-3's embedded files, where Factur-X and ZUGFeRD put
//! their XML), read from the stream objects in the clear, as `pages.rs` reads page objects.
//!
//! An embedded file is a stream whose dictionary says `/Type /EmbeddedFile`, or names an XML
//! MIME type as its `/Subtype` (the type is optional in PDF, the subtype required by PDF/A-3).
//! Streams are never inside object streams, so compressed cross-reference tables hide none of
//! them; an encrypted PDF's streams are unreadable and give nothing. The only filter decoded is
//! `FlateDecode` without a predictor (what every producer writes for an attachment); a stream
//! under any other filter is passed over.

use miniz_oxide::inflate::decompress_to_vec_zlib_with_limit;

use crate::pages::find;
use regex::bytes::Regex;
use std::sync::LazyLock;

/// The largest attachment read, decoded: an e-invoice's XML is tens of kilobytes; a larger
/// stream (an attached spreadsheet, or a deflate bomb) is passed over.
pub const MAX_ATTACHMENT_BYTES: usize = 4 * 1024 * 1024;

/// How far before its `stream` keyword a stream's dictionary may start.
const MAX_DICTIONARY_BYTES: usize = 4096;

static EMBEDDED_FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"/Type\s*/EmbeddedFile\b|/Subtype\s*/(?:text|application)#2[Ff](?:[a-z.+-]*\+)?xml\b",
    )
    .expect("the embedded file pattern")
});
static FILTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"/Filter\s*(\[)?\s*/([A-Za-z0-9]+)\s*(\])?").expect("the filter pattern")
});
static DIRECT_LENGTH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"/Length\s+(\d+)(\s+\d+\s+R)?").expect("the length pattern"));

/// The most embedded files decoded in one document: an e-invoice is one of a few attachments;
/// a PDF of thousands (each up to the limit) would cost validate its memory and its time.
pub const MAX_ATTACHMENTS: usize = 16;

/// The decoded content of each embedded file of `pdf` that can be read, in file order, one at a
/// time (a caller that stops at the e-invoice decodes none after it), at most
/// [`MAX_ATTACHMENTS`] of them.
pub fn attachments(pdf: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(at) = find(&pdf[from..], b"stream") {
            let keyword = from + at;
            from = keyword + b"stream".len();
            if keyword >= 3 && &pdf[keyword - 3..keyword] == b"end" {
                continue;
            }
            let Some(dictionary) = dictionary_before(pdf, keyword) else {
                continue;
            };
            if !EMBEDDED_FILE.is_match(dictionary) {
                continue;
            }
            let Some((data, end)) = stream_data(pdf, from, dictionary) else {
                continue;
            };
            from = end;
            return Some(decode(dictionary, data));
        }
        None
    })
    .take(MAX_ATTACHMENTS)
    .flatten()
}

/// The object's text between its `obj` keyword and `stream`, when it is a dictionary.
fn dictionary_before(pdf: &[u8], keyword: usize) -> Option<&[u8]> {
    let start = keyword.saturating_sub(MAX_DICTIONARY_BYTES);
    let window = &pdf[start..keyword];
    let obj = rfind(window, b"obj")?;
    let dictionary = &window[obj + b"obj".len()..];
    let trimmed = dictionary.trim_ascii();
    (trimmed.starts_with(b"<<")
        && trimmed.ends_with(b">>")
        && find(dictionary, b"endobj").is_none())
    .then_some(trimmed)
}

/// The stream's bytes after `stream` and its end of line, and where they end: `/Length` long
/// when it is a direct number that `endstream` follows, else up to `endstream`.
fn stream_data<'a>(
    pdf: &'a [u8],
    after_keyword: usize,
    dictionary: &[u8],
) -> Option<(&'a [u8], usize)> {
    let rest = &pdf[after_keyword..];
    let skip = if rest.starts_with(b"\r\n") {
        2
    } else if rest.starts_with(b"\n") || rest.starts_with(b"\r") {
        1
    } else {
        return None;
    };
    let start = after_keyword + skip;
    let direct = DIRECT_LENGTH
        .captures(dictionary)
        .filter(|c| c.get(2).is_none())
        .and_then(|c| std::str::from_utf8(&c[1]).ok()?.parse::<usize>().ok())
        .filter(|&len| {
            pdf.get(start + len..)
                .is_some_and(|tail| tail.trim_ascii_start().starts_with(b"endstream"))
        });
    let end = match direct {
        Some(len) => start + len,
        None => {
            let end = start + find(&pdf[start..], b"endstream")?;
            // The end of line before `endstream` is not the stream's.
            let data = &pdf[start..end];
            start
                + data
                    .strip_suffix(b"\n")
                    .map_or(data, |d| d.strip_suffix(b"\r").unwrap_or(d))
                    .len()
        }
    };
    Some((&pdf[start..end], end))
}

/// The stream decoded: as it is without a filter, inflated under `FlateDecode`; `None` under
/// any other filter, a predictor, or when it does not inflate within the limit.
fn decode(dictionary: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    let Some(filter) = FILTER.captures(dictionary) else {
        return (data.len() <= MAX_ATTACHMENT_BYTES).then(|| data.to_vec());
    };
    // `[/FlateDecode /ASCII85Decode]`: a chain of filters, which no producer writes for one.
    let chained = filter.get(1).is_some() && filter.get(3).is_none();
    if &filter[2] != b"FlateDecode" || chained || find(dictionary, b"/Predictor").is_some() {
        return None;
    }
    decompress_to_vec_zlib_with_limit(data, MAX_ATTACHMENT_BYTES).ok()
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}
