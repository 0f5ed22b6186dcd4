//! Identifier-aware tokenization: `ServeHTTP` → serve, http, servehttp;
//! `parse_config` → parse, config, parseconfig; `axum::routing::Router` → axum, routing,
//! router; `v2Client` → v, 2, client, v2client. Lower-cased.

/// English function words: they carry no topic, and prose fields (summaries, facts)
/// and plain-language queries are full of them. Never indexed from prose, never looked
/// up from a query. Words that also name code (`get`, `new`, `set`, `is`... as parts of
/// identifiers) are not in the list, except the articles and prepositions no name is
/// made of alone.
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for", "with",
    "from", "into", "onto", "over", "under", "about", "as", "than", "then", "this", "that",
    "these", "those", "there", "here", "which", "who", "whom", "whose", "what", "when", "where",
    "why", "how", "do", "does", "did", "done", "be", "been", "being", "am", "is", "are", "was",
    "were", "has", "have", "had", "not", "no", "if", "it", "its", "i", "we", "you", "they", "he",
    "she", "me", "us", "our", "your", "their", "my", "so", "such", "very", "just", "also", "too",
    "any", "some", "each", "every", "all", "both", "either", "neither", "would", "could", "should",
    "shall", "will", "can", "may", "might", "must", "want", "need", "needs", "like", "please",
];

/// Whether a token is an English function word ([`STOP_WORDS`]).
pub fn is_stop_word(token: &str) -> bool {
    STOP_WORDS.contains(&token)
}

/// Tokens of a text, in order (duplicates kept; callers count them).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric() && c != '_') {
        if chunk.is_empty() {
            continue;
        }
        let parts = split_identifier(chunk);
        if parts.len() > 1 {
            let compound: String = parts.concat();
            tokens.extend(parts);
            tokens.push(compound);
        } else {
            tokens.extend(parts);
        }
    }
    tokens
}

/// Folds an English plural or third-person form onto its stem, the same way in the
/// index and in queries, so `retries` finds `retry` (`RetryPolicy`) and `handlers`
/// finds `handler`: `-ies` -> `-y`, `-sses`/`-xes`/`-ches`/`-shes` lose `-es`, and a
/// final `-s` goes unless the word ends in `ss`, `us`, `is`, `as` or `os` (`status`,
/// `alias`, `redis`, `axios` stay). Words under four letters stay. Function words are
/// filtered before folding.
pub fn fold(token: String) -> String {
    let length = token.len();
    if length < 4 || !token.is_ascii() {
        return token;
    }
    if length > 4 && token.ends_with("ies") {
        return format!("{}y", &token[..length - 3]);
    }
    if ["sses", "xes", "ches", "shes"]
        .iter()
        .any(|ending| token.ends_with(ending))
    {
        return token[..length - 2].to_owned();
    }
    if token.ends_with('s')
        && !["ss", "us", "is", "as", "os"]
            .iter()
            .any(|ending| token.ends_with(ending))
    {
        return token[..length - 1].to_owned();
    }
    token
}

/// Splits snake_case, camelCase, PascalCase, acronyms and letter/digit runs.
fn split_identifier(chunk: &str) -> Vec<String> {
    let chars: Vec<char> = chunk.chars().collect();
    let mut parts = Vec::new();
    let mut current = String::new();
    for (at, &ch) in chars.iter().enumerate() {
        if ch == '_' {
            if !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
            continue;
        }
        if let Some(&previous) = current.chars().last().as_ref() {
            let next = chars.get(at + 1).copied();
            let boundary = (previous.is_lowercase() && ch.is_uppercase())
                || (previous.is_alphabetic() && ch.is_ascii_digit())
                || (previous.is_ascii_digit() && ch.is_alphabetic())
                // `HTTPServer`: the S starts a new word when followed by lowercase.
                || (previous.is_uppercase() && ch.is_uppercase() && next.is_some_and(char::is_lowercase));
            if boundary {
                parts.push(std::mem::take(&mut current));
            }
        }
        current.push(ch);
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts.into_iter().map(|p| p.to_lowercase()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> Vec<String> {
        tokenize(text)
    }

    #[test]
    fn identifier_styles() {
        assert_eq!(t("ServeHTTP"), vec!["serve", "http", "servehttp"]);
        assert_eq!(t("HTTPServer"), vec!["http", "server", "httpserver"]);
        assert_eq!(t("parse_config"), vec!["parse", "config", "parseconfig"]);
        assert_eq!(t("parseConfig"), vec!["parse", "config", "parseconfig"]);
        assert_eq!(t("v2Client"), vec!["v", "2", "client", "v2client"]);
        assert_eq!(t("utf8"), vec!["utf", "8", "utf8"]);
    }

    #[test]
    fn word_forms_fold_onto_one_stem() {
        let f = |word: &str| fold(word.to_owned());
        assert_eq!(f("retries"), f("retry"));
        assert_eq!(f("policies"), "policy");
        assert_eq!(f("handlers"), f("handler"));
        assert_eq!(f("classes"), f("class"));
        assert_eq!(f("matches"), f("match"));
        assert_eq!(f("boxes"), "box");
        for kept in ["status", "alias", "redis", "axios", "address", "ies", "bus"] {
            assert_eq!(f(kept), kept);
        }
        assert_eq!(f("uses"), "use");
    }

    #[test]
    fn paths_and_punctuation() {
        assert_eq!(
            t("axum::routing::Router"),
            vec!["axum", "routing", "router"]
        );
        assert_eq!(
            t("gin.(*Engine).ServeHTTP"),
            vec!["gin", "engine", "serve", "http", "servehttp"]
        );
        assert_eq!(t("net/http"), vec!["net", "http"]);
        assert_eq!(t("no route for path"), vec!["no", "route", "for", "path"]);
        assert!(t("  ...  ").is_empty());
    }
}
