//! Deterministic pseudo-random vectors for the unit tests (xorshift, no dependency).

pub(crate) struct Vectors(pub(crate) u64);

impl Vectors {
    /// Uniform in [-0.5, 0.5).
    pub(crate) fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    }

    /// A unit vector.
    pub(crate) fn unit(&mut self, dimension: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dimension).map(|_| self.next()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }
}
