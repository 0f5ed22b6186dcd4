//! The real runtime and model (from `make models`; `make test` sets
//! CODECTX_TEST_MODEL_DIR): semantic sanity on a labelled set, determinism, batching that
//! does not change results, and the model identity.

use codectx_embed::{Embedder, ModelFiles, cosine};

fn embedder() -> Embedder {
    let directory = std::env::var("CODECTX_TEST_MODEL_DIR").unwrap_or_else(|_| {
        panic!("CODECTX_TEST_MODEL_DIR is not set: run the tests with `make test` (deploy/local/models.sh fetches the model)")
    });
    Embedder::load(&ModelFiles::in_directory(std::path::Path::new(&directory))).unwrap()
}

fn texts(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn nearest_neighbours_are_the_intended_ones() {
    let model = embedder();
    let entities = texts(&[
        "database connection pool",
        "user authentication and login",
        "payment invoice billing",
        "image thumbnail resizing",
        "email notification sender",
        "rate limiter for API requests",
    ]);
    let queries = [
        ("how do users sign in", 1),
        ("send a message to the customer's inbox", 4),
        ("throttle too many calls", 5),
        ("charge the customer and create a bill", 2),
        ("shrink pictures", 3),
        ("reuse sql connections", 0),
    ];
    let entity_vectors = model.embed(&entities).unwrap();
    for (query, expected) in queries {
        let vector = &model.embed(&[query.to_owned()]).unwrap()[0];
        let best = entity_vectors
            .iter()
            .enumerate()
            .max_by(|a, b| cosine(vector, a.1).total_cmp(&cosine(vector, b.1)))
            .map(|(i, _)| i)
            .unwrap();
        assert_eq!(
            best, expected,
            "{query:?} should be nearest to {:?}, got {:?}",
            entities[expected], entities[best]
        );
    }
}

#[test]
fn deterministic_normalized_and_independent_of_batching() {
    let model = embedder();
    let identity = model.identity().clone();
    assert_eq!(identity.dimension, 384);
    assert_eq!(identity.content_hash.len(), 32);
    let batch = model
        .embed(&texts(&[
            "a",
            "a much longer text with many more tokens in it than the first",
            "ServeHTTP",
        ]))
        .unwrap();
    for vector in &batch {
        assert_eq!(vector.len(), 384);
        let norm: f32 = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
    }
    // Other texts in the same call must not change a text's embedding.
    let alone = model.embed(&texts(&["a"])).unwrap();
    assert!(
        cosine(&alone[0], &batch[0]) > 0.9999,
        "{}",
        cosine(&alone[0], &batch[0])
    );
    let again = model.embed(&texts(&["ServeHTTP"])).unwrap();
    assert!(cosine(&again[0], &batch[2]) > 0.9999);
    assert_eq!(
        model.embed(&texts(&["ServeHTTP"])).unwrap(),
        again,
        "same input, same output"
    );
    assert!(
        model.embed(&texts(&["  "])).is_err(),
        "empty texts are rejected"
    );
}
