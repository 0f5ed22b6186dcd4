//! Micro-benchmarks of the retrieval legs (`make bench-legs`): p50/p95 of BM25 over 5,000
//! memory-entity names and over a 100,000-symbol code corpus, query embedding (batch 1 and
//! 16, the real model), and vector search over 5,000 and 50,000 vectors (embedded, and
//! Milvus when CODECTX_TEST_MILVUS_URI is set). Prints a Markdown table.
//!
//! Percentiles are measured directly (criterion and divan report means and medians, not
//! p95): each case runs warm-up iterations, then timed ones.

use std::time::{Duration, Instant};

use codectx_lexical::{Document, LexicalIndex};
use codectx_vector::{CollectionKey, VectorScope, VectorStore, prepare};

/// Deterministic pseudo-random numbers (xorshift), so every run ranks the same corpus.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[(self.next() % words.len() as u64) as usize]
    }
    fn unit(&mut self) -> f32 {
        (self.next() % 20_000) as f32 / 10_000.0 - 1.0
    }
}

const WORDS: &[&str] = &[
    "payment",
    "service",
    "owner",
    "billing",
    "invoice",
    "user",
    "account",
    "session",
    "token",
    "cache",
    "router",
    "handler",
    "request",
    "response",
    "config",
    "parser",
    "writer",
    "reader",
    "stream",
    "buffer",
    "queue",
    "worker",
    "scheduler",
    "metrics",
    "trace",
    "span",
    "index",
    "graph",
    "node",
    "edge",
    "vector",
    "search",
    "query",
    "result",
    "error",
    "retry",
    "timeout",
    "deadline",
    "tenant",
    "policy",
    "grant",
    "key",
    "secret",
    "audit",
    "event",
    "log",
    "file",
    "path",
    "module",
    "package",
    "symbol",
    "method",
    "function",
    "type",
    "interface",
    "client",
    "server",
];

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * p).round() as usize]
}

fn measure(iterations: usize, mut work: impl FnMut(usize)) -> (Duration, Duration) {
    for i in 0..iterations.min(20) {
        work(i);
    }
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..iterations {
        let started = Instant::now();
        work(i);
        samples.push(started.elapsed());
    }
    (
        percentile(&mut samples, 0.5),
        percentile(&mut samples, 0.95),
    )
}

async fn measure_async<F, Fut>(iterations: usize, mut work: F) -> (Duration, Duration)
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for i in 0..iterations.min(20) {
        work(i).await;
    }
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..iterations {
        let started = Instant::now();
        work(i).await;
        samples.push(started.elapsed());
    }
    (
        percentile(&mut samples, 0.5),
        percentile(&mut samples, 0.95),
    )
}

fn row(case: &str, (p50, p95): (Duration, Duration), goal: &str) {
    println!(
        "| {case} | {:.3} ms | {:.3} ms | {goal} |",
        p50.as_secs_f64() * 1e3,
        p95.as_secs_f64() * 1e3
    );
}

fn memory_corpus(random: &mut Random, size: usize) -> Vec<Document> {
    (0..size)
        .map(|i| {
            let name = format!(
                "{} {} {}",
                random.pick(WORDS),
                random.pick(WORDS),
                random.pick(WORDS)
            );
            Document {
                id: format!("ent_{i}"),
                qualified_name: name.clone(),
                name,
                kind: random
                    .pick(&["service", "person", "team", "decision", "incident"])
                    .to_owned(),
                aliases: vec![format!("{}-{}", random.pick(WORDS), i % 97)],
                ..Default::default()
            }
        })
        .collect()
}

fn code_corpus(random: &mut Random, size: usize) -> Vec<Document> {
    (0..size)
        .map(|i| {
            let package = format!("{}/{}", random.pick(WORDS), random.pick(WORDS));
            let type_name = format!(
                "{}{}",
                capitalize(random.pick(WORDS)),
                capitalize(random.pick(WORDS))
            );
            let method = format!("{}{}", random.pick(WORDS), capitalize(random.pick(WORDS)));
            Document {
                id: format!("n_{i}"),
                name: method.clone(),
                qualified_name: format!("{package}.(*{type_name}).{method}"),
                kind: "method".into(),
                signature: format!(
                    "func (x *{type_name}) {method}(ctx context.Context, {} string) error",
                    random.pick(WORDS)
                ),
                ..Default::default()
            }
        })
        .collect()
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().collect::<String>() + chars.as_str())
        .unwrap_or_default()
}

fn random_vectors(
    random: &mut Random,
    count: usize,
    key: &CollectionKey,
) -> Vec<(String, Vec<f32>)> {
    (0..count)
        .map(|i| {
            let raw: Vec<f32> = (0..key.dimension).map(|_| random.unit()).collect();
            (format!("ent_{:032x}", i), prepare(&raw, key).unwrap())
        })
        .collect()
}

