//! Masks secrets in stored summaries. Summaries come from doc comments, which sometimes
//! carry example credentials; the graph must never store one.

const MASK: &str = "[redacted]";

/// Words whose value (`word=value`, `word: value`) is a secret.
const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "private_key",
    "access_key",
    "auth",
];

/// Prefixes of well-known credential formats.
const SECRET_PREFIXES: &[&str] = &[
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "sk-",
    "sk_live_",
    "rk_live_",
    "AIza",
    "cxk_",
];

/// Redacts a one-line summary.
pub fn summary(text: &str) -> String {
    if text.contains("-----BEGIN") {
        return MASK.to_owned();
    }
    let mut out = Vec::new();
    let mut mask_next = false;
    for word in text.split(' ') {
        if mask_next && !word.is_empty() {
            out.push(MASK.to_owned());
            mask_next = false;
            continue;
        }
        out.push(redact_word(word, &mut mask_next));
    }
    out.join(" ")
}

fn redact_word(word: &str, mask_next: &mut bool) -> String {
    let lowered = word.to_ascii_lowercase();
    for separator in ['=', ':'] {
        if let Some((key, value)) = word.split_once(separator) {
            let key_lower = key.to_ascii_lowercase();
            if SECRET_KEYS.iter().any(|k| {
                key_lower
                    .trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
                    .ends_with(k)
            }) {
                if value
                    .trim_matches(|c: char| c == '"' || c == '\'')
                    .is_empty()
                {
                    *mask_next = true;
                    return word.to_owned();
                }
                return format!("{key}{separator}{MASK}");
            }
        }
    }
    let core =
        word.trim_matches(|c: char| !c.is_alphanumeric() && !matches!(c, '_' | '-' | '+' | '/'));
    if SECRET_PREFIXES
        .iter()
        .any(|p| core.starts_with(p) && core.len() >= p.len() + 12)
        || looks_random(core)
    {
        return word.replace(core, MASK);
    }
    let _ = lowered;
    word.to_owned()
}

/// Long tokens mixing letters and digits with high character entropy: keys, not words.
fn looks_random(token: &str) -> bool {
    if token.len() < 24 || token.contains("::") || token.contains('.') {
        return false;
    }
    let has_digit = token.chars().any(|c| c.is_ascii_digit());
    let has_alpha = token.chars().any(|c| c.is_ascii_alphabetic());
    if !(has_digit && has_alpha) {
        return false;
    }
    let mut counts = [0u32; 256];
    for byte in token.bytes() {
        counts[byte as usize] += 1;
    }
    let length = token.len() as f64;
    let entropy: f64 = counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = f64::from(*c) / length;
            -p * p.log2()
        })
        .sum();
    entropy > 3.5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_credentials() {
        assert_eq!(
            summary("Connects with password=hunter2 to the db"),
            "Connects with password=[redacted] to the db"
        );
        assert_eq!(
            summary("Use token: abc123 here"),
            "Use token: [redacted] here"
        );
        assert_eq!(
            summary("Key AKIAIOSFODNN7EXAMPLE1 is old"),
            "Key [redacted] is old"
        );
        assert_eq!(
            summary("Token ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            "Token [redacted]"
        );
        assert_eq!(
            summary("Secret 'q8ZmW2xLr7Tn4Kp9Vb3Yc6Hd1Jf5Gs0A'"),
            "Secret '[redacted]'"
        );
        assert_eq!(summary("-----BEGIN RSA PRIVATE KEY-----"), "[redacted]");
    }

    #[test]
    fn keeps_ordinary_text() {
        for text in [
            "ServeHTTP conforms to the http.Handler interface.",
            "Returns the token count of the text.",
            "Parses axum::routing::Router::route_service_with_tsr arguments",
            "see https://example.com/docs/getting-started for details",
        ] {
            assert_eq!(summary(text), text);
        }
    }
}
