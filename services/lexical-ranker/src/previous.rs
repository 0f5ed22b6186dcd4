//! The previous version's index of each code scope, answered from (marked stale) while a
//! newer version loads, with when that newer version was first seen (the stale wait
//! counts from then: during a long rebuild only the first calls wait). One per scope;
//! memory scopes never have one (an agent that wrote a note expects to recall it).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use codectx_errors::Error;

use crate::{Held, IndexKey};

/// A scope's previous index and when the version after it was first seen.
pub(crate) type Previous = (Held, Instant);

/// Scope key → its [`Previous`].
#[derive(Default)]
pub(crate) struct PreviousIndexes {
    by_scope: Mutex<HashMap<String, Previous>>,
}

impl PreviousIndexes {
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, HashMap<String, Previous>>, Error> {
        self.by_scope
            .lock()
            .map_err(|_| Error::internal("previous index lock poisoned"))
    }

    /// A newer version of `held`'s scope was just seen: `held` (the index of the version
    /// it replaces) is the one to answer from until the newer one is in.
    pub(crate) fn replaced(&self, held: Held) -> Result<(), Error> {
        self.lock()?
            .insert(held.0.0.clone(), (held, Instant::now()));
        Ok(())
    }

    /// The index to answer from while `scope`'s newer version loads, and when that
    /// version was first seen.
    pub(crate) fn of(&self, scope: &str) -> Result<Option<Previous>, Error> {
        Ok(self.lock()?.get(scope).cloned())
    }

    /// `key`'s index is in and is its scope's newest: the previous one is forgotten.
    pub(crate) fn loaded(&self, key: &IndexKey) -> Result<(), Error> {
        let mut by_scope = self.lock()?;
        if by_scope
            .get(&key.0)
            .is_some_and(|((held, _), _)| held.1 != key.1)
        {
            by_scope.remove(&key.0);
        }
        Ok(())
    }

    /// `held` finished loading after a newer version of its scope was seen: it is the
    /// newest index there is, so it is answered from while that one loads (keeping when
    /// the newer version was first seen).
    pub(crate) fn superseded(&self, held: Held) -> Result<(), Error> {
        let mut by_scope = self.lock()?;
        let since = by_scope
            .get(&held.0.0)
            .map_or_else(Instant::now, |(_, since)| *since);
        by_scope.insert(held.0.0.clone(), (held, since));
        Ok(())
    }

    /// Forgets `scope`'s previous index (its scope was invalidated).
    pub(crate) fn forget(&self, scope: &str) -> Result<(), Error> {
        self.lock()?.remove(scope);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use codectx_lexical::{LexicalIndex, WordForms};

    use super::*;

    fn held(version: &str) -> Held {
        (
            ("code:gph_a".to_owned(), version.to_owned()),
            Arc::new(LexicalIndex::build_with(Vec::new(), WordForms::Kept)),
        )
    }

    fn version_of(previous: &PreviousIndexes) -> Option<String> {
        previous
            .of("code:gph_a")
            .unwrap()
            .map(|((key, _), _)| key.1)
    }

    /// v1 is answered from while v2 loads, and forgotten once v2 is in.
    #[test]
    fn the_previous_index_stands_until_the_newer_one_is_in() {
        let previous = PreviousIndexes::default();
        previous.replaced(held("v1")).unwrap();
        assert_eq!(version_of(&previous).as_deref(), Some("v1"));
        previous.loaded(&held("v1").0).unwrap();
        assert_eq!(version_of(&previous).as_deref(), Some("v1"));
        previous.loaded(&held("v2").0).unwrap();
        assert_eq!(version_of(&previous), None);
        assert!(previous.of("code:gph_b").unwrap().is_none());
    }

    /// Two re-indexes close together: v3 was seen while v2 loaded. When v2 is in, it
    /// replaces v1 as the index answered from (there was a run where it left none, and
    /// a call waited the whole load wait), keeping when v3 was first seen.
    #[test]
    fn an_index_finished_after_a_newer_version_was_seen_is_answered_from() {
        let previous = PreviousIndexes::default();
        previous.replaced(held("v1")).unwrap();
        let (_, since) = previous.of("code:gph_a").unwrap().unwrap();
        previous.superseded(held("v2")).unwrap();
        let ((key, _), kept_since) = previous.of("code:gph_a").unwrap().unwrap();
        assert_eq!(key.1, "v2");
        assert_eq!(kept_since, since);
        previous.forget("code:gph_a").unwrap();
        assert_eq!(version_of(&previous), None);
    }
}
