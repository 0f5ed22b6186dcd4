//! Identifier-aware tokenization: `ServeHTTP` → serve, http, servehttp;
//! `parse_config` → parse, config, parseconfig; `axum::routing::Router` → axum, routing,
//! router; `v2Client` → v, 2, client, v2client. Lower-cased.

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
