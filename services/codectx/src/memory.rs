//! Process-wide memory settings.

/// mimalloc's own option for transparent huge pages (`1` keeps them, `0` turns them off).
/// When it is set, codectx leaves the choice to it.
pub const MIMALLOC_ALLOW_THP: &str = "MIMALLOC_ALLOW_THP";

/// Turns transparent huge pages off for this process (Linux `PR_SET_THP_DISABLE`), unless
/// [`MIMALLOC_ALLOW_THP`] is set. Returns whether it did. `codectx index` calls it; the
/// serving commands do not.
///
/// mimalloc asks for huge pages for its arenas and gives freed parts of them back to the
/// kernel; a later write to such a part faults in, and zeroes, a whole 2 MiB page. A cold
/// index of the Python standard library spent 15% of its CPU in the kernel zeroing
/// pages; without huge pages it runs a tenth faster, with half the system time and
/// 20-100 MB less peak memory. Serving is the other way round: the exact vector scan
/// reads 28 MB per search and is 15% slower on small pages (docs/BENCHMARKS.md,
/// "Session of 2026-12-07 (fourth)"). mimalloc decides on huge pages before `main` runs,
/// from its environment; the kernel's flag covers every mapping of the process,
/// including those made earlier.
pub fn transparent_huge_pages_off() -> bool {
    if std::env::var_os(MIMALLOC_ALLOW_THP).is_some() {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        // A kernel without the flag (before 3.15) keeps its pages: nothing else changes.
        rustix::thread::disable_transparent_huge_pages(true).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_flag_is_set_unless_mimalloc_is_told() {
        let told = std::env::var_os(MIMALLOC_ALLOW_THP).is_some();
        let applied = transparent_huge_pages_off();
        assert_eq!(applied, !told);
        if applied {
            assert!(rustix::thread::transparent_huge_pages_are_disabled().unwrap());
        }
    }
}
