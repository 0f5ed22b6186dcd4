//! The portable kernels: the definition the SIMD ones are tested against.

/// See [`crate::dot_rows_i8`]; any codes, -128 included.
pub(crate) fn dot_rows_i8(rows: &[i8], query: &[i8], out: &mut Vec<i32>) {
    out.extend(rows.chunks_exact(query.len()).map(|row| dot_i8(row, query)));
}

/// Sixteen independent integer sums, which the compiler vectorizes for the baseline CPU.
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0i32; 16];
    let blocks = a.len() / 16;
    for (x, y) in a[..blocks * 16]
        .chunks_exact(16)
        .zip(b[..blocks * 16].chunks_exact(16))
    {
        for ((lane, x), y) in lanes.iter_mut().zip(x).zip(y) {
            *lane += i32::from(*x) * i32::from(*y);
        }
    }
    let mut total: i32 = lanes.iter().sum();
    for (x, y) in a[blocks * 16..].iter().zip(&b[blocks * 16..]) {
        total += i32::from(*x) * i32::from(*y);
    }
    total
}
