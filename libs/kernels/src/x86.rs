//! AVX2 kernels (x86-64, chosen at run time). The only unsafe code in codectx (ADR 0017):
//! unaligned loads from slices whose length is checked, and calls into functions compiled
//! for AVX2 once the CPU is known to have it.
#![allow(unsafe_code)]

use std::arch::x86_64::{
    __m256i, _mm_add_epi32, _mm_cvtsi128_si32, _mm_shuffle_epi32, _mm256_abs_epi8,
    _mm256_add_epi32, _mm256_castsi256_si128, _mm256_extracti128_si256, _mm256_loadu_si256,
    _mm256_madd_epi16, _mm256_maddubs_epi16, _mm256_set1_epi16, _mm256_setzero_si256,
    _mm256_sign_epi8,
};

/// Codes per AVX2 register.
const BLOCK: usize = 32;

pub(crate) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// See [`crate::dot_rows_i8`]. The caller has checked [`available`] and that the query
/// holds no -128.
pub(crate) fn dot_rows_i8(rows: &[i8], query: &[i8], out: &mut Vec<i32>) {
    assert!(available(), "the AVX2 kernel needs AVX2");
    // SAFETY: the CPU supports AVX2 (asserted above), the only requirement of a function
    // compiled with `target_feature(enable = "avx2")`.
    unsafe { dot_rows_avx2(rows, query, out) }
}

/// 32 codes from `block`, which holds exactly 32.
#[target_feature(enable = "avx2")]
fn load(block: &[i8]) -> __m256i {
    assert_eq!(block.len(), BLOCK);
    // SAFETY: `block` holds 32 readable bytes (asserted), and the load is unaligned.
    unsafe { _mm256_loadu_si256(block.as_ptr().cast()) }
}

/// For each row, per block of 32 codes: `maddubs(|q|, r·sign(q))` sums pairs of products
/// into 16-bit lanes (at most 2 × 127 × 127 = 32,258: no saturation with codes in
/// [-127, 127]), `madd` with ones widens pairs of those into 32-bit lanes, and the lanes
/// are added once per row. Codes past the last full block are summed one by one.
#[target_feature(enable = "avx2")]
fn dot_rows_avx2(rows: &[i8], query: &[i8], out: &mut Vec<i32>) {
    let dimension = query.len();
    let blocks = dimension / BLOCK;
    let split = blocks * BLOCK;
    let signs: Vec<__m256i> = query[..split]
        .chunks_exact(BLOCK)
        .map(|block| load(block))
        .collect();
    let magnitudes: Vec<__m256i> = signs.iter().map(|q| _mm256_abs_epi8(*q)).collect();
    let ones = _mm256_set1_epi16(1);
    out.reserve(rows.len() / dimension);
    for row in rows.chunks_exact(dimension) {
        let mut sum = _mm256_setzero_si256();
        for ((block, sign), magnitude) in row[..split]
            .chunks_exact(BLOCK)
            .zip(&signs)
            .zip(&magnitudes)
        {
            let signed = _mm256_sign_epi8(load(block), *sign);
            let pairs = _mm256_maddubs_epi16(*magnitude, signed);
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, ones));
        }
        let half = _mm_add_epi32(
            _mm256_castsi256_si128(sum),
            _mm256_extracti128_si256::<1>(sum),
        );
        let quarter = _mm_add_epi32(half, _mm_shuffle_epi32::<0b0100_1110>(half));
        let total = _mm_add_epi32(quarter, _mm_shuffle_epi32::<0b1011_0001>(quarter));
        let mut dot = _mm_cvtsi128_si32(total);
        for (r, q) in row[split..].iter().zip(&query[split..]) {
            dot += i32::from(*r) * i32::from(*q);
        }
        out.push(dot);
    }
}
