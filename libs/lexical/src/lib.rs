//! Lexical retrieval shared by every backend: identifier-aware tokenization, exact lookup
//! on case- and punctuation-preserving fields, and BM25 over weighted fields. The
//! lexical-ranker service and any future in-store ranker call this one implementation,
//! so they answer identically.

mod phrase;
mod tokenize;

use std::collections::BTreeMap;

use codectx_graph::{lookup_key, selector_matches};
use rustc_hash::FxHashMap as HashMap;

pub use tokenize::{fold, is_stop_word, tokenize};

/// BM25 term-frequency saturation.
pub const K1: f64 = 1.2;
/// BM25 length normalization.
pub const B: f64 = 0.75;
/// Most candidates a ranking returns (DESIGN.md: 10 per leg).
pub const MAX_CANDIDATES: usize = 10;

/// The fields a document is ranked on, with their BM25F weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    Name,
    Alias,
    Type,
    QualifiedName,
    Signature,
    /// A code symbol's one-line summary (its docstring).
    Summary,
    /// A code symbol's doc comment prose (its first paragraphs, ADR 0011).
    Doc,
    /// A memory entity's facts: the names they connect it to (the object of its own
    /// facts, the subject of facts about it).
    Fact,
    /// The words of a memory entity's fact predicates (`writes to`, `uses`). They add to
    /// a match another field made and never make one alone: a question's verb ("which
    /// typeface do we use?") is no evidence that an entity with a `uses` fact is meant.
    Predicate,
}

impl Field {
    pub fn weight(self) -> f64 {
        match self {
            Field::Name | Field::Alias => 3.0,
            Field::QualifiedName => 1.5,
            Field::Type | Field::Signature | Field::Fact | Field::Predicate => 1.0,
            // Prose: many words, each a weaker sign than a word of the name.
            Field::Summary => 0.7,
            // The whole doc comment: more words still, the summary among them.
            Field::Doc => 0.4,
        }
    }
}

/// How a candidate matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Match {
    ExactQualifiedName,
    ExactName,
    ExactAlias,
    ExactErrorMessage,
    Ranked(Field),
}

impl Match {
    pub fn is_exact(self) -> bool {
        !matches!(self, Match::Ranked(_))
    }
}

/// One searchable entity: a code symbol, an error message, or a memory entity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Document {
    pub id: String,
    pub name: String,
    pub qualified_name: String,
    /// Kind or memory type.
    pub kind: String,
    pub signature: String,
    pub aliases: Vec<String>,
    pub error_messages: Vec<String>,
    /// A code symbol's one-line summary.
    pub summary: String,
    /// A memory entity's current facts as text: the names they connect it to.
    pub facts: Vec<String>,
    /// A memory entity's fact predicates as words ([`Field::Predicate`]).
    pub predicates: Vec<String>,
    /// A code symbol's doc comment prose.
    pub doc: String,
    /// Test code (a test, or in a test file): left out of ranked candidates when the
    /// caller asks for production code only.
    pub in_tests: bool,
    /// Where a code symbol is (its file and first line; empty and 0 for memory): equal
    /// matches rank in source order.
    pub path: String,
    pub line: u32,
}

/// A ranked candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub score: f64,
    pub matched: Match,
}

#[derive(Debug)]
struct Posting {
    document: u32,
    /// Field-weighted term frequency.
    frequency: f32,
    /// The field that contributed most.
    field: Field,
    /// Only supporting fields ([`Field::Predicate`]) hold the word.
    supporting: bool,
}

/// How much a word match on a document of this kind counts: module-level variables are
/// mostly data (test tables, registries, singletons) and rarely what a question is
/// about, so on the same words a function, type or constant ranks above them. Exact
/// lookups are not weighed.
fn kind_prior(kind: &str) -> f64 {
    if kind == "variable" { 0.5 } else { 1.0 }
}

/// The kind of plain string-literal documents (the graph's `string` nodes).
pub const STRING_KIND: &str = "string";

/// Shortest query (characters, two words or more) matched as a phrase inside messages.
const PHRASE_CHARS: usize = 12;

