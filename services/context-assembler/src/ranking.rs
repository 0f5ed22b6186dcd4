//! Ranking code for free text (`search`, `minimal_context`): identifiers already resolved
//! and the lexical leg's exact matches first, then BM25 and the dense leg fused by RRF
//! (k = 60, DESIGN.md section 2), hydrated (ids the graph no longer has are dropped).
//! The two ranked legs run concurrently; the dense leg has 2 s and any failure falls back
//! to the lexical leg, named in `degraded`.
//!
//! Whether anything matched at all is decided here too: without an exact match, the
//! dense leg's list counts when its nearest symbol's similarity is at or above
//! [`CODE_DENSE_FLOOR`], and BM25's list when its best candidate scores
//! [`LEXICAL_STRENGTH_FLOOR`] per content word of the query (a floor judges the query;
//! a list that counts is fused whole), so a task about something the code does not have answers `not_found`
//! instead of the nearest symbols (both floors from `bench/calibration/code.json`:
//! docs/BENCHMARKS.md).

use std::time::Duration;

use codectx_assemble::{Leg, fuse_weighted};
use codectx_clients::{GraphClient, LexicalClient};
use codectx_core::limits;
use codectx_errors::Error;
use codectx_proto::graph::v1 as graph;
use codectx_proto::lexical::v1 as lexical;
use codectx_tenant::TenantContext;

use crate::RetrievalLegs;
use crate::code_vectors::{self, Clients, CodeVectors, Readiness};

/// The nearest code symbol's cosine similarity below which the dense leg's list is not a
/// match.
pub const CODE_DENSE_FLOOR: f64 = 0.39;
/// The best BM25 score per content word of the query below which the lexical leg's list
/// is not evidence, when the dense leg is there to judge the meaning.
///
/// All three from `bench/calibrate-code.py` on `bench/calibration/code.json` and
/// `code-extra.json` (224 tasks over eight projects, 88 without an answer), chosen again
/// when the symbol text gained its doc, uses and members and test code left the ranked
/// legs (ADR 0011): 144 of 224 right (81 of 136 found, 63 of 88 not_found) at 0.39, 1.6,
/// 0.3, against 129 for the rules before; the surface is flat (139-144 from dense 0.36 to
/// 0.40), and among the points within one answer of the best (closer than the sets can
/// tell apart) the one that finds the most is kept. Rules compared before
/// (docs/BENCHMARKS.md): judging each dense candidate by the floor instead of the list by
/// its nearest, fusing BM25 whenever the dense leg matched, a joint floor for the two
/// legs: none answered more.
pub const LEXICAL_STRENGTH_FLOOR: f64 = 1.6;
/// The weight of a weak BM25 list (under [`LEXICAL_STRENGTH_FLOOR`]) in the fusion when
/// the dense leg matched. Under 61/70 it cannot displace any of the dense leg's ten
/// candidates, only reorder them: a symbol both legs found moves up. On both code
/// calibration sets at dense 0.39, lexical 1.6: 0.3 answered 144, 1 (plain RRF) 140.
pub const WEAK_LEXICAL_WEIGHT: f64 = 0.3;

/// The dense leg for code, when the assembler has one.
#[derive(Clone)]
pub struct DenseCode {
    pub floors: crate::CodeFloors,
    pub vectors: CodeVectors,
    pub clients: Clients,
}

/// Ranked cards with what the legs saw.
#[derive(Debug, Default)]
pub struct Ranked {
    pub cards: Vec<(graph::SymbolCard, Vec<String>)>,
    /// Legs that failed or are not complete (`vector: ...`).
    pub degraded: Vec<String>,
    /// The dense leg's best similarity (before the floor), when it ran.
    pub dense_top: Option<f64>,
    /// The lexical leg's best BM25 score per content word of the query.
    pub lexical_strength: Option<f64>,
}

/// The words of a query that BM25 looks up (function words are not).
fn content_words(query: &str) -> usize {
    let mut words: Vec<String> = codectx_lexical::tokenize(query)
        .into_iter()
        .filter(|w| !codectx_lexical::is_stop_word(w))
        .collect();
    words.sort();
    words.dedup();
    words.len()
}

