//! Exact nearest-neighbour scan in two passes: 8-bit codes first, exact scores after.
//!
//! A scan of every float vector reads 1.5 KiB per 384-dimension row; on the Python
//! standard library's code vectors (78k rows, 120 MB) that is bandwidth, not arithmetic,
//! and it was the largest single cost of a loaded stack. Each row is also held as 8-bit
//! codes with a scale (a quarter of the bytes), and the scan:
//! 1. scores every row from its codes, with a bound on how far that score can be from the
//!    exact one (the residuals of the row's and the query's quantization);
//! 2. keeps every row whose score plus its bound reaches the `limit`-th best score minus
//!    its bound: no other row can be in the top `limit` ([`candidates`]);
//! 3. scores those rows exactly from their floats and keeps the best `limit` in row order
//!    ([`best`]).
//!
//! The answer is the exact scan's, rows and scores alike (tested against it); only rows
//! that provably cannot be in it are skipped. Pass 2 needs the floats of a few rows only,
//! so a store can keep the codes in memory and read those floats where they are stored.

/// Rounding slack added to every bound (the bounds are computed in f32).
const SLACK: f32 = 1e-4;

/// A vector as 8-bit codes: `value ≈ scale × code`.
#[derive(Debug, Clone, PartialEq)]
pub struct Codes {
    pub codes: Vec<i8>,
    pub scale: f32,
    /// Euclidean norm of `value - scale × code`.
    pub residual: f32,
    /// Euclidean norm of the vector.
    pub norm: f32,
}

/// Quantizes `values` symmetrically to `[-127, 127]`.
pub fn quantize(values: &[f32]) -> Codes {
    let peak = values.iter().fold(0f32, |m, v| m.max(v.abs()));
    let scale = if peak > 0.0 { peak / 127.0 } else { 1.0 };
    let codes: Vec<i8> = values
        .iter()
        .map(|v| (v / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    let residual = values
        .iter()
        .zip(&codes)
        .map(|(v, c)| {
            let e = v - scale * f32::from(*c);
            e * e
        })
        .sum::<f32>()
        .sqrt();
    let norm = values.iter().map(|v| v * v).sum::<f32>().sqrt();
    Codes {
        codes,
        scale,
        residual,
        norm,
    }
}

/// Dot product with eight independent partial sums, which the compiler turns into SIMD
/// (a plain iterator sum must keep float addition order and stays scalar).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let chunks = a.len() / 8;
    for (x, y) in a[..chunks * 8]
        .chunks_exact(8)
        .zip(b[..chunks * 8].chunks_exact(8))
    {
        for ((lane, x), y) in lanes.iter_mut().zip(x).zip(y) {
            *lane += x * y;
        }
    }
    let mut total: f32 = lanes.iter().sum();
    for (x, y) in a[chunks * 8..].iter().zip(&b[chunks * 8..]) {
        total += x * y;
    }
    total
}

/// The rows a scan runs over: their 8-bit codes, row by row, and per row the codes'
/// scale, residual and the vector's norm. The floats are not needed until pass 2, and
/// only for the rows pass 1 keeps ([`candidates`]).
#[derive(Debug, Clone, Copy)]
pub struct Rows<'a> {
    pub dimension: usize,
    pub codes: &'a [i8],
    pub scales: &'a [f32],
    pub residuals: &'a [f32],
    pub norms: &'a [f32],
}

/// Pass 1: the rows of `segments` that can be among the best `limit` of all of them by
/// exact dot product with the query (`coded`, its codes: [`quantize`]), as (segment,
/// row), in segment then row order. Every other row provably is not: its score from the
/// codes plus its error bound stays below the `limit`-th best lower bound over every
/// segment.
pub fn candidates(segments: &[Rows<'_>], coded: &Codes, limit: usize) -> Vec<(usize, usize)> {
    let dimension = coded.codes.len();
    if limit == 0 || segments.iter().any(|rows| rows.dimension != dimension) {
        return Vec::new();
    }
    // Every row's code dot product, segment after segment (AVX2 where the CPU has it:
    // ADR 0017).
    let mut dots = Vec::with_capacity(segments.iter().map(|rows| rows.scales.len()).sum());
    let mut ends = Vec::with_capacity(segments.len());
    let mut segment_dots = Vec::new();
    for rows in segments {
        codectx_kernels::dot_rows_i8(rows.codes, &coded.codes, &mut segment_dots);
        let scored = segment_dots.len().min(rows.scales.len());
        dots.extend_from_slice(&segment_dots[..scored]);
        ends.push(dots.len());
    }
    let mut start = 0;
    let approximate: Vec<Approximate<'_>> = segments
        .iter()
        .zip(&ends)
        .map(|(rows, &end)| {
            let scored = end - start;
            let segment = Approximate {
                dots: &dots[start..end],
                scales: &rows.scales[..scored],
                norms: &rows.norms[..scored],
                residuals: &rows.residuals[..scored],
                coded_scale: coded.scale,
                coded_residual: coded.residual,
                coded_norm: coded.norm + coded.residual,
            };
            start = end;
            segment
        })
        .collect();
    // The best `limit` lower bounds over every segment, best first.
    let mut lowest: Vec<f32> = Vec::with_capacity(limit + 1);
    for segment in &approximate {
        segment.lower_bounds(limit, &mut lowest);
    }
    let floor = if lowest.len() == limit && dots.len() > limit {
        lowest[limit - 1]
    } else {
        f32::NEG_INFINITY
    };
    let mut kept = Vec::new();
    for (at, segment) in approximate.iter().enumerate() {
        segment.reaching(floor, |row| kept.push((at, row)));
    }
    kept
}

/// Rows per block of the approximate passes: a block's scores are computed together
/// (the compiler vectorizes the loop), then looked at one by one only if one of them
/// can matter.
const BLOCK: usize = 16;

/// The approximate score of each row from its codes, and the bound on its distance from
/// the exact score: |v·q − v̂·q̂| ≤ |v|·|q − q̂| + |v − v̂|·|q̂|. Both are recomputed
/// by each pass rather than stored (the same expressions give the same floats).
struct Approximate<'a> {
    dots: &'a [i32],
    scales: &'a [f32],
    norms: &'a [f32],
    residuals: &'a [f32],
    coded_scale: f32,
    coded_residual: f32,
    /// The query's codes' norm bound, `|q| + |q − q̂|`.
    coded_norm: f32,
}