/// An immutable index over a corpus.
#[derive(Debug, Default)]
pub struct LexicalIndex {
    words: WordForms,
    documents: Vec<Document>,
    lengths: Vec<f32>,
    average_length: f64,
    postings: HashMap<String, Vec<Posting>>,
    exact_name: HashMap<String, Vec<u32>>,
    exact_qualified: HashMap<String, Vec<u32>>,
    exact_alias: HashMap<String, Vec<u32>>,
    exact_error: HashMap<String, Vec<u32>>,
    /// Documents BM25 ranks (all but plain string literals).
    ranked: usize,
    /// Messages lowercased, for phrase (substring) matches.
    messages: phrase::Phrases,
    /// lookup key of qualified names, for trailing-part exact matches.
    keys: Vec<String>,
    bytes: usize,
}

/// Whether English word forms fold onto one stem ([`fold`]) in an index and its queries.
/// Memory is prose (names, aliases and facts agents write) where `retries` should find
/// `retry`; code names are identifiers, where a plural is often another symbol
/// (`Option`, `Options`): folding code cost 4 of 124 plain-language tasks on the lexical
/// leg alone and won memory 3 of 79 questions (docs/BENCHMARKS.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WordForms {
    /// Every token as written (code).
    #[default]
    Kept,
    /// Plural and third-person forms folded (memory).
    Folded,
}

impl LexicalIndex {
    /// An index whose words are kept as written.
    pub fn build(documents: Vec<Document>) -> Self {
        Self::build_with(documents, WordForms::Kept)
    }

    /// Documents are indexed by qualified name, then path and line, then id, whatever
    /// order they arrive in (a store's pages come in its own order), so equal matches
    /// answer the same on every backend and in every index of the same code. The id comes
    /// last: it hashes the minted graph id, so where it decided (two string literals of
    /// one text, which share a qualified name) two indexes of the same code answered in
    /// different orders (docs/BENCHMARKS.md, "Session of 2026-12-07 (sixth)").
    pub fn build_with(mut documents: Vec<Document>, words: WordForms) -> Self {
        documents.sort_by(|a, b| {
            (&a.qualified_name, &a.path, a.line, &a.id).cmp(&(
                &b.qualified_name,
                &b.path,
                b.line,
                &b.id,
            ))
        });
        let mut index = LexicalIndex {
            words,
            ..LexicalIndex::default()
        };
        let folded = |token: String| match words {
            WordForms::Kept => token,
            WordForms::Folded => fold(token),
        };
        let mut total_length = 0f64;
        for (position, document) in documents.iter().enumerate() {
            let id = position as u32;
            // token -> (weighted frequency, strongest field, its weight, only supporting).
            let mut frequencies: BTreeMap<String, (f32, Field, f32, bool)> = BTreeMap::new();
            let mut length = 0f32;
            let mut add = |text: &str, field: Field| {
                let prose = matches!(
                    field,
                    Field::Summary | Field::Doc | Field::Fact | Field::Predicate
                );
                for token in tokenize(text) {
                    if prose && is_stop_word(&token) {
                        continue;
                    }
                    let token = folded(token);
                    let weight = field.weight() as f32;
                    // A long doc comment must not make its symbol's name count for less:
                    // the doc's words weigh in, but only the other fields make up the
                    // length BM25 normalizes by (a documented symbol is no weaker a match
                    // on its name than an undocumented one).
                    if field != Field::Doc {
                        length += weight;
                    }
                    let entry = frequencies.entry(token).or_insert((0.0, field, 0.0, true));
                    entry.0 += weight;
                    entry.3 &= field == Field::Predicate;
                    if weight > entry.2 {
                        entry.1 = field;
                        entry.2 = weight;
                    }
                }
            };
            // Plain string literals are found by equality or as a phrase only: ranking
            // them by their words would crowd out symbols (and cost a tokenization of
            // every literal of the repository).
            if document.kind != STRING_KIND {
                add(&document.name, Field::Name);
                for alias in &document.aliases {
                    add(alias, Field::Alias);
                }
                add(&document.kind, Field::Type);
                add(&document.qualified_name, Field::QualifiedName);
                add(&document.signature, Field::Signature);
                for message in &document.error_messages {
                    add(message, Field::Name);
                }
                add(&document.summary, Field::Summary);
                add(&document.doc, Field::Doc);
                for fact in &document.facts {
                    add(fact, Field::Fact);
                }
                for predicate in &document.predicates {
                    add(predicate, Field::Predicate);
                }
            }
            for (token, (frequency, field, _, supporting)) in frequencies {
                index.bytes += token.len() + 16;
                index.postings.entry(token).or_default().push(Posting {
                    document: id,
                    frequency,
                    field,
                    supporting,
                });
            }
            index.lengths.push(length);
            total_length += f64::from(length);
            if document.kind != STRING_KIND {
                index
                    .exact_name
                    .entry(document.name.clone())
                    .or_default()
                    .push(id);
                index
                    .exact_qualified
                    .entry(document.qualified_name.clone())
                    .or_default()
                    .push(id);
            }
            for alias in &document.aliases {
                index.exact_alias.entry(alias.clone()).or_default().push(id);
            }
            for message in &document.error_messages {
                index
                    .exact_error
                    .entry(message.clone())
                    .or_default()
                    .push(id);
                index.messages.push(message, id);
            }
            index.keys.push(if document.kind == STRING_KIND {
                String::new()
            } else {
                lookup_key(&document.qualified_name)
            });
            index.bytes += document.id.len()
                + document.name.len() * 3
                + document.qualified_name.len() * 3
                + document.signature.len()
                + document.kind.len()
                + document.aliases.iter().map(|a| a.len() * 2).sum::<usize>()
                + document.summary.len()
                + document.doc.len()
                + document.facts.iter().map(String::len).sum::<usize>()
                + document.predicates.iter().map(String::len).sum::<usize>()
                + document
                    .error_messages
                    .iter()
                    .map(|m| m.len() * 2)
                    .sum::<usize>()
                + 96;
        }
        // BM25 statistics over the ranked documents only (not plain string literals).
        index.ranked = documents.iter().filter(|d| d.kind != STRING_KIND).count();
        index.average_length = if index.ranked == 0 {
            1.0
        } else {
            (total_length / index.ranked as f64).max(1.0)
        };
        index.documents = documents;
        index
    }

