//! Inverted lists: the rows of a namespace too large to scan whole, grouped by their
//! nearest centroid, so a search reads the lists nearest the query only (ADR 0018).
//!
//! Centroids are learned by spherical k-means over the rows' 8-bit codes (a strided
//! sample of at most [`SAMPLE`] rows, [`ITERATIONS`] rounds, deterministic), and kept as
//! 8-bit codes themselves, so assigning a row or ranking the lists for a query is one
//! pass of the same kernel as the scan. A row and a query with the same codes rank the
//! same list first (the first of equal scores), so a stored vector used as a query always
//! reads its own list.

use crate::scan::{Codes, quantize};

/// Most rows a namespace holds and is still scanned whole (exact). Above it, and until it
/// shrinks below half of it, searches read the lists nearest the query.
pub const EXACT_UP_TO: usize = 16_384;

/// Most rows the centroids are learned from.
const SAMPLE: usize = 32_768;

/// Rounds of k-means.
const ITERATIONS: usize = 8;

/// The lists for `rows` rows: about the square root, so a list holds about as many rows
/// as there are lists.
pub fn lists_for(rows: usize) -> usize {
    ((rows as f64).sqrt().round() as usize).clamp(1, 4_096)
}

/// The learned centroids, as 8-bit codes and a scale each (unit vectors).
#[derive(Debug, Clone)]
pub struct Centroids {
    codes: Vec<i8>,
    scales: Vec<f32>,
}

impl Centroids {
    /// How many lists the centroids make.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// Each centroid's similarity to a vector's codes, up to the vector's own scale
    /// (which orders nothing).
    fn scores(&self, codes: &[i8], out: &mut Vec<f32>) {
        let mut dots = Vec::with_capacity(self.len());
        codectx_kernels::dot_rows_i8(&self.codes, codes, &mut dots);
        out.clear();
        out.extend(dots.iter().zip(&self.scales).map(|(d, s)| *d as f32 * s));
    }

    /// The list of a vector with these codes: its most similar centroid, the first of
    /// equals.
    pub fn assign(&self, codes: &[i8]) -> usize {
        let mut scores = Vec::new();
        self.scores(codes, &mut scores);
        first_best(&scores)
    }

    /// The lists by their centroid's similarity to a query with these codes, most
    /// similar first, the first of equals first ([`assign`](Self::assign)'s order).
    pub fn ranked(&self, codes: &[i8]) -> Vec<usize> {
        let mut scores = Vec::new();
        self.scores(codes, &mut scores);
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b)));
        order
    }

    /// Learns `lists` centroids from `count` rows, `row(i)` giving row `i`'s codes and
    /// scale (of a unit vector). Seeds by k-means++ (each next seed drawn with
    /// probability proportional to its squared distance from the seeds so far, from a
    /// fixed pseudo-random sequence), then spherical k-means: each round assigns every
    /// sampled row to its most similar centroid and moves each centroid to the
    /// normalized mean of its rows; a centroid left without rows takes the sampled row
    /// least similar to its own centroid. The result depends on the rows and their
    /// order only.
    pub fn train<'a>(
        dimension: usize,
        count: usize,
        lists: usize,
        row: impl Fn(usize) -> (&'a [i8], f32),
    ) -> Centroids {
        let sampled = count.min(SAMPLE);
        let lists = lists.clamp(1, sampled.max(1));
        // The sample, contiguous: a seed's similarity to every row is one kernel pass.
        let mut codes = Vec::with_capacity(sampled * dimension);
        let mut scales = Vec::with_capacity(sampled);
        for at in 0..sampled {
            let (row_codes, scale) = row(at * count / sampled.max(1));
            codes.extend_from_slice(row_codes);
            scales.push(scale);
        }
        let sample_row = |at: usize| &codes[at * dimension..(at + 1) * dimension];
        let dequantized = |at: usize| -> Vec<f32> {
            sample_row(at)
                .iter()
                .map(|c| f32::from(*c) * scales[at])
                .collect()
        };
        let mut means: Vec<Vec<f32>> = Vec::with_capacity(lists);
        let mut random = Random(0x9e37_79b9_7f4a_7c15);
        let mut distances = vec![f32::INFINITY; sampled];
        let mut dots = Vec::with_capacity(sampled);
        for _ in 0..lists {
            let total: f64 = distances.iter().map(|d| f64::from(d.min(4.0))).sum();
            let seed = if means.is_empty() || total <= 0.0 {
                random.below(sampled)
            } else {
                let mut target = random.unit() * total;
                let mut chosen = sampled - 1;
                for (at, distance) in distances.iter().enumerate() {
                    target -= f64::from(distance.min(4.0));
                    if target < 0.0 {
                        chosen = at;
                        break;
                    }
                }
                chosen
            };
            codectx_kernels::dot_rows_i8(&codes, sample_row(seed), &mut dots);
            for ((distance, dot), scale) in distances.iter_mut().zip(&dots).zip(&scales) {
                let cosine = *dot as f32 * scale * scales[seed];
                *distance = distance.min((2.0 - 2.0 * cosine).max(0.0));
            }
            means.push(dequantized(seed));
        }
        let mut centroids = Centroids::from_means(dimension, &means);
        let mut scores = Vec::new();
        for _ in 0..ITERATIONS {
            let mut sums = vec![vec![0f32; dimension]; lists];
            let mut members = vec![0usize; lists];
            // (similarity to its own centroid, sample index) of each row.
            let mut fits: Vec<(f32, usize)> = Vec::with_capacity(sampled);
            for (at, &scale) in scales.iter().enumerate() {
                let row_codes = sample_row(at);
                centroids.scores(row_codes, &mut scores);
                let best = first_best(&scores);
                members[best] += 1;
                for (sum, code) in sums[best].iter_mut().zip(row_codes) {
                    *sum += f32::from(*code) * scale;
                }
                fits.push((scores[best] * scale, at));
            }
            // Centroids without rows restart at the rows that fit worst.
            fits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut reseeds = fits.iter().map(|(_, at)| *at);
            for (j, mean) in means.iter_mut().enumerate() {
                if members[j] > 0 {
                    *mean = std::mem::take(&mut sums[j]);
                } else if let Some(at) = reseeds.next() {
                    *mean = dequantized(at);
                }
            }
            centroids = Centroids::from_means(dimension, &means);
        }
        centroids
    }

    fn from_means(dimension: usize, means: &[Vec<f32>]) -> Centroids {
        let mut codes = Vec::with_capacity(means.len() * dimension);
        let mut scales = Vec::with_capacity(means.len());
        for mean in means {
            let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt();
            let unit: Vec<f32> = if norm > 0.0 {
                mean.iter().map(|v| v / norm).collect()
            } else {
                mean.clone()
            };
            let Codes {
                codes: coded,
                scale,
                ..
            } = quantize(&unit);
            codes.extend_from_slice(&coded);
            scales.push(scale);
        }
        Centroids { codes, scales }
    }
}

