//! Compute kernels of the hot loops, with a portable version and, where the CPU has it,
//! a SIMD one chosen at run time. The SIMD code is the only unsafe code in codectx
//! (ADR 0017); each kernel is tested equal to its portable version.

mod portable;
#[cfg(target_arch = "x86_64")]
mod x86;

/// Writes to `out` (cleared first) the dot product of `query` with each row of `rows`:
/// row-major 8-bit codes, `query.len()` per row; a last partial row is ignored.
///
/// Codes must lie in `[-127, 127]`, as symmetric quantization makes them (the SIMD
/// kernel multiplies `|q|` by `r·sign(q)`, which -128 would overflow). A query holding
/// -128 is answered by the portable kernel.
pub fn dot_rows_i8(rows: &[i8], query: &[i8], out: &mut Vec<i32>) {
    out.clear();
    if query.is_empty() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if x86::available() && !query.contains(&i8::MIN) {
        x86::dot_rows_i8(rows, query, out);
        return;
    }
    portable::dot_rows_i8(rows, query, out);
}

/// The kernel [`dot_rows_i8`] uses on this CPU, for reports.
pub fn dot_kernel() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        return "avx2";
    }
    "portable"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic spread of codes over [-127, 127], extremes included.
    fn codes(count: usize, seed: u64) -> Vec<i8> {
        let mut state = seed | 1;
        (0..count)
            .map(|i| {
                if i % 97 == 0 {
                    return if i % 2 == 0 { 127 } else { -127 };
                }
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                ((state % 255) as i64 - 127) as i8
            })
            .collect()
    }

    #[test]
    fn the_chosen_kernel_equals_the_portable_one() {
        // Dimensions with and without a partial 32-code block, and the largest products.
        for dimension in [1usize, 31, 32, 33, 64, 100, 384, 768] {
            let rows = codes(dimension * 57 + dimension / 2, dimension as u64);
            let query = codes(dimension, 7 + dimension as u64);
            let mut chosen = Vec::new();
            dot_rows_i8(&rows, &query, &mut chosen);
            let mut reference = Vec::new();
            portable::dot_rows_i8(&rows, &query, &mut reference);
            assert_eq!(chosen.len(), 57, "the partial row is ignored");
            assert_eq!(chosen, reference, "dimension {dimension}");
        }
        let extreme = vec![127i8; 384];
        let negative = vec![-127i8; 384];
        let mut out = Vec::new();
        dot_rows_i8(
            &[extreme.clone(), negative.clone()].concat(),
            &negative,
            &mut out,
        );
        assert_eq!(out, vec![-127 * 127 * 384, 127 * 127 * 384]);
    }

    #[test]
    fn a_query_with_minus_128_is_answered_exactly() {
        let query = vec![i8::MIN; 64];
        let rows = vec![-127i8; 64];
        let mut out = Vec::new();
        dot_rows_i8(&rows, &query, &mut out);
        assert_eq!(out, vec![128 * 127 * 64]);
    }

    #[test]
    fn names_its_kernel() {
        assert!(["avx2", "portable"].contains(&dot_kernel()));
    }
}