    pub fn len(&self) -> usize {
        self.documents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.documents.is_empty()
    }

    /// Approximate heap size, for cache weighing.
    pub fn approximate_bytes(&self) -> usize {
        self.bytes
    }

    fn candidate(&self, id: u32, score: f64, matched: Match) -> Candidate {
        let document = &self.documents[id as usize];
        Candidate {
            id: document.id.clone(),
            name: document.name.clone(),
            kind: document.kind.clone(),
            score,
            matched,
        }
    }

    fn kind_allowed(&self, id: u32, kinds: &[String]) -> bool {
        kinds.is_empty() || kinds.iter().any(|k| *k == self.documents[id as usize].kind)
    }

    /// Exact matches on the case- and punctuation-preserving fields: qualified name (or a
    /// trailing part of one), name, alias, error message. Score 1.0.
    pub fn exact(&self, query: &str, limit: usize, kinds: &[String]) -> Vec<Candidate> {
        let query = query.trim();
        let limit = limit.clamp(1, MAX_CANDIDATES);
        let mut out: Vec<Candidate> = Vec::new();
        let mut seen = rustc_hash::FxHashSet::default();
        let mut push = |ids: Option<&Vec<u32>>, matched: Match, out: &mut Vec<Candidate>| {
            for id in ids.into_iter().flatten() {
                if self.kind_allowed(*id, kinds) && seen.insert(*id) {
                    out.push(self.candidate(*id, 1.0, matched));
                }
            }
        };
        push(
            self.exact_error.get(query),
            Match::ExactErrorMessage,
            &mut out,
        );
        push(
            self.exact_qualified.get(query),
            Match::ExactQualifiedName,
            &mut out,
        );
        // A phrase of a message: the query inside a stored message part, or a stored part
        // (16+ characters) inside the query (messages are stored split at interpolations).
        let phrase = query.to_lowercase();
        if phrase.chars().count() >= PHRASE_CHARS && phrase.split_whitespace().nth(1).is_some() {
            let within = self.messages.matching(&phrase, limit);
            push(Some(&within), Match::ExactErrorMessage, &mut out);
        }
        push(self.exact_name.get(query), Match::ExactName, &mut out);
        push(self.exact_alias.get(query), Match::ExactAlias, &mut out);
        // `Engine.ServeHTTP`, `(*Engine).ServeHTTP`, `routing::Router::route`.
        let key = lookup_key(query);
        if key.contains('.') {
            let last = key.rsplit('.').next().unwrap_or(&key);
            let trailing: Vec<u32> = self
                .exact_name
                .get(last)
                .into_iter()
                .flatten()
                .copied()
                .filter(|id| selector_matches(&key, &self.keys[*id as usize]))
                .collect();
            push(Some(&trailing), Match::ExactQualifiedName, &mut out);
        }
        out.truncate(limit);
        out
    }

