//! The standard Type1 fonts a page uses and their advance widths, so that text can be
//! right-aligned or centred without embedding a font. Widths are Adobe's AFM metrics for
//! ASCII (poppler substitutes metric-compatible URW fonts, so they hold on screen too); an
//! accented letter takes its base letter's width, which is close enough to align columns.

/// A standard Type1 font, shown in WinAnsiEncoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Font {
    Helvetica,
    HelveticaBold,
    TimesRoman,
    Courier,
}

/// How a run of text is set: font, size in points, and grey level (0 black, 1 white).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Style {
    pub font: Font,
    pub size: f32,
    pub grey: f32,
}

impl Font {
    /// Every font, in the order of their resource names `/F1`..`/F4`.
    pub const ALL: [Font; 4] = [
        Font::Helvetica,
        Font::HelveticaBold,
        Font::TimesRoman,
        Font::Courier,
    ];

    /// This font at `size` points, in black.
    pub const fn at(self, size: f32) -> Style {
        Style {
            font: self,
            size,
            grey: 0.0,
        }
    }

    /// The PostScript name the PDF asks for.
    pub fn base_font(self) -> &'static str {
        match self {
            Font::Helvetica => "Helvetica",
            Font::HelveticaBold => "Helvetica-Bold",
            Font::TimesRoman => "Times-Roman",
            Font::Courier => "Courier",
        }
    }

    /// The name of the font in a page's resources.
    pub fn resource(self) -> &'static str {
        match self {
            Font::Helvetica => "F1",
            Font::HelveticaBold => "F2",
            Font::TimesRoman => "F3",
            Font::Courier => "F4",
        }
    }

    /// The advance of `c` in thousandths of the font size.
    pub fn advance(self, c: char) -> u16 {
        let table = match self {
            Font::Courier => return 600,
            Font::Helvetica => &HELVETICA,
            Font::HelveticaBold => &HELVETICA_BOLD,
            Font::TimesRoman => &TIMES_ROMAN,
        };
        let c = match c {
            ' '..='~' => c,
            // The rupee sign comes from our own Type3 font (see `rupee`), as wide as a digit.
            '₹' => return 556,
            _ => base_letter(c),
        };
        table[c as usize - 32]
    }
}

impl Style {
    /// The same style in a grey level (0 black, 1 white).
    pub fn grey(self, grey: f32) -> Style {
        Style { grey, ..self }
    }

    /// The same font and grey at another size.
    pub fn size(self, size: f32) -> Style {
        Style { size, ..self }
    }

    /// The width of `text` in points.
    pub fn width(&self, text: &str) -> f32 {
        let units: u32 = text.chars().map(|c| u32::from(self.font.advance(c))).sum();
        units as f32 * self.size / 1000.0
    }
}

/// The ASCII character whose width stands in for `c`: the base letter of an accented one, a
/// digit for a currency sign or a dash (as wide in these fonts), else `o`.
fn base_letter(c: char) -> char {
    match c {
        'à'..='å' => 'a',
        'À'..='Å' => 'A',
        'ç' => 'c',
        'Ç' => 'C',
        'è'..='ë' => 'e',
        'È'..='Ë' => 'E',
        'ì'..='ï' => 'i',
        'Ì'..='Ï' => 'I',
        'ñ' => 'n',
        'Ñ' => 'N',
        'ò'..='ö' | 'ø' => 'o',
        'Ò'..='Ö' | 'Ø' => 'O',
        'ù'..='ü' => 'u',
        'Ù'..='Ü' => 'U',
        'ß' => 'B',
        '\u{a0}' => ' ',
        '·' => '.',
        '’' | '‘' => '\'',
        '€' | '£' | '–' | '«' | '»' => '0',
        _ => 'o',
    }
}

/// Helvetica, codes 32 to 126.
#[rustfmt::skip]
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];

/// Helvetica-Bold, codes 32 to 126.
#[rustfmt::skip]
const HELVETICA_BOLD: [u16; 95] = [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611,
    975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556,
    333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,
    611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
];

/// Times-Roman, codes 32 to 126.
#[rustfmt::skip]
const TIMES_ROMAN: [u16; 95] = [
    250, 333, 408, 500, 500, 833, 778, 180, 333, 333, 500, 564, 250, 333, 250, 278,
    500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 278, 278, 564, 564, 564, 444,
    921, 722, 667, 667, 722, 611, 556, 722, 722, 333, 389, 722, 611, 889, 722, 722,
    556, 722, 667, 556, 611, 722, 722, 944, 722, 722, 611, 333, 278, 333, 469, 500,
    333, 444, 500, 444, 500, 444, 333, 500, 500, 278, 278, 500, 278, 778, 500, 500,
    500, 500, 333, 389, 278, 500, 500, 722, 500, 500, 444, 480, 200, 480, 541,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_the_afm_metrics() {
        // T 611, o 556, t 278, a 556, l 222.
        assert!((Font::Helvetica.at(10.0).width("Total") - 22.23).abs() < 1e-4);
        assert_eq!(Font::Courier.at(10.0).width("abc"), 18.0);
        assert_eq!(Font::HelveticaBold.advance('W'), 944);
        assert_eq!(Font::TimesRoman.advance('é'), Font::TimesRoman.advance('e'));
    }
}
