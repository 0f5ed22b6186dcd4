//! Local sentence embeddings with ONNX Runtime (loaded dynamically from the
//! `libonnxruntime.so` of the onnxruntime PyPI wheel) and all-MiniLM-L6-v2 (int8, 384
//! dimensions; the Maven Central langchain4j export): WordPiece tokens, one model run per
//! text, `last_hidden_state` mean-pooled, L2-normalized. Only metadata is embedded (memory
//! entity names, aliases, types and facts; code symbols' metadata texts; agent queries):
//! never repository source, never conversations.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use codectx_errors::Error;
use codectx_graph::model::content_hash;
use ort::session::Session;
use ort::value::Tensor;
use tokenizers::Tokenizer;

/// Tokens per text; longer texts are truncated (names and queries are short).
pub const MAX_TOKENS_PER_TEXT: usize = 128;

/// What identifies a model: its name, the content hash of its weights, its dimension.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelIdentity {
    pub name: String,
    pub content_hash: String,
    pub dimension: u32,
}

/// Where the runtime and the model are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFiles {
    /// `libonnxruntime.so.1.32.0`.
    pub runtime: PathBuf,
    /// `model.onnx`.
    pub model: PathBuf,
    /// `tokenizer.json`.
    pub tokenizer: PathBuf,
    /// Reported model name.
    pub name: String,
}

impl ModelFiles {
    /// The layout `make models` produces in a directory.
    pub fn in_directory(directory: &Path) -> Self {
        Self {
            runtime: directory.join("libonnxruntime.so.1.32.0"),
            model: directory.join("model.onnx"),
            tokenizer: directory.join("tokenizer.json"),
            name: "all-MiniLM-L6-v2-int8".into(),
        }
    }
}

static RUNTIME: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();

/// Loads ONNX Runtime once per process. The first path wins.
fn runtime(path: &Path) -> Result<&'static ort::environment::Environment, Error> {
    let loaded = RUNTIME.get_or_init(|| {
        if !path.is_file() {
            return Err(format!(
                "ONNX Runtime library {} does not exist; run `make models` or set ORT_DYLIB_PATH",
                path.display()
            ));
        }
        ort::init_from(path)
            .map_err(|e| format!("cannot load ONNX Runtime from {}: {e}", path.display()))?
            .with_name("codectx-embedding")
            .build()
            .map_err(|e| format!("ONNX Runtime environment: {e}"))
    });
    loaded
        .as_ref()
        .map_err(|reason| Error::unavailable(reason.clone()))
}

