//! Process-wide memory settings.

/// mimalloc's own option for transparent huge pages (`1` keeps them, `0` turns them off).
/// When it is set, codectx leaves the choice to it.
pub const MIMALLOC_ALLOW_THP: &str = "MIMALLOC_ALLOW_THP";

/// Transparent huge pages off for this process (Linux `PR_SET_THP_DISABLE`) while it
/// lives, unless [`MIMALLOC_ALLOW_THP`] is set; back on when dropped. `codectx index`
/// holds one for its whole run, `codectx up --index` for its first index only.
///
/// mimalloc asks for huge pages for its arenas and gives freed parts of them back to the
/// kernel; a later write to such a part faults in, and zeroes, a whole 2 MiB page. A cold
/// index of the Python standard library spent 15% of its CPU in the kernel zeroing
/// pages; without huge pages it runs a tenth faster, with a third of the system time
/// and 80-90 MB less peak memory. Serving is the other way round: the exact vector scan
/// reads 28 MB per search and is 15% slower on small pages (docs/BENCHMARKS.md,
/// "Session of 2026-12-07 (fourth)"). mimalloc decides on huge pages before `main` runs,
/// from its environment; the kernel's flag covers every mapping of the process,
/// including those made earlier, and every fault after it changes.
#[derive(Debug)]
#[must_use = "huge pages come back when this is dropped"]
pub struct SmallPages {
    applied: bool,
}

impl SmallPages {
    /// Turns huge pages off, unless mimalloc's option says otherwise or they are off
    /// already (a parent's flag, inherited: left as it is, also when this is dropped).
    pub fn begin() -> SmallPages {
        if std::env::var_os(MIMALLOC_ALLOW_THP).is_some() || already_disabled() {
            return SmallPages { applied: false };
        }
        SmallPages {
            // A kernel without the flag (before 3.15) keeps its pages: nothing else
            // changes.
            applied: set_disabled(true),
        }
    }

    /// Whether this turned huge pages off.
    pub fn applied(&self) -> bool {
        self.applied
    }
}

impl Drop for SmallPages {
    fn drop(&mut self) {
        if self.applied {
            set_disabled(false);
        }
    }
}

fn already_disabled() -> bool {
    #[cfg(target_os = "linux")]
    {
        rustix::thread::transparent_huge_pages_are_disabled().unwrap_or(false)
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

fn set_disabled(disabled: bool) -> bool {
    #[cfg(target_os = "linux")]
    {
        rustix::thread::disable_transparent_huge_pages(disabled).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = disabled;
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn small_pages_last_as_long_as_the_guard_unless_mimalloc_is_told() {
        let told = std::env::var_os(MIMALLOC_ALLOW_THP).is_some();
        let before = rustix::thread::transparent_huge_pages_are_disabled().unwrap();
        let guard = SmallPages::begin();
        assert_eq!(guard.applied(), !told && !before);
        if !told {
            assert!(rustix::thread::transparent_huge_pages_are_disabled().unwrap());
        }
        drop(guard);
        // Back to what it was: on, or a flag this process inherited.
        assert_eq!(
            rustix::thread::transparent_huge_pages_are_disabled().unwrap(),
            before
        );
    }
}
