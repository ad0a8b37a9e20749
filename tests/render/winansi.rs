//! WinAnsiEncoding (PDF 32000-1, Annex D), the encoding our pages give the standard Type1 fonts:
//! the code of each character they can show, and PDF string literals of encoded text.

/// What codes 0x80 to 0x9F stand for; `'\0'` where the encoding leaves a code unused.
const HIGH: [char; 32] = [
    '€', '\0', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\0', 'Ž', '\0', //
    '\0', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\0', 'ž', 'Ÿ',
];

/// The WinAnsi code of `c`, if the encoding has one: ASCII, Latin-1 (which WinAnsi keeps at
/// the same codes), and the Windows-1252 extras (€, typographic quotes and dashes, Œ, ...).
pub fn code(c: char) -> Option<u8> {
    match c {
        ' '..='~' | '\u{a0}'..='\u{ff}' => Some(c as u32 as u8),
        '\0' => None,
        _ => HIGH.iter().position(|&h| h == c).map(|i| 0x80 + i as u8),
    }
}

/// A PDF string literal of these codes: backslash and parentheses escaped, and every byte
/// outside printable ASCII as an octal escape, so that a content stream stays ASCII text.
pub fn literal(codes: &[u8]) -> String {
    let mut out = String::with_capacity(codes.len() + 2);
    out.push('(');
    for &b in codes {
        match b {
            b'\\' | b'(' | b')' => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push(')');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_letters_keep_their_code_and_windows_extras_move_below_0xa0() {
        assert_eq!(code('é'), Some(0xe9));
        assert_eq!(code('ß'), Some(0xdf));
        assert_eq!(code('£'), Some(0xa3));
        assert_eq!(code('€'), Some(0x80));
        assert_eq!(code('œ'), Some(0x9c));
        assert_eq!(code('₹'), None);
        assert_eq!(code('\0'), None);
    }

    #[test]
    fn literals_escape_delimiters_and_high_bytes() {
        assert_eq!(literal(b"a(b)\\c"), "(a\\(b\\)\\\\c)");
        assert_eq!(literal(&[b'1', 0x80]), "(1\\200)");
    }
}
