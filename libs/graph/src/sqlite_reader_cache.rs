//! What a reader connection remembers between reads, for as long as the file is unchanged.
//!
//! A hub's window is the costliest bounded read the store serves: its first 500 edges in
//! (kind, path, line) order, which SQLite can only find by looking up and sorting every
//! one of the hub's edges (the 34,123 callers of `unittest.TestCase.assertEqual` take
//! 24 ms). Hubs are, by what makes them hubs, the nodes many questions reach. So each
//! reader keeps the ranked windows it read light (more than [`crate::LIGHT_WINDOW`]
//! edges; a smaller window costs less to read again than to keep), and the graph ids it
//! resolved, and forgets them all when `PRAGMA data_version` says another connection
//! committed since.
//!
//! `data_version` changes when any other connection commits, in this process or in
//! another (`codectx index` writing the file while `codectx up` serves it); it does not
//! change for the connection's own commits, which is why only readers, which never
//! write, keep a cache. It is read inside the read's own transaction, so what is
//! remembered and what the read sees are the same snapshot.

use std::collections::HashMap;

use codectx_errors::Error;
use rusqlite::Connection;

use crate::model::{Direction, EdgeKind};
use crate::sqlite::storage;
use crate::{RankedWindow, WindowRequest};

/// Ranked windows a reader keeps at most; the least recently used goes first. A kept
/// window holds at most its request's `keep` light nodes (the hydrator asks 10-200) and,
/// for depth-2 expansions, the ids of the window's neighbours (at most 500).
pub(crate) const WINDOWS: usize = 128;

/// A window's request, whole: everything its answer depends on besides the file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct WindowKey {
    gid: i64,
    root: String,
    kinds: Vec<EdgeKind>,
    direction: Direction,
    limit: usize,
    keep: Option<usize>,
    root_path: String,
    root_name: String,
    seen: bool,
}

impl WindowKey {
    fn of(gid: i64, request: &WindowRequest) -> Self {
        let edges = &request.edges;
        Self {
            gid,
            root: edges.root.clone(),
            kinds: edges.kinds.clone(),
            direction: edges.direction,
            limit: edges.limit,
            keep: edges.keep,
            root_path: request.root_path.clone(),
            root_name: request.root_name.clone(),
            seen: request.seen,
        }
    }
}

/// One reader's memory of the file as of `data_version`.
#[derive(Debug, Default)]
pub(crate) struct ReaderCache {
    /// The `data_version` everything below was read at; None before the first read.
    version: Option<i64>,
    gids: HashMap<String, Option<i64>>,
    windows: HashMap<WindowKey, (u64, RankedWindow)>,
    /// Ticks of use, for the least recently used window.
    clock: u64,
    /// Whether this cache is kept between reads (a reader's); a read on the writer's
    /// connection gets one that is not, and never consults it.
    kept: bool,
}

impl ReaderCache {
    /// A cache kept by a reader connection.
    pub(crate) fn kept() -> Self {
        Self {
            kept: true,
            ..Self::default()
        }
    }

    /// A cache for one read only (the writer's connection): it remembers nothing.
    pub(crate) fn none() -> Self {
        Self::default()
    }

    /// Forgets everything when the file changed since the last read. Called once per
    /// read, inside its transaction, before anything is looked up.
    pub(crate) fn validate(&mut self, c: &Connection) -> Result<(), Error> {
        if !self.kept {
            return Ok(());
        }
        let version: i64 = c
            .prepare_cached("PRAGMA data_version")
            .map_err(storage)?
            .query_row([], |r| r.get(0))
            .map_err(storage)?;
        if self.version != Some(version) {
            self.gids.clear();
            self.windows.clear();
            self.version = Some(version);
        }
        Ok(())
    }

    /// The gid of `graph_id`, read with `read` when not remembered.
    pub(crate) fn gid(
        &mut self,
        graph_id: &str,
        read: impl FnOnce() -> Result<Option<i64>, Error>,
    ) -> Result<Option<i64>, Error> {
        if let Some(gid) = self.gids.get(graph_id) {
            return Ok(*gid);
        }
        let gid = read()?;
        if self.kept {
            self.gids.insert(graph_id.to_owned(), gid);
        }
        Ok(gid)
    }

    /// The window of `request` in graph `gid`, ranked with `rank` when not remembered.
    /// Only windows read light are kept.
    pub(crate) fn window(
        &mut self,
        gid: i64,
        request: &WindowRequest,
        rank: impl FnOnce() -> Result<RankedWindow, Error>,
    ) -> Result<RankedWindow, Error> {
        if !self.kept {
            return rank();
        }
        self.clock += 1;
        let key = WindowKey::of(gid, request);
        if let Some((used, window)) = self.windows.get_mut(&key) {
            *used = self.clock;
            return Ok(window.clone());
        }
        let window = rank()?;
        if window.light {
            if self.windows.len() >= WINDOWS {
                self.forget_least_recent();
            }
            self.windows.insert(key, (self.clock, window.clone()));
        }
        Ok(window)
    }

    fn forget_least_recent(&mut self) {
        let oldest = self
            .windows
            .iter()
            .min_by_key(|(_, (used, _))| *used)
            .map(|(key, _)| key.clone());
        if let Some(key) = oldest {
            self.windows.remove(&key);
        }
    }