/// Ranks code for free text: `exact` ids (identifiers already resolved) first, then the
/// lexical leg's exact matches, then BM25 and the dense leg fused by RRF, hydrated.
#[allow(clippy::too_many_arguments)]
pub async fn ranked_cards(
    lexical_client: &LexicalClient,
    retrieval: RetrievalLegs,
    dense: Option<&DenseCode>,
    graph: &GraphClient,
    context: &TenantContext,
    query: &str,
    kinds: Vec<String>,
    limit: usize,
    mut exact: Vec<String>,
) -> Result<Ranked, Error> {
    // Test code competes only when the query is about tests: a developer opens the code a
    // task describes first, and tests named like it would crowd it out of both legs.
    let production_only = !mentions_tests(query);
    let lexical_leg = async {
        if !retrieval.lexical() {
            return Ok(lexical::CandidateList::default());
        }
        lexical_client
            .rank(
                context,
                lexical::RankRequest {
                    production_only,
                    scope: lexical::ScopeKind::Code as i32,
                    query: query.into(),
                    limit: limits::CANDIDATES_PER_LEG as u32,
                    kinds: kinds.clone(),
                    corpus_version: crate::freshness::corpus_version(),
                },
            )
            .await
    };
    let dense_leg = async {
        let Some(dense) = dense.filter(|_| retrieval.dense() || retrieval.native()) else {
            return (None, Ok((Vec::new(), None)));
        };
        let readiness = dense.vectors.advance(&dense.clients, context);
        if readiness == Readiness::Starting {
            return (Some(readiness), Ok((Vec::new(), None)));
        }
        // The ranked list, and the nearest symbol's similarity that judges whether the
        // query matched at all: native hybrid ranks with Milvus's fused list (RRF scores
        // are no similarity), judged by the dense collection's nearest as the in-house
        // fusion is.
        let search = async {
            if retrieval.native() {
                code_vectors::native(
                    &dense.vectors,
                    &dense.clients,
                    context,
                    query,
                    production_only,
                )
                .await
            } else {
                let hits = code_vectors::nearest(
                    &dense.vectors,
                    &dense.clients,
                    context,
                    query,
                    0.0,
                    production_only,
                )
                .await?;
                let top = hits.first().map(|(_, score)| *score);
                Ok((hits, top))
            }
        };
        let found = tokio::time::timeout(
            Duration::from_secs(limits::DENSE_LEG_DEADLINE_SECONDS),
            search,
        )
        .await
        .map_err(|_| Error::unavailable("dense leg timed out after 2 s"))
        .and_then(|found| found);
        (Some(readiness), found)
    };
    let (lexical_result, (readiness, dense_result)) = tokio::join!(lexical_leg, dense_leg);
    // The lexical index still loading (a large corpus, the first read after a start or a
    // re-index) leaves the other legs to answer, named as degraded; with nothing from
    // them the caller hears that it is loading (never `not_found`: BM25 did not judge).
    let (mut ranked, lexical_loading) = match lexical_result {
        Ok(ranked) => (ranked, None),
        Err(error) if error.is_loading() => (lexical::CandidateList::default(), Some(error)),
        Err(error) => return Err(error),
    };
    ranked.candidates.retain(|c| retrieval.keeps(c.exact));
    let mut out = Ranked::default();
    if let Some(note) = readiness.as_ref().and_then(Readiness::note) {
        out.degraded.push(note);
    }
    if let Some(error) = &lexical_loading {
        codectx_telemetry::record_fallback(codectx_telemetry::FallbackLeg::Lexical);
        out.degraded.push(format!("name: {}", error.message()));
    }
    // Ranked with the previous version's index while the new one loads: its hits stand
    // (hydration drops what the graph no longer has), but symbols added since are not
    // in it, so finding nothing is no evidence.
    let lexical_loading = match lexical_loading {
        None if ranked.stale => {
            out.degraded.push(format!(
                "name: ranked with the previous version's lexical index ({}) while the new \
                 one loads",
                ranked.corpus_version
            ));
            Some(Error::loading(
                "the lexical index of this repository is loading its new version (after a \
                 re-index); retry in a few seconds",
            ))
        }
        other => other,
    };
    let (dense_hits, dense_top): (Vec<(String, f64)>, Option<f64>) = match dense_result {
        Ok(found) => found,
        Err(error) => {
            codectx_telemetry::record_fallback(codectx_telemetry::FallbackLeg::Vector);
            out.degraded.push(format!("vector: {}", error.message()));
            (Vec::new(), None)
        }
    };
    out.dense_top = dense_top;
    let named: Vec<String> = ranked
        .candidates
        .iter()
        .filter(|c| !c.exact)
        .map(|c| c.entity_id.clone())
        .collect();
    let words = content_words(query).max(1) as f64;
    out.lexical_strength = ranked
        .candidates
        .iter()
        .filter(|c| !c.exact)
        .map(|c| c.score / words)
        .reduce(f64::max);
    for candidate in ranked.candidates.iter().filter(|c| c.exact) {
        if !exact.contains(&candidate.entity_id) {
            exact.push(candidate.entity_id.clone());
        }
    }
    let floors = dense.map(|d| d.floors).unwrap_or_default();
    // The floor judges the query, not each candidate: when the nearest symbol is close
    // enough to count as a match, the leg's whole ranked list is evidence (a task's
    // second and third symbols are often further from its words than the first); when
    // it is not, the leg has nothing.
    let strong = out.lexical_strength.is_some_and(|s| s >= floors.lexical);
    let matched = out.dense_top.is_some_and(|top| top >= floors.dense);
    // Native: Milvus's list already fuses BM25 over the same text, so it stands for both
    // ranked legs, and it counts when either leg's signal says the query matched.
    let similar: Vec<String> =
        if matched || (retrieval.native() && (strong || out.dense_top.is_none())) {
            dense_hits.iter().map(|(id, _)| id.clone()).collect()
        } else {
            Vec::new()
        };
    // Nothing exact: the ranked legs must show evidence, or there is no match. When the
    // dense leg could judge (it ran, complete or not), lexical words alone must be strong
    // enough; without it, BM25 stands alone as before.
    let dense_judged = readiness.is_some() && out.dense_top.is_some();
    // BM25's list is evidence when its best candidate is strong enough; then its order
    // is trusted as a whole. (Fusing it whenever the dense leg matched tied on the
    // calibration set and answered fewer tasks: BM25's weak lists push the dense leg's
    // right symbols out of the top entries.)
    let lexical_weight = if retrieval.native() {
        // Milvus's list holds BM25's ranking already; without it (the leg failed or has
        // no vectors yet) the shared BM25 list stands alone, as for the in-house fusion.
        if similar.is_empty() && !dense_judged {
            1.0
        } else {
            0.0
        }
    } else if !dense_judged || strong {
        1.0
    } else if !similar.is_empty() {
        floors.lexical_weight
    } else {
        0.0
    };
    let named: Vec<String> = if lexical_weight > 0.0 {
        named
    } else {
        Vec::new()
    };
    let fused = fuse_weighted(
        &exact,
        &[
            (Leg::Name, &named, lexical_weight),
            (Leg::Vector, &similar, 1.0),
        ],
        limits::CANDIDATES_PER_LEG,
    );
    let ids: Vec<String> = fused.iter().map(|f| f.id.clone()).collect();
    let mut cards = graph
        .get_symbol_cards(context, graph::GetSymbolCardsRequest { ids })
        .await?
        .cards;
    // Production code before tests, unless the query is about tests: a developer opens
    // the code a task describes first (exact matches keep their place).
    let mut fused = fused;
    if !mentions_tests(query) {
        let is_test = |id: &str| {
            cards.iter().find(|c| c.id == id).is_some_and(|c| {
                c.span
                    .as_ref()
                    .is_some_and(|s| codectx_core::conventions::is_test_path(&s.path))
                    || codectx_core::conventions::is_test_name(&c.name)
            })
        };
        let (exact_first, ranked): (Vec<_>, Vec<_>) = fused.into_iter().partition(|f| f.exact);
        let (production, tests): (Vec<_>, Vec<_>) =
            ranked.into_iter().partition(|f| !is_test(&f.id));
        fused = exact_first
            .into_iter()
            .chain(production)
            .chain(tests)
            .collect();
    }
    for candidate in &fused {
        // Candidates the graph no longer has are dropped, never shown from search data.
        let Some(position) = cards.iter().position(|c| c.id == candidate.id) else {
            continue;
        };
        // The dense leg does not filter by kind; the lexical leg did.
        if !kinds.is_empty() && !kinds.contains(&cards[position].kind) {
            continue;
        }
        if out.cards.len() >= limit {
            break;
        }
        let legs = candidate
            .legs
            .iter()
            .map(|l| format!("{l:?}").to_lowercase())
            .collect();
        out.cards.push((cards.swap_remove(position), legs));
    }
    match lexical_loading {
        Some(error) if out.cards.is_empty() => Err(error),
        _ => Ok(out),
    }
}

/// Whether a query asks about tests (then tests are not put after production code).
fn mentions_tests(query: &str) -> bool {
    codectx_core::conventions::mentions_tests(codectx_lexical::tokenize(query))
}
