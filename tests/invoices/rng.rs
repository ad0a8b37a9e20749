//! A tiny deterministic generator (splitmix64), so that a seed gives the same invoices on
//! every machine and every run, with no crate to pin.

/// A splitmix64 stream.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The stream of this seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// An independent stream for item `index` of this seed: invoice 7 is the same whether 10
    /// or 48 are drawn.
    pub fn fork(seed: u64, index: u64) -> Rng {
        let mut base = Rng(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        Rng(base.next_u64())
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `low..=high`.
    pub fn range(&mut self, low: i64, high: i64) -> i64 {
        low + (self.next_u64() % (high - low + 1) as u64) as i64
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f32) -> bool {
        self.unit() < p
    }

    /// One of `items` (not empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// `template` with each `#` replaced by a digit, each `%` by a digit other than 0, and each
    /// `@` by a capital letter.
    pub fn pattern(&mut self, template: &str) -> String {
        template
            .chars()
            .map(|c| match c {
                '#' => char::from(b'0' + self.below(10) as u8),
                '%' => char::from(b'1' + self.below(9) as u8),
                '@' => char::from(b'A' + self.below(26) as u8),
                _ => c,
            })
            .collect()
    }
}
