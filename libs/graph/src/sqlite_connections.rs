//! The SQLite store's connections, and where each piece of work on them runs.
//!
//! One writer connection takes every write, every read that grows with the graph, and a
//! bounded read when every reader is busy, each on tokio's blocking pool. One reader
//! connection per core takes the bounded reads on the calling task. The file is in WAL
//! mode, so a reader never waits for a write and each read sees the last commit.

use std::path::Path;
use std::sync::{Arc, Mutex};

use codectx_errors::Error;
use rusqlite::Connection;

use crate::sqlite::{PREPARED_STATEMENTS, storage};
use crate::sqlite_reader_cache::ReaderCache;

/// How much of the graph a read can touch, which decides where it runs
/// ([`Connections::read`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Bounded by a caller's limit: a page of edges, a lookup by key or by name, a memory
    /// fact walk.
    Bounded,
    /// Grows with the graph (every owner, every language, a corpus page of thousands):
    /// always on the blocking pool, never on a runtime worker.
    Whole,
}

/// The writer and the readers of one database file.
#[derive(Clone)]
pub(crate) struct Connections {
    writer: Arc<Mutex<Connection>>,
    readers: Arc<[Mutex<Reader>]>,
}

/// A reader connection and what it remembers between reads ([`ReaderCache`]).
struct Reader {
    connection: Connection,
    cache: ReaderCache,
}

impl Connections {
    /// Opens the readers of `path` beside `writer`, which has created and migrated the
    /// schema. As many readers as the runtime has workers, so a worker never waits for
    /// another's read. Each caches up to 64 MiB of pages; the writer's cache, which bounded
    /// reads no longer fill, stays small (the whole stack's peak under load fell from 685
    /// to 570 MiB).
    pub(crate) fn open(path: &Path, writer: Connection) -> Result<Self, Error> {
        let count = std::thread::available_parallelism().map_or(1, |n| n.get());
        let readers = (0..count)
            .map(|_| {
                let reader = Connection::open(path).map_err(storage)?;
                reader.set_prepared_statement_cache_capacity(PREPARED_STATEMENTS);
                reader
                    .execute_batch("PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY;")
                    .map_err(storage)?;
                Ok(Mutex::new(Reader {
                    connection: reader,
                    cache: ReaderCache::kept(),
                }))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Self {
            writer: Arc::new(Mutex::new(writer)),
            readers: readers.into(),
        })
    }

    /// Work on the writer's connection, on the blocking pool.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let writer = self.writer.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = writer
                .lock()
                .map_err(|_| Error::internal("graph store lock poisoned"))?;
            work(&mut guard)
        })
        .await
        .map_err(|e| Error::internal(format!("graph store worker: {e}")))?
    }

    /// A read whose statements share one read transaction, so a read of several
    /// statements takes the WAL's read lock (an `fcntl` pair) and looks at the database
    /// file's size once, not once per statement (3% of a loaded stack's CPU went to those
    /// system calls). A read sees one snapshot of the graph throughout.
    ///
    /// A [`Reach::Bounded`] read runs on the calling task, on the first free reader: a
    /// loaded stack spent about 6% of its CPU handing such reads (0.05-1.5 ms each) to the
    /// blocking pool and waking for their answers. When every reader is busy it waits for
    /// the writer's connection on the blocking pool instead, so no runtime worker ever
    /// waits for a lock. Readers never wait for a write: a bulk write that takes seconds
    /// is one transaction, and a read sees the graph before it or after it.
    pub(crate) async fn read<T: Send + 'static>(
        &self,
        reach: Reach,
        work: impl FnOnce(&Connection) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        if reach == Reach::Bounded {
            for reader in self.readers.iter() {
                if let Ok(mut guard) = reader.try_lock() {
                    return in_snapshot(&mut guard.connection, work);
                }
            }
        }
        self.run(move |c| in_snapshot(c, work)).await
    }

    /// [`Self::read`] with the reader's [`ReaderCache`], already checked against the
    /// read's snapshot. A read that runs on the writer's connection gets a cache that
    /// remembers nothing.
    pub(crate) async fn read_cached<T: Send + 'static>(
        &self,
        reach: Reach,
        work: impl FnOnce(&Connection, &mut ReaderCache) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        if reach == Reach::Bounded {
            for reader in self.readers.iter() {
                if let Ok(mut guard) = reader.try_lock() {
                    let Reader { connection, cache } = &mut *guard;
                    return in_snapshot(connection, |c| {
                        cache.validate(c)?;
                        work(c, cache)
                    });
                }
            }
        }
        self.run(move |c| in_snapshot(c, |c| work(c, &mut ReaderCache::none())))
            .await
    }
}

