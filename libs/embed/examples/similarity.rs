//! Prints the cosine similarity of each text to the first one with the real model:
//! `cargo run -p codectx-embed --example similarity -- MODELS_DIR QUERY TEXT...`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [directory, query, texts @ ..] = args.as_slice() else {
        eprintln!("usage: similarity MODELS_DIR QUERY TEXT...");
        std::process::exit(2);
    };
    let embedder = codectx_embed::Embedder::load(&codectx_embed::ModelFiles::in_directory(
        std::path::Path::new(directory),
    ))
    .expect("the model loads");
    let mut all = vec![query.clone()];
    all.extend(texts.iter().cloned());
    let vectors = embedder.embed(&all).expect("embeddings");
    for (text, vector) in texts.iter().zip(&vectors[1..]) {
        println!("{:.3}  {text}", codectx_embed::cosine(&vectors[0], vector));
    }
}