#[tokio::main]
async fn main() {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    println!("| case | p50 | p95 | goal |");
    println!("|---|---|---|---|");

    let memory = LexicalIndex::build(memory_corpus(&mut random, 5_000));
    let queries: Vec<String> = (0..500)
        .map(|_| format!("{} {}", random.pick(WORDS), random.pick(WORDS)))
        .collect();
    row(
        "BM25, 5,000 memory entities (2-word queries)",
        measure(2_000, |i| {
            std::hint::black_box(memory.rank(&queries[i % queries.len()], 10, &[]));
        }),
        "p95 < 1 ms",
    );

    let code = LexicalIndex::build(code_corpus(&mut random, 100_000));
    row(
        "BM25, 100,000 code symbols (2-word queries)",
        measure(300, |i| {
            std::hint::black_box(code.rank(&queries[i % queries.len()], 10, &[]));
        }),
        "",
    );
    row(
        "exact lookup, 100,000 code symbols",
        measure(2_000, |i| {
            std::hint::black_box(code.exact(
                &format!(
                    "{}{}",
                    queries[i % 50].split(' ').next().unwrap(),
                    "Handler"
                ),
                10,
                &[],
            ));
        }),
        "",
    );

    match std::env::var("CODECTX_TEST_MODEL_DIR") {
        Ok(directory) => {
            let model = codectx_embed::Embedder::load(&codectx_embed::ModelFiles::in_directory(
                std::path::Path::new(&directory),
            ))
            .unwrap();
            row(
                "query embedding, batch 1",
                measure(200, |i| {
                    std::hint::black_box(
                        model.embed(&[queries[i % queries.len()].clone()]).unwrap(),
                    );
                }),
                "p50 < 4 ms",
            );
            let batch: Vec<String> = queries.iter().take(16).cloned().collect();
            row(
                "query embedding, batch 16",
                measure(50, |_| {
                    std::hint::black_box(model.embed(&batch).unwrap());
                }),
                "",
            );
        }
        Err(_) => println!(
            "| query embedding | skipped: CODECTX_TEST_MODEL_DIR not set (run via make bench-legs) | | |"
        ),
    }

    let key = CollectionKey {
        model_hash: "0123456789abcdef".into(),
        dimension: 384,
    };
    let scope = VectorScope {
        tenant_id: codectx_core::ids::mint("org"),
        namespace: format!(
            "{}|{}",
            codectx_core::ids::mint("org"),
            codectx_core::ids::mint("gph")
        ),
    };
    let scope = VectorScope {
        namespace: format!("{}|{}", scope.tenant_id, codectx_core::ids::mint("gph")),
        ..scope
    };
    let query_vectors = random_vectors(&mut random, 100, &key);
    let directory = tempfile::tempdir().unwrap();
    for count in [5_000usize, 50_000] {
        let store = codectx_vector::embedded::EmbeddedVectorStore::open(
            &directory.path().join(format!("v{count}.db")),
        )
        .unwrap();
        let vectors = random_vectors(&mut random, count, &key);
        for chunk in vectors.chunks(1_000) {
            store.upsert(&scope, &key, chunk).await.unwrap();
        }
        let timing = measure_async(200, |i| {
            let store = &store;
            let scope = &scope;
            let key = &key;
            let query = &query_vectors[i % query_vectors.len()].1;
            async move {
                std::hint::black_box(store.nearest(scope, key, query, 10).await.unwrap());
            }
        })
        .await;
        row(
            &format!("vector search, embedded, {count} vectors"),
            timing,
            if count == 5_000 { "< 1 ms" } else { "" },
        );
    }
    match std::env::var("CODECTX_TEST_MILVUS_URI") {
        Ok(uri) => {
            let store = codectx_vector_milvus::MilvusVectorStore::connect(
                &uri,
                "",
                codectx_vector_milvus::FilterMode::Literal,
            )
            .await
            .unwrap();
            for count in [5_000usize, 50_000] {
                let tenant = codectx_core::ids::mint("org");
                let scope = VectorScope {
                    namespace: format!("{tenant}|{}", codectx_core::ids::mint("gph")),
                    tenant_id: tenant,
                };
                let vectors = random_vectors(&mut random, count, &key);
                for chunk in vectors.chunks(1_000) {
                    store.upsert(&scope, &key, chunk).await.unwrap();
                }
                // milvus-lite is a Python server: fewer iterations keep the run short.
                let timing = measure_async(if count > 5_000 { 20 } else { 60 }, |i| {
                    let store = &store;
                    let scope = &scope;
                    let key = &key;
                    let query = &query_vectors[i % query_vectors.len()].1;
                    async move {
                        std::hint::black_box(store.nearest(scope, key, query, 10).await.unwrap());
                    }
                })
                .await;
                row(
                    &format!("vector search, Milvus (milvus-lite), {count} vectors"),
                    timing,
                    "",
                );
            }
        }
        Err(_) => println!(
            "| vector search, Milvus | skipped: CODECTX_TEST_MILVUS_URI not set (run via make bench-legs) | | |"
        ),
    }
}