fn in_snapshot<T>(
    c: &mut Connection,
    work: impl FnOnce(&Connection) -> Result<T, Error>,
) -> Result<T, Error> {
    let snapshot = c.transaction().map_err(storage)?;
    let out = work(&snapshot)?;
    snapshot.commit().map_err(storage)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::thread::JoinHandle;
    use std::time::Duration;

    /// How long a held connection or a busy pool thread waits for its release before it
    /// gives up (and the test fails: the release should have come first).
    const PATIENCE: Duration = Duration::from_secs(10);

    fn open(dir: &tempfile::TempDir) -> Connections {
        let path = dir.path().join("graph.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (7);",
            )
            .unwrap();
        Connections::open(&path, writer).unwrap()
    }

    async fn read_value(connections: &Connections, reach: Reach) -> i64 {
        connections
            .read(reach, |c| {
                c.query_row("SELECT v FROM t", [], |r| r.get(0))
                    .map_err(storage)
            })
            .await
            .unwrap()
    }

    /// The writer's connection, and with `readers` every reader's too, held on another
    /// thread (as a long write holds the writer's) until [`Held::release`].
    struct Held {
        release: mpsc::Sender<()>,
        holder: JoinHandle<bool>,
    }

    impl Held {
        fn new(connections: &Connections, readers: bool) -> Self {
            let (locked, on_locked) = mpsc::channel();
            let (release, on_release) = mpsc::channel::<()>();
            let held = connections.clone();
            let holder = std::thread::spawn(move || {
                let _write = held.writer.lock().unwrap();
                let _reads: Vec<_> = if readers {
                    held.readers.iter().map(|r| r.lock().unwrap()).collect()
                } else {
                    Vec::new()
                };
                locked.send(()).unwrap();
                on_release.recv_timeout(PATIENCE).is_ok()
            });
            on_locked.recv().unwrap();
            Self { release, holder }
        }

        /// Releases the connections; false when they had already given up waiting.
        fn release(self) -> bool {
            let _ = self.release.send(());
            self.holder.join().unwrap()
        }
    }

    /// A one-thread runtime whose only blocking-pool thread is busy until the sender is
    /// used: work sent to the pool queues behind it. The handle answers whether the
    /// release came before [`PATIENCE`] ran out.
    fn runtime_with_a_busy_pool() -> (
        tokio::runtime::Runtime,
        mpsc::Sender<()>,
        tokio::task::JoinHandle<bool>,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .max_blocking_threads(1)
            .enable_time()
            .build()
            .unwrap();
        let (release, on_release) = mpsc::channel::<()>();
        let busy = runtime.spawn_blocking(move || on_release.recv_timeout(PATIENCE).is_ok());
        (runtime, release, busy)
    }

    /// Spawns `read` on `runtime`, checks that it has not answered 50 ms later, releases
    /// what it waits for, and returns its answer.
    fn blocked_then_released(
        runtime: &tokio::runtime::Runtime,
        read: impl std::future::Future<Output = i64> + Send + 'static,
        release: impl FnOnce(),
        what: &str,
    ) -> i64 {
        runtime.block_on(async {
            let read = tokio::spawn(read);
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(!read.is_finished(), "{what}");
            release();
            read.await.unwrap()
        })
    }

    /// A bounded read that finds every connection busy waits on the blocking pool, not on
    /// a runtime worker: on a runtime of one thread, a task beside the read still runs and
    /// releases them.
    #[test]
    fn a_read_that_finds_every_connection_busy_leaves_the_runtime_free() {
        let dir = tempfile::tempdir().unwrap();
        let connections = open(&dir);
        let held = Held::new(&connections, true);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let reader = connections.clone();
        let (release, on_release) = mpsc::channel();
        let value = blocked_then_released(
            &runtime,
            async move { read_value(&reader, Reach::Bounded).await },
            move || release.send(held.release()).unwrap(),
            "the read ran while every connection was held",
        );
        // The release came from the runtime's task, so the read did not hold its only
        // thread (or it would have come after the holder gave up).
        assert!(
            on_release.recv().unwrap(),
            "the read held the runtime's only thread"
        );
        assert_eq!(value, 7);
    }

    /// A bounded read does not wait for a write: the writer's connection is held (as by a
    /// bulk write of seconds) and the read still answers, from a reader.
    #[test]
    fn a_read_runs_beside_a_write() {
        let dir = tempfile::tempdir().unwrap();
        let connections = open(&dir);
        let held = Held::new(&connections, false);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let value = runtime.block_on(read_value(&connections, Reach::Bounded));
        assert!(held.release(), "the read waited for the write");
        assert_eq!(value, 7);
    }

    /// A bounded read with a free reader answers on the calling task: it needs no blocking
    /// pool (the pool's only thread is busy here).
    #[test]
    fn a_read_on_a_free_reader_runs_on_the_calling_task() {
        let dir = tempfile::tempdir().unwrap();
        let connections = open(&dir);
        let (runtime, release, busy) = runtime_with_a_busy_pool();
        let value = runtime.block_on(read_value(&connections, Reach::Bounded));
        release.send(()).unwrap();
        assert!(
            runtime.block_on(busy).unwrap(),
            "the read waited for the blocking pool"
        );
        assert_eq!(value, 7);
    }

    /// Readers see the file before a write or after it, never during: a write that drops
    /// an index, inserts and rebuilds the index in one transaction (as a bulk write of the
    /// graph does) runs while reads that name that index run beside it, on every reader.
    /// Each read counts either the rows before the write or the rows after it, and none
    /// fails for want of the index.
    #[test]
    fn reads_beside_a_bulk_write_see_it_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let connections = open(&dir);
        connections
            .writer
            .lock()
            .unwrap()
            .execute_batch("CREATE INDEX t_by_v ON t (v);")
            .unwrap();
        let writes = 20;
        let rows_per_write = 2_000;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let count = |connections: Connections| async move {
            connections
                .read(Reach::Bounded, |c| {
                    c.query_row(
                        "SELECT COUNT(*) FROM t INDEXED BY t_by_v WHERE v >= 0",
                        [],
                        |r| r.get::<_, i64>(0),
                    )
                    .map_err(storage)
                })
                .await
                .unwrap()
        };
        let seen: Vec<i64> = runtime.block_on(async {
            let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
            // Every reader reads once before the first write starts, then keeps reading
            // until the last one has committed, then reads once more.
            let started = Arc::new(tokio::sync::Barrier::new(5));
            let mut readers = Vec::new();
            for _ in 0..4 {
                let (connections, done, started) =
                    (connections.clone(), done.clone(), started.clone());
                readers.push(tokio::spawn(async move {
                    let mut seen = vec![count(connections.clone()).await];
                    started.wait().await;
                    while !done.load(std::sync::atomic::Ordering::Acquire) {
                        seen.push(count(connections.clone()).await);
                        tokio::task::yield_now().await;
                    }
                    seen.push(count(connections).await);
                    seen
                }));
            }
            started.wait().await;
            for _ in 0..writes {
                connections
                    .run(move |c| {
                        let tx = c.transaction().map_err(storage)?;
                        tx.execute_batch("DROP INDEX t_by_v;").map_err(storage)?;
                        for v in 0..rows_per_write {
                            tx.execute("INSERT INTO t VALUES (?1)", [v])
                                .map_err(storage)?;
                        }
                        tx.execute_batch("CREATE INDEX t_by_v ON t (v);")
                            .map_err(storage)?;
                        tx.commit().map_err(storage)
                    })
                    .await
                    .unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::Release);
            let mut seen = Vec::new();
            for reader in readers {
                seen.extend(reader.await.unwrap());
            }
            seen
        });
        // The table starts with one row; each write adds a whole batch.
        let mut distinct = seen.clone();
        distinct.sort_unstable();
        distinct.dedup();
        println!(
            "{} reads saw {} states of the table",
            seen.len(),
            distinct.len()
        );
        assert_eq!(distinct.first(), Some(&1), "no read before the writes");
        assert_eq!(
            distinct.last(),
            Some(&(1 + writes * rows_per_write)),
            "no read after them"
        );
        for count in &seen {
            assert_eq!(
                (count - 1) % rows_per_write,
                0,
                "a read saw part of a write: {count}"
            );
            assert!(*count >= 1 && *count <= 1 + writes * rows_per_write);
        }
    }

    /// A read that grows with the graph never runs on the calling task, even with every
    /// reader free: it waits for the blocking pool (here busy until released).
    #[test]
    fn a_whole_graph_read_runs_on_the_blocking_pool() {
        let dir = tempfile::tempdir().unwrap();
        let connections = open(&dir);
        let (runtime, release, busy) = runtime_with_a_busy_pool();
        let reader = connections.clone();
        let value = blocked_then_released(
            &runtime,
            async move { read_value(&reader, Reach::Whole).await },
            move || release.send(()).unwrap(),
            "the whole-graph read ran on the calling task",
        );
        assert!(runtime.block_on(busy).unwrap());
        assert_eq!(value, 7);
    }
}
