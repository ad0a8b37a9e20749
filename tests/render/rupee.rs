//! The rupee sign (₹, U+20B9), which neither WinAnsiEncoding nor the standard fonts have: a
//! one-glyph Type3 font that draws it with strokes, and a ToUnicode map so that text
//! extraction reads it back as ₹. Its one code is `A`.

/// The code of ₹ in this font.
pub const CODE: u8 = b'A';

/// The glyph's advance, in thousandths of the size (a digit's in Helvetica).
pub const ADVANCE: u16 = 556;

/// The font dictionary, given the object numbers of the glyph's procedure and the ToUnicode map.
pub fn font(glyph: usize, to_unicode: usize) -> String {
    format!(
        "<< /Type /Font /Subtype /Type3 /FontBBox [0 -30 560 730] \
         /FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << /rupee {glyph} 0 R >> \
         /Encoding << /Type /Encoding /Differences [{CODE} /rupee] >> \
         /FirstChar {CODE} /LastChar {CODE} /Widths [{ADVANCE}] /Resources << >> \
         /ToUnicode {to_unicode} 0 R >>"
    )
}

/// The glyph: two bars, the bowl hanging from the upper one, and the diagonal leg. `d1` makes
/// it take the colour of the text it sits in.
pub const GLYPH: &str = "556 0 30 -30 530 730 d1 60 w 0 J \
    60 665 m 500 665 l S 60 520 m 500 520 l S \
    230 665 m 350 665 400 600 400 520 c 400 440 340 380 230 380 c 60 380 l S \
    130 380 m 450 0 l S";

/// The ToUnicode CMap: code `A` is U+20B9.
pub const TO_UNICODE: &str = "/CIDInit /ProcSet findresource begin 12 dict begin begincmap \
    /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def \
    /CMapName /Adobe-Identity-UCS def /CMapType 2 def \
    1 begincodespacerange <00> <FF> endcodespacerange \
    1 beginbfchar <41> <20B9> endbfchar \
    endcmap CMapName currentdict /CMap defineresource pop end end";
