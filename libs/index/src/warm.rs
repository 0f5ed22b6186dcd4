//! What one process keeps between index runs of the same graphs (the watcher of
//! `codectx up` and `codectx mcp --stdio`): every file's facts as the last run left them,
//! so a re-index after an edit decodes no cached facts. The facts cache on disk is still
//! written, for the next process; this only saves reading it back.
//!
//! A run takes its graph's files out and puts them back when it has written the graph
//! and the cache: a run that fails leaves nothing behind, and the next one reads the disk
//! cache as a new process would.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::cache::CachedFile;

/// The facts of the graphs this process indexed last, by graph id.
#[derive(Debug, Default)]
pub struct Warm {
    graphs: Mutex<HashMap<String, Held>>,
}

#[derive(Debug)]
struct Held {
    /// The repository layout the facts were read under (a changed layout clears them,
    /// as it clears the disk cache).
    layout: String,
    files: HashMap<String, CachedFile>,
}

impl Warm {
    pub fn new() -> Self {
        Self::default()
    }

    /// The graph's files under `layout`, taken out; `None` when this process holds none
    /// (or holds them under another layout).
    pub(crate) fn take(&self, graph_id: &str, layout: &str) -> Option<HashMap<String, CachedFile>> {
        let mut graphs = self.graphs.lock().unwrap_or_else(|e| e.into_inner());
        let held = graphs.remove(graph_id)?;
        (held.layout == layout).then_some(held.files)
    }

    /// Keeps the graph's files as a run that succeeded left them.
    pub(crate) fn put(&self, graph_id: &str, layout: &str, files: HashMap<String, CachedFile>) {
        let mut graphs = self.graphs.lock().unwrap_or_else(|e| e.into_inner());
        graphs.insert(
            graph_id.to_owned(),
            Held {
                layout: layout.to_owned(),
                files,
            },
        );
    }

    /// How many files this process holds for the graph.
    pub fn files(&self, graph_id: &str) -> usize {
        let graphs = self.graphs.lock().unwrap_or_else(|e| e.into_inner());
        graphs.get(graph_id).map_or(0, |held| held.files.len())
    }
}
