//! The thread that owns the embedded graph's SQLite connection.
//!
//! Every store call is a closure run on that connection, one at a time (one connection
//! serves reads and writes in order, as before). The closures used to go through the
//! runtime's blocking pool behind a mutex: each call took the pool's lock, woke or spawned
//! a pool thread and then took the connection's lock. A single long-lived thread fed by a
//! channel does the same work with one wake-up per call.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;

use codectx_errors::Error;
use rusqlite::Connection;

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// A handle to the connection's thread; clones share it. The thread ends, closing the
/// connection, when the last handle is dropped.
#[derive(Clone)]
pub(crate) struct Worker {
    jobs: mpsc::Sender<Job>,
}

impl Worker {
    /// Moves `connection` to a new thread named `name`.
    pub(crate) fn start(connection: Connection, name: &str) -> Result<Self, Error> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let mut connection = connection;
                while let Ok(job) = queue.recv() {
                    job(&mut connection);
                }
            })
            .map_err(|e| Error::internal(format!("cannot start the {name} thread: {e}")))?;
        Ok(Worker { jobs })
    }

    /// Runs `work` on the connection after the calls queued before it. A panic in `work`
    /// answers an internal error and the thread goes on serving the next call.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let (done, answer) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |connection| {
            let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| work(connection)))
                .unwrap_or_else(|_| Err(Error::internal("graph store worker: a call panicked")));
            // The caller may have given up (its deadline passed): nobody to answer.
            let _ = done.send(outcome);
        });
        self.jobs
            .send(job)
            .map_err(|_| Error::internal("graph store worker stopped"))?;
        answer
            .await
            .map_err(|_| Error::internal("graph store worker stopped"))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn calls_run_in_order_and_a_panic_leaves_the_worker_serving() {
        let connection = Connection::open_in_memory().expect("in-memory database");
        let worker = Worker::start(connection, "test-sqlite").expect("worker");
        worker
            .run(|c| {
                c.execute_batch("CREATE TABLE t (v INTEGER)")
                    .map_err(|e| Error::internal(e.to_string()))
            })
            .await
            .expect("create");
        let writes: Vec<_> = (0..20)
            .map(|v| {
                let worker = worker.clone();
                async move {
                    worker
                        .run(move |c| {
                            c.execute("INSERT INTO t (v) VALUES (?1)", [v])
                                .map_err(|e| Error::internal(e.to_string()))
                        })
                        .await
                }
            })
            .collect();
        for write in writes {
            write.await.expect("insert");
        }
        let panicked = worker
            .run(|_| -> Result<(), Error> { panic!("a bug in a store call") })
            .await
            .expect_err("a panic is an error");
        assert!(panicked.to_string().contains("panicked"), "{panicked}");
        let values: Vec<i64> = worker
            .run(|c| {
                let mut statement = c
                    .prepare("SELECT v FROM t ORDER BY rowid")
                    .map_err(|e| Error::internal(e.to_string()))?;
                let rows = statement
                    .query_map([], |r| r.get(0))
                    .map_err(|e| Error::internal(e.to_string()))?;
                rows.collect::<Result<_, _>>()
                    .map_err(|e| Error::internal(e.to_string()))
            })
            .await
            .expect("read after the panic");
        assert_eq!(values, (0..20).collect::<Vec<i64>>());
    }
}