/// A loaded model, ready to embed.
pub struct Embedder {
    session: Mutex<Session>,
    tokenizer: Tokenizer,
    identity: ModelIdentity,
    token_type_ids: bool,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

fn unavailable(what: &str, error: impl std::fmt::Display) -> Error {
    Error::unavailable(format!("{what}: {error}"))
}

impl Embedder {
    /// Loads the runtime, the model and the tokenizer. Fails with a message naming the
    /// missing or broken file.
    pub fn load(files: &ModelFiles) -> Result<Self, Error> {
        let environment = runtime(&files.runtime)?;
        for (path, what) in [(&files.model, "model"), (&files.tokenizer, "tokenizer")] {
            if !path.is_file() {
                return Err(Error::unavailable(format!(
                    "{what} file {} does not exist; run `make models`",
                    path.display()
                )));
            }
        }
        let weights =
            std::fs::read(&files.model).map_err(|e| unavailable("cannot read the model", e))?;
        let mut tokenizer = Tokenizer::from_file(&files.tokenizer)
            .map_err(|e| unavailable("cannot load the tokenizer", e))?;
        // The packaged tokenizer pads every text to 128 tokens; padding would dilute the
        // mean pooling, so it is off (each text is its own inference).
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: MAX_TOKENS_PER_TEXT,
                ..Default::default()
            }))
            .map_err(|e| unavailable("tokenizer truncation", e))?;
        let session = Session::builder(environment)
            .map_err(|e| unavailable("session builder", e))?
            // Every core for one text: runs are serialized by the session lock, and a
            // repository's code vectors are thousands of texts.
            .with_intra_threads(std::thread::available_parallelism().map_or(1, |n| n.get()))
            .map_err(|e| unavailable("session threads", e))?
            .commit_from_memory(&weights)
            .map_err(|e| unavailable("cannot load the model into ONNX Runtime", e))?;
        let token_type_ids = session
            .inputs()
            .iter()
            .any(|input| input.name() == "token_type_ids");
        let dimension = session
            .outputs()
            .first()
            .and_then(|output| {
                output
                    .dtype()
                    .tensor_shape()
                    .and_then(|shape| shape.last().copied())
            })
            .filter(|d| *d > 0)
            .unwrap_or(384) as u32;
        let identity = ModelIdentity {
            name: files.name.clone(),
            content_hash: content_hash(&weights),
            dimension,
        };
        tracing::info!(model = %identity.name, hash = %identity.content_hash, dimension, "embedding model loaded");
        Ok(Self {
            session: Mutex::new(session),
            tokenizer,
            identity,
            token_type_ids,
        })
    }

    pub fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    /// Embeds texts: L2-normalized vectors, one per text. Rejects empty texts and any
    /// output that is non-finite or all zero.
    ///
    /// Each text is its own inference. The shipped model is dynamically quantized: the
    /// int8 scale of every activation is computed over the whole input tensor, so texts
    /// run as one padded batch change each other's vectors (cosine down to 0.985
    /// measured). One text per run makes a text's vector depend on nothing else, and
    /// measured as fast on this model (569 texts/s alone, 573 in batches of 64, two
    /// threads). The session lock is taken per text so a query waits for one text of a
    /// bulk embedding, not for the whole batch.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        if texts.iter().any(|t| t.trim().is_empty()) {
            return Err(Error::invalid_argument("texts", "texts must not be empty"));
        }
        texts.iter().map(|text| self.embed_one(text)).collect()
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>, Error> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| Error::internal(format!("tokenizer: {e}")))?;
        let ids: Vec<i64> = encoding.get_ids().iter().map(|id| i64::from(*id)).collect();
        let length = ids.len();
        if length == 0 {
            return Err(Error::internal("the tokenizer produced no tokens"));
        }
        let shape = [1i64, length as i64];
        let tensor = |data: Vec<i64>| {
            Tensor::from_array((shape, data))
                .map_err(|e| Error::internal(format!("input tensor: {e}")))
        };
        let mask = vec![1i64; length];
        let mut session = self
            .session
            .lock()
            .map_err(|_| Error::internal("embedding session lock poisoned"))?;
        let outputs = if self.token_type_ids {
            session.run(ort::inputs![
                "input_ids" => tensor(ids)?,
                "attention_mask" => tensor(mask)?,
                "token_type_ids" => tensor(vec![0i64; length])?,
            ])
        } else {
            session
                .run(ort::inputs!["input_ids" => tensor(ids)?, "attention_mask" => tensor(mask)?])
        }
        .map_err(|e| Error::internal(format!("ONNX Runtime: {e}")))?;
        let hidden = outputs
            .get("last_hidden_state")
            .unwrap_or(&outputs[0])
            .try_extract_tensor::<f32>()
            .map_err(|e| Error::internal(format!("model output: {e}")))?;
        let (out_shape, values) = hidden;
        let dimension = *out_shape.last().unwrap_or(&0) as usize;
        if out_shape.len() != 3 || dimension == 0 || values.len() != length * dimension {
            return Err(Error::internal(format!(
                "unexpected model output shape {out_shape:?}"
            )));
        }
        // Mean pooling over every token (there is no padding).
        let mut pooled = vec![0f32; dimension];
        for token in values.chunks_exact(dimension) {
            for (sum, value) in pooled.iter_mut().zip(token) {
                *sum += value;
            }
        }
        for value in &mut pooled {
            *value /= length as f32;
        }
        normalize(pooled)
    }
}

/// L2-normalizes a vector; non-finite or all-zero vectors are errors, never stored.
pub fn normalize(mut vector: Vec<f32>) -> Result<Vec<f32>, Error> {
    if vector.iter().any(|v| !v.is_finite()) {
        return Err(Error::internal(
            "the model produced a non-finite embedding; it was rejected",
        ));
    }
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Err(Error::internal(
            "the model produced an all-zero embedding; it was rejected",
        ));
    }
    for value in &mut vector {
        *value /= norm;
    }
    Ok(vector)
}

/// Cosine similarity of two L2-normalized vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_rejects_bad_vectors() {
        assert!(normalize(vec![0.0, 0.0]).is_err());
        assert!(normalize(vec![f32::NAN, 1.0]).is_err());
        assert!(normalize(vec![f32::INFINITY, 1.0]).is_err());
        let unit = normalize(vec![3.0, 4.0]).unwrap();
        assert!((unit[0] - 0.6).abs() < 1e-6 && (unit[1] - 0.8).abs() < 1e-6);
        assert!((cosine(&unit, &unit) - 1.0).abs() < 1e-6);
    }
}