    #[cfg(test)]
    pub(crate) fn windows_kept(&self) -> usize {
        self.windows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EdgeRequest;

    fn request(root: &str) -> WindowRequest {
        WindowRequest {
            edges: EdgeRequest {
                root: root.to_owned(),
                kinds: vec![EdgeKind::Calls],
                direction: Direction::Incoming,
                limit: 500,
                keep: Some(10),
            },
            root_path: "a.py".into(),
            root_name: "f".into(),
            seen: false,
        }
    }

    fn ranked(light: bool, total: usize) -> RankedWindow {
        RankedWindow {
            light,
            total,
            ..RankedWindow::default()
        }
    }

    fn database() -> (tempfile::TempDir, Connection, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER);")
            .unwrap();
        let reader = Connection::open(&path).unwrap();
        (dir, writer, reader)
    }

    /// A light window is ranked once while the file is unchanged; a small one every time.
    #[test]
    fn keeps_light_windows_only() {
        let (_dir, _writer, reader) = database();
        let mut cache = ReaderCache::kept();
        let mut ranks = 0;
        for _ in 0..3 {
            cache.validate(&reader).unwrap();
            let hub = cache
                .window(1, &request("hub"), || {
                    ranks += 1;
                    Ok(ranked(true, 900))
                })
                .unwrap();
            assert_eq!(hub.total, 900);
            cache
                .window(1, &request("leaf"), || {
                    ranks += 10;
                    Ok(ranked(false, 3))
                })
                .unwrap();
        }
        assert_eq!(ranks, 1 + 30, "the hub once, the leaf every time");
        assert_eq!(cache.windows_kept(), 1);
    }

    /// Another connection's commit empties the cache at the next read; reads alone do not.
    #[test]
    fn forgets_everything_when_another_connection_commits() {
        let (_dir, writer, reader) = database();
        let mut cache = ReaderCache::kept();
        let mut ranks = 0;
        let read = |cache: &mut ReaderCache, ranks: &mut i32| {
            cache.validate(&reader).unwrap();
            cache
                .window(1, &request("hub"), || {
                    *ranks += 1;
                    Ok(ranked(true, 900))
                })
                .unwrap();
            cache.gid("g", || Ok(Some(1))).unwrap()
        };
        read(&mut cache, &mut ranks);
        read(&mut cache, &mut ranks);
        assert_eq!(ranks, 1);
        writer.execute("INSERT INTO t VALUES (1)", []).unwrap();
        read(&mut cache, &mut ranks);
        assert_eq!(ranks, 2, "ranked again after the commit");
        read(&mut cache, &mut ranks);
        assert_eq!(ranks, 2);
    }

    /// A request that differs in anything the answer depends on is another window.
    #[test]
    fn every_part_of_the_request_is_part_of_the_key() {
        let (_dir, _writer, reader) = database();
        let mut cache = ReaderCache::kept();
        cache.validate(&reader).unwrap();
        let base = request("hub");
        let mut variants = vec![base.clone()];
        let mut v = base.clone();
        v.edges.kinds = vec![EdgeKind::Calls, EdgeKind::References];
        variants.push(v);
        let mut v = base.clone();
        v.edges.direction = Direction::Outgoing;
        variants.push(v);
        let mut v = base.clone();
        v.edges.keep = Some(20);
        variants.push(v);
        let mut v = base.clone();
        v.edges.limit = 600;
        variants.push(v);
        let mut v = base.clone();
        v.seen = true;
        variants.push(v);
        let mut v = base.clone();
        v.root_path = "b.py".into();
        variants.push(v);
        let mut v = base.clone();
        v.root_name = "g".into();
        variants.push(v);
        for (i, variant) in variants.iter().enumerate() {
            let window = cache.window(1, variant, || Ok(ranked(true, i))).unwrap();
            assert_eq!(
                window.total, i,
                "variant {i} answered from another's window"
            );
        }
        let other_graph = cache.window(2, &base, || Ok(ranked(true, 99))).unwrap();
        assert_eq!(other_graph.total, 99, "another graph's window");
    }

    /// A full cache forgets the window used least recently.
    #[test]
    fn a_full_cache_forgets_the_least_recently_used() {
        let (_dir, _writer, reader) = database();
        let mut cache = ReaderCache::kept();
        cache.validate(&reader).unwrap();
        for i in 0..WINDOWS {
            cache
                .window(1, &request(&format!("n{i}")), || Ok(ranked(true, i)))
                .unwrap();
        }
        // n0 used again: n1 is now the least recent.
        cache
            .window(1, &request("n0"), || panic!("n0 was kept"))
            .unwrap();
        cache
            .window(1, &request("new"), || Ok(ranked(true, 7)))
            .unwrap();
        assert_eq!(cache.windows_kept(), WINDOWS);
        cache
            .window(1, &request("n0"), || panic!("n0 was forgotten"))
            .unwrap();
        let mut ranked_again = false;
        cache
            .window(1, &request("n1"), || {
                ranked_again = true;
                Ok(ranked(true, 1))
            })
            .unwrap();
        assert!(ranked_again, "n1 should have been forgotten");
    }

    /// The writer's cache remembers nothing (its own commits do not move data_version).
    #[test]
    fn the_writers_cache_remembers_nothing() {
        let (_dir, writer, _reader) = database();
        let mut cache = ReaderCache::none();
        cache.validate(&writer).unwrap();
        let mut ranks = 0;
        for _ in 0..2 {
            cache
                .window(1, &request("hub"), || {
                    ranks += 1;
                    Ok(ranked(true, 900))
                })
                .unwrap();
        }
        assert_eq!(ranks, 2);
        assert_eq!(cache.windows_kept(), 0);
    }
}