impl Approximate<'_> {
    /// Rows `start..start + scores.len()`: (score, bound) into `scores` and `bounds`.
    fn block(&self, start: usize, scores: &mut [f32], bounds: &mut [f32]) {
        let end = start + scores.len();
        let rows = self.dots[start..end]
            .iter()
            .zip(&self.scales[start..end])
            .zip(&self.norms[start..end])
            .zip(&self.residuals[start..end]);
        for ((((dot, scale), norm), residual), (score, bound)) in
            rows.zip(scores.iter_mut().zip(bounds.iter_mut()))
        {
            *score = scale * self.coded_scale * *dot as f32;
            *bound = norm * self.coded_residual + residual * self.coded_norm + SLACK;
        }
    }

    /// Merges this segment's lower bounds (score − bound) into `lowest`, the best
    /// `limit` lower bounds seen so far, best first: every row of the exact answer
    /// scores at least the `limit`-th of them once every segment is merged.
    fn lower_bounds(&self, limit: usize, lowest: &mut Vec<f32>) {
        let count = self.dots.len();
        let (mut scores, mut bounds, mut lowers) = ([0f32; BLOCK], [0f32; BLOCK], [0f32; BLOCK]);
        for start in (0..count).step_by(BLOCK) {
            let n = BLOCK.min(count - start);
            self.block(start, &mut scores[..n], &mut bounds[..n]);
            for ((lower, score), bound) in
                lowers[..n].iter_mut().zip(&scores[..n]).zip(&bounds[..n])
            {
                *lower = score - bound;
            }
            if lowest.len() == limit {
                let worst = lowest[limit - 1];
                // No branch per row: most blocks hold no row better than the worst kept
                // (a NaN is looked at one by one, as every row was before).
                let better = lowers[..n]
                    .iter()
                    .filter(|l| **l > worst || l.is_nan())
                    .count();
                if better == 0 {
                    continue;
                }
            }
            for lower in &lowers[..n] {
                if lowest.len() == limit && lowest.last().is_some_and(|worst| *lower <= *worst) {
                    continue;
                }
                let at = lowest.partition_point(|l| *l >= *lower);
                lowest.insert(at, *lower);
                lowest.truncate(limit);
            }
        }
    }

    /// Calls `keep` with each row whose score plus bound reaches `floor`, in row order.
    fn reaching(&self, floor: f32, mut keep: impl FnMut(usize)) {
        let count = self.dots.len();
        let (mut scores, mut bounds) = ([0f32; BLOCK], [0f32; BLOCK]);
        for start in (0..count).step_by(BLOCK) {
            let n = BLOCK.min(count - start);
            self.block(start, &mut scores[..n], &mut bounds[..n]);
            let reach = scores[..n]
                .iter()
                .zip(&bounds[..n])
                .filter(|(score, bound)| *score + *bound >= floor)
                .count();
            if reach == 0 {
                continue;
            }
            for (at, (score, bound)) in scores[..n].iter().zip(&bounds[..n]).enumerate() {
                if *score + *bound >= floor {
                    keep(start + at);
                }
            }
        }
    }
}