/// xorshift64: the fixed pseudo-random sequence k-means++ draws its seeds from.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }
}

/// The index of the largest score, the first of equals (NaN never wins).
fn first_best(scores: &[f32]) -> usize {
    let mut best = 0;
    for (at, score) in scores.iter().enumerate() {
        if *score > scores[best] || scores[best].is_nan() && !score.is_nan() {
            best = at;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Vectors;

    #[test]
    fn learns_the_clusters_rows_come_from() {
        let dimension = 64;
        let mut random = Vectors(0x2545_f491_4f6c_dd1d);
        let centres: Vec<Vec<f32>> = (0..8).map(|_| random.unit(dimension)).collect();
        let rows: Vec<Codes> = (0..4_000)
            .map(|i| {
                let noise = random.unit(dimension);
                let mixed: Vec<f32> = centres[i % 8]
                    .iter()
                    .zip(&noise)
                    .map(|(c, n)| c + 0.2 * n)
                    .collect();
                quantize(&mixed)
            })
            .collect();
        let centroids = Centroids::train(dimension, rows.len(), 8, |i| {
            (rows[i].codes.as_slice(), rows[i].scale)
        });
        assert_eq!(centroids.len(), 8);
        // Rows of one cluster share a list, and no two clusters share one.
        let lists: Vec<usize> = rows.iter().map(|r| centroids.assign(&r.codes)).collect();
        let mut by_cluster = vec![std::collections::BTreeSet::new(); 8];
        for (i, list) in lists.iter().enumerate() {
            by_cluster[i % 8].insert(*list);
        }
        assert!(
            by_cluster.iter().all(|lists| lists.len() == 1),
            "{by_cluster:?}"
        );
        let distinct: std::collections::BTreeSet<usize> =
            by_cluster.iter().flatten().copied().collect();
        assert_eq!(distinct.len(), 8);
        // Training is deterministic.
        let again = Centroids::train(dimension, rows.len(), 8, |i| {
            (rows[i].codes.as_slice(), rows[i].scale)
        });
        assert_eq!(again.codes, centroids.codes);
    }

    #[test]
    fn a_row_ranks_its_own_list_first() {
        let dimension = 32;
        let mut random = Vectors(7);
        let rows: Vec<Codes> = (0..2_000)
            .map(|_| quantize(&random.unit(dimension)))
            .collect();
        let centroids = Centroids::train(dimension, rows.len(), lists_for(rows.len()), |i| {
            (rows[i].codes.as_slice(), rows[i].scale)
        });
        assert_eq!(centroids.len(), 45);
        for row in &rows {
            assert_eq!(
                centroids.ranked(&row.codes)[0],
                centroids.assign(&row.codes)
            );
        }
    }

    #[test]
    fn more_lists_than_rows_are_as_many_as_the_rows() {
        let rows: Vec<Codes> = [[1.0f32, 0.0], [0.0, 1.0]]
            .iter()
            .map(|v| quantize(v))
            .collect();
        let centroids = Centroids::train(2, rows.len(), 10, |i| {
            (rows[i].codes.as_slice(), rows[i].scale)
        });
        assert_eq!(centroids.len(), 2);
        assert_ne!(
            centroids.assign(&rows[0].codes),
            centroids.assign(&rows[1].codes)
        );
        assert_eq!(first_best(&[f32::NAN, 1.0, 1.0]), 1);
    }
}