    /// Exact matches first, then BM25 candidates (by score, then id for stability).
    pub fn rank(&self, query: &str, limit: usize, kinds: &[String]) -> Vec<Candidate> {
        self.rank_filtered(query, limit, kinds, false)
    }

    /// [`rank`](Self::rank), with test code left out of the BM25 candidates when
    /// `production_only` (exact matches always stay: a test named is a test asked for).
    pub fn rank_filtered(
        &self,
        query: &str,
        limit: usize,
        kinds: &[String],
        production_only: bool,
    ) -> Vec<Candidate> {
        let limit = limit.clamp(1, MAX_CANDIDATES);
        let mut out = self.exact(query, limit, kinds);
        if out.len() >= limit {
            return out;
        }
        let exact: rustc_hash::FxHashSet<String> = out.iter().map(|c| c.id.clone()).collect();
        let n = self.ranked as f64;
        // document -> (score, strongest field, its term, some word matched outside the
        // supporting fields).
        let mut scores: HashMap<u32, (f64, Field, f64, bool)> = HashMap::default();
        // A question's function words ("where is the ...") match nothing worth ranking.
        let mut tokens: Vec<String> = tokenize(query)
            .into_iter()
            .filter(|token| !is_stop_word(token))
            .map(|token| match self.words {
                WordForms::Kept => token,
                WordForms::Folded => fold(token),
            })
            .collect();
        tokens.sort();
        tokens.dedup();
        for token in tokens {
            let Some(postings) = self.postings.get(&token) else {
                continue;
            };
            let document_frequency = postings.len() as f64;
            let idf = ((n - document_frequency + 0.5) / (document_frequency + 0.5) + 1.0).ln();
            for posting in postings {
                let frequency = f64::from(posting.frequency);
                let length = f64::from(self.lengths[posting.document as usize]);
                let term = idf * frequency * (K1 + 1.0)
                    / (frequency + K1 * (1.0 - B + B * length / self.average_length));
                let entry =
                    scores
                        .entry(posting.document)
                        .or_insert((0.0, posting.field, 0.0, false));
                entry.0 += term;
                entry.3 |= !posting.supporting;
                if term > entry.2 {
                    entry.1 = posting.field;
                    entry.2 = term;
                }
            }
        }
        let mut ranked: Vec<(u32, f64, Field)> = scores
            .into_iter()
            // A match on supporting words alone is no match.
            .filter(|(_, (_, _, _, anchored))| *anchored)
            .filter(|(id, _)| self.kind_allowed(*id, kinds))
            .filter(|(id, _)| !(production_only && self.documents[*id as usize].in_tests))
            .map(|(id, (score, field, _, _))| {
                (
                    id,
                    score * kind_prior(&self.documents[id as usize].kind),
                    field,
                )
            })
            .collect();
        // Equal scores go in document order (by qualified name, then id).
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        for (id, score, field) in ranked {
            if out.len() >= limit {
                break;
            }
            if exact.contains(&self.documents[id as usize].id) {
                continue;
            }
            out.push(self.candidate(id, score, Match::Ranked(field)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(id: &str, name: &str, qualified: &str, kind: &str) -> Document {
        Document {
            id: id.into(),
            name: name.into(),
            qualified_name: qualified.into(),
            kind: kind.into(),
            ..Default::default()
        }
    }

    fn corpus() -> LexicalIndex {
        let mut docs = vec![
            document("1", "ServeHTTP", "gin.(*Engine).ServeHTTP", "method"),
            document("2", "serveFile", "gin.serveFile", "function"),
            document("3", "HTTPServer", "net.HTTPServer", "type"),
            document("4", "parse_config", "app.config.parse_config", "function"),
            document("5", "ParseConfig", "app.ParseConfig", "function"),
        ];
        docs.push(Document {
            id: "6".into(),
            name: "no route for path".into(),
            qualified_name: "no route for path".into(),
            kind: "error_message".into(),
            error_messages: vec!["no route for path".into()],
            ..Default::default()
        });
        // Many documents that share a common word, one with a rare word.
        for i in 0..40 {
            docs.push(document(
                &format!("c{i}"),
                &format!("handleRequest{i}"),
                &format!("app.handleRequest{i}"),
                "function",
            ));
        }
        docs.push(document(
            "rare",
            "handleZebra",
            "app.handleZebra",
            "function",
        ));
        LexicalIndex::build(docs)
    }

    #[test]
    fn exact_matches_come_first_and_keep_case_and_punctuation() {
        let index = corpus();
        let ranked = index.rank("ServeHTTP", 10, &[]);
        assert_eq!(ranked[0].id, "1");
        assert_eq!(ranked[0].matched, Match::ExactName);
        // `servehttp` (other case) is not exact but still ranks by tokens.
        let ranked = index.rank("servehttp", 10, &[]);
        assert!(!ranked[0].matched.is_exact());
        // Trailing qualified parts in Go's form.
        let ranked = index.rank("(*Engine).ServeHTTP", 10, &[]);
        assert_eq!(
            (ranked[0].id.as_str(), ranked[0].matched),
            ("1", Match::ExactQualifiedName)
        );
        let ranked = index.rank("Engine.ServeHTTP", 10, &[]);
        assert_eq!(ranked[0].id, "1");
        // Error messages match exactly, spaces and all.
        let ranked = index.rank("no route for path", 10, &[]);
        assert_eq!(
            (ranked[0].id.as_str(), ranked[0].matched),
            ("6", Match::ExactErrorMessage)
        );
    }

    #[test]
    fn equal_matches_rank_in_source_order_whatever_their_ids() {
        // One message text at three places: ids hash the graph id, so another index of
        // the same code gives the same places other ids, in another order.
        let at = |id: &str, path: &str, line: u32| Document {
            id: id.into(),
            name: "Invalid literal for Fraction".into(),
            qualified_name: "Invalid literal for Fraction".into(),
            kind: STRING_KIND.into(),
            error_messages: vec!["Invalid literal for Fraction".into()],
            path: path.into(),
            line,
            ..Default::default()
        };
        let places = |ids: [&str; 3]| {
            let index = LexicalIndex::build(vec![
                at(ids[0], "test/test_fractions.py", 265),
                at(ids[1], "fractions.py", 115),
                at(ids[2], "test/test_fractions.py", 218),
            ]);
            let ranked = index.rank("Invalid literal for Fraction", 5, &[]);
            let by_id: HashMap<&str, (&str, u32)> = [
                (ids[0], ("test/test_fractions.py", 265)),
                (ids[1], ("fractions.py", 115)),
                (ids[2], ("test/test_fractions.py", 218)),
            ]
            .into_iter()
            .collect();
            ranked
                .iter()
                .map(|c| by_id[c.id.as_str()])
                .collect::<Vec<_>>()
        };
        let expected = vec![
            ("fractions.py", 115),
            ("test/test_fractions.py", 218),
            ("test/test_fractions.py", 265),
        ];
        assert_eq!(places(["a", "b", "c"]), expected);
        assert_eq!(places(["c", "b", "a"]), expected);
        assert_eq!(places(["b", "c", "a"]), expected);
    }

    #[test]
    fn messages_match_as_phrases_and_plain_strings_are_not_ranked() {
        let literal = |id: &str, text: &str| Document {
            id: id.into(),
            name: text.into(),
            qualified_name: text.into(),
            kind: STRING_KIND.into(),
            error_messages: vec![text.into()],
            ..Default::default()
        };
        let mut docs = vec![
            document("f", "configure", "app.configure", "function"),
            literal(
                "s1",
                ") is no longer bundled with Express and must be installed separately",
            ),
            literal("s2", "configure the parser before use"),
        ];
        docs.push(Document {
            id: "e".into(),
            name: "Router.use() requires a middleware function but got a".into(),
            qualified_name: "Router.use() requires a middleware function but got a".into(),
            kind: "error_message".into(),
            error_messages: vec!["Router.use() requires a middleware function but got a".into()],
            ..Default::default()
        });
        let index = LexicalIndex::build(docs);
        // The query inside a stored part.
        let found = index.rank("no longer bundled with Express", 5, &[]);
        assert_eq!(found[0].id, "s1");
        assert_eq!(found[0].matched, Match::ExactErrorMessage);
        // A stored part inside the query (the message continues past an interpolation).
        let found = index.rank(
            "Router.use() requires a middleware function but got a Object",
            5,
            &[],
        );
        assert_eq!(found[0].id, "e");
        // One word is not a phrase; plain strings are never ranked by their words.
        let found = index.rank("configure", 5, &[]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].id, "f");
    }

    #[test]
    fn folded_word_forms_find_their_stem_and_kept_ones_do_not() {
        let documents = || {
            vec![Document {
                facts: vec!["backs off exponentially between attempts".into()],
                ..document("r", "RetryPolicy", "RetryPolicy", "component")
            }]
        };
        let folded = LexicalIndex::build_with(documents(), WordForms::Folded);
        let found = folded.rank("how long between retries", 5, &[]);
        assert_eq!(found.first().map(|c| c.id.as_str()), Some("r"), "{found:?}");
        let found = folded.rank("which policies back off", 5, &[]);
        assert_eq!(found.first().map(|c| c.id.as_str()), Some("r"), "{found:?}");
        let kept = LexicalIndex::build(documents());
        assert!(kept.rank("retries policies", 5, &[]).is_empty());
    }

    #[test]
    fn doc_words_find_a_symbol_without_weakening_its_name_and_tests_can_be_left_out() {
        let documented = Document {
            doc: "Collects the reply body in memory and fails once it grows past the \
                  configured size limit, then hands the decoded data to the caller."
                .into(),
            ..document("d", "readBody", "http.readBody", "function")
        };
        let undocumented = document("u", "readBodyChunk", "http.readBodyChunk", "function");
        let test = Document {
            in_tests: true,
            ..document("t", "readBodyLimit", "http_test.readBodyLimit", "function")
        };
        let index = LexicalIndex::build(vec![documented, undocumented, test]);
        // The doc's words reach the symbol.
        let found = index.rank("reply grows past the size limit", 5, &[]);
        assert_eq!(found.first().map(|c| c.id.as_str()), Some("d"), "{found:?}");
        assert_eq!(found[0].matched, Match::Ranked(Field::Doc));
        // On a word of their names, the documented symbol is not weaker for its doc.
        let found = index.rank("read body", 5, &[]);
        let score = |id: &str| found.iter().find(|c| c.id == id).map(|c| c.score);
        assert!(score("d") >= score("u"), "{found:?}");
        // Test code leaves the ranked candidates on request; named exactly, it stays.
        assert!(index.rank("limit", 5, &[]).iter().any(|c| c.id == "t"));
        assert!(
            !index
                .rank_filtered("limit", 5, &[], true)
                .iter()
                .any(|c| c.id == "t")
        );
        let exact = index.rank_filtered("readBodyLimit", 5, &[], true);
        assert_eq!(exact.first().map(|c| c.id.as_str()), Some("t"));
    }

    #[test]
    fn summaries_and_facts_rank_by_their_words_and_function_words_by_nothing() {
        let index = LexicalIndex::build(vec![
            Document {
                summary:
                    "Verifies the signature of a tenant context and rejects it when it has expired."
                        .into(),
                ..document("v", "verify", "tenant.Verifier.verify", "method")
            },
            document("t", "the_table", "data.the_table", "variable"),
            Document {
                facts: vec![
                    "owned by team-checkout".into(),
                    "deploys with blue-green rollout".into(),
                ],
                ..document("p", "PaymentsService", "PaymentsService", "service")
            },
        ]);
        let found = index.rank("where is the signature checked once it expired", 5, &[]);
        assert_eq!(found.first().map(|c| c.id.as_str()), Some("v"), "{found:?}");
        assert_eq!(found[0].matched, Match::Ranked(Field::Summary));
        // "the" and "of" rank nothing, even where a name holds them.
        assert!(index.rank("the of", 5, &[]).is_empty());
        let found = index.rank("which one deploys with blue-green", 5, &[]);
        assert_eq!(found.first().map(|c| c.id.as_str()), Some("p"), "{found:?}");
        assert_eq!(found[0].matched, Match::Ranked(Field::Fact));
    }

    #[test]
    fn a_predicate_word_adds_to_a_match_and_never_makes_one() {
        let index = LexicalIndex::build_with(
            vec![
                Document {
                    facts: vec!["Stripe".into()],
                    predicates: vec!["uses".into()],
                    ..document("p", "PaymentsAdapter", "PaymentsAdapter", "component")
                },
                Document {
                    facts: vec!["Stripe".into()],
                    ..document("q", "RefundJob", "RefundJob", "component")
                },
                document("w", "MarketingSite", "MarketingSite", "component"),
            ],
            WordForms::Folded,
        );
        // The verb alone: nothing (it matched PaymentsAdapter's `uses` before).
        let found = index.rank("which typeface do we use", 5, &[]);
        assert!(found.is_empty(), "{found:?}");
        // With a word of the fact, the predicate adds: the entity that uses Stripe first.
        let found = index.rank("who uses stripe", 5, &[]);
        assert_eq!(found.first().map(|c| c.id.as_str()), Some("p"), "{found:?}");
        assert_eq!(found.len(), 2, "{found:?}");
        // The name matched by a word: the predicate is no obstacle.
        let found = index.rank("marketing site use", 5, &[]);
        assert_eq!(found.first().map(|c| c.id.as_str()), Some("w"), "{found:?}");
    }

    #[test]
    fn identifier_styles_meet_in_tokens() {
        let index = corpus();
        let ranked = index.rank("parse config", 10, &[]);
        let ids: Vec<&str> = ranked.iter().take(2).map(|c| c.id.as_str()).collect();
        assert!(ids.contains(&"4") && ids.contains(&"5"), "{ranked:?}");
        let ranked = index.rank("http server", 10, &[]);
        assert_eq!(ranked[0].id, "3", "{ranked:?}");
    }

    #[test]
    fn rare_words_outweigh_common_ones() {
        let index = corpus();
        let ranked = index.rank("handle zebra", 10, &[]);
        assert_eq!(ranked[0].id, "rare");
        assert!(ranked[0].score > ranked[1].score * 1.5, "{ranked:?}");
    }

    #[test]
    fn limits_and_kinds() {
        let index = corpus();
        assert_eq!(index.rank("handle", 50, &[]).len(), MAX_CANDIDATES);
        let only_types = index.rank("http", 10, &["type".into()]);
        assert!(only_types.iter().all(|c| c.kind == "type"));
        assert!(index.rank("nothing-matches-this", 10, &[]).is_empty());
    }

    #[test]
    fn ranking_is_deterministic() {
        let index = corpus();
        let first = index.rank("handle request", 10, &[]);
        for _ in 0..5 {
            assert_eq!(index.rank("handle request", 10, &[]), first);
        }
    }
}