/// Pass 2: the best `limit` of `rows` (row, its exact values; given in row order) by
/// exact dot product with `query`, best first (earlier rows first among equal scores),
/// as (score, row).
pub fn best<'v>(
    query: &[f32],
    limit: usize,
    rows: impl IntoIterator<Item = (usize, &'v [f32])>,
) -> Vec<(f32, usize)> {
    let mut best: Vec<(f32, usize)> = Vec::with_capacity(limit + 1);
    if limit == 0 {
        return best;
    }
    for (row, values) in rows {
        if values.len() != query.len() {
            continue;
        }
        let exact = dot(values, query);
        if best.len() == limit && best.last().is_some_and(|(worst, _)| exact <= *worst) {
            continue;
        }
        let at = best.partition_point(|(s, _)| *s >= exact);
        best.insert(at, (exact, row));
        best.truncate(limit);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Vectors;

    /// Both passes over rows whose floats are all at hand, cut into segments at `cuts`
    /// (row indexes, ascending): rows are numbered across segments, in order.
    fn nearest(
        rows: Rows<'_>,
        cuts: &[usize],
        values: &[f32],
        query: &[f32],
        limit: usize,
    ) -> Vec<(f32, usize)> {
        let d = rows.dimension;
        let count = rows.scales.len();
        let mut bounds = vec![0];
        bounds.extend(cuts.iter().copied().filter(|c| *c < count));
        bounds.push(count);
        let segments: Vec<Rows<'_>> = bounds
            .windows(2)
            .map(|w| Rows {
                dimension: d,
                codes: &rows.codes[w[0] * d..w[1] * d],
                scales: &rows.scales[w[0]..w[1]],
                residuals: &rows.residuals[w[0]..w[1]],
                norms: &rows.norms[w[0]..w[1]],
            })
            .collect();
        best(
            query,
            limit,
            candidates(&segments, &quantize(query), limit)
                .into_iter()
                .map(|(segment, row)| bounds[segment] + row)
                .map(|row| (row, &values[row * d..(row + 1) * d])),
        )
    }

    /// The definition: every row scored exactly.
    fn full_scan(
        values: &[f32],
        dimension: usize,
        query: &[f32],
        limit: usize,
    ) -> Vec<(f32, usize)> {
        let mut best: Vec<(f32, usize)> = Vec::new();
        for (row, v) in values.chunks_exact(dimension).enumerate() {
            let score = dot(v, query);
            if best.len() == limit && best.last().is_some_and(|(worst, _)| score <= *worst) {
                continue;
            }
            let at = best.partition_point(|(s, _)| *s >= score);
            best.insert(at, (score, row));
            best.truncate(limit);
        }
        best
    }

    #[test]
    fn answers_exactly_what_a_full_scan_answers() {
        let mut random = Vectors(0x9e37_79b9_7f4a_7c15);
        for (dimension, count) in [(384, 3_000), (7, 500), (33, 40)] {
            let mut values = Vec::new();
            // Clusters and exact duplicates, so near ties and ties are common.
            let centres: Vec<Vec<f32>> = (0..5).map(|_| random.unit(dimension)).collect();
            for row in 0..count {
                let v = if row % 97 == 5 && row > 0 {
                    values[(row - 1) * dimension..row * dimension].to_vec()
                } else {
                    let centre = &centres[row % centres.len()];
                    let noise = random.unit(dimension);
                    let mixed: Vec<f32> = centre
                        .iter()
                        .zip(&noise)
                        .map(|(c, n)| c + 0.05 * n)
                        .collect();
                    let n = mixed.iter().map(|x| x * x).sum::<f32>().sqrt();
                    mixed.into_iter().map(|x| x / n).collect()
                };
                values.extend(v);
            }
            let coded: Vec<Codes> = values.chunks_exact(dimension).map(quantize).collect();
            let codes: Vec<i8> = coded.iter().flat_map(|c| c.codes.clone()).collect();
            let scales: Vec<f32> = coded.iter().map(|c| c.scale).collect();
            let residuals: Vec<f32> = coded.iter().map(|c| c.residual).collect();
            let norms: Vec<f32> = coded.iter().map(|c| c.norm).collect();
            let rows = Rows {
                dimension,
                codes: &codes,
                scales: &scales,
                residuals: &residuals,
                norms: &norms,
            };
            for query in 0..20 {
                let q = if query % 4 == 0 {
                    values[query * dimension..(query + 1) * dimension].to_vec()
                } else {
                    random.unit(dimension)
                };
                // Whole, and in segments: empty ones, one of a single row, uneven ones.
                let cut_sets: [&[usize]; 3] =
                    [&[], &[0, 0, 1, 17, 17, 250], &[count / 3, count / 2]];
                for cuts in cut_sets {
                    for limit in [1, 10, 50, count + 3] {
                        assert_eq!(
                            nearest(rows, cuts, &values, &q, limit),
                            full_scan(&values, dimension, &q, limit),
                            "dimension {dimension}, query {query}, limit {limit}, cuts {cuts:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn codes_reconstruct_within_their_residual() {
        let values = [0.5f32, -0.25, 0.125, 0.0, -0.5];
        let coded = quantize(&values);
        assert_eq!(coded.codes[0], 127);
        assert_eq!(coded.codes[4], -127);
        let error: f32 = values
            .iter()
            .zip(&coded.codes)
            .map(|(v, c)| (v - coded.scale * f32::from(*c)).powi(2))
            .sum::<f32>()
            .sqrt();
        assert!((error - coded.residual).abs() < 1e-6);
        assert_eq!(quantize(&[0.0, 0.0]).codes, vec![0, 0]);
    }
}
