//! Masks secrets in every string the graph stores: summaries, signatures, error and
//! other string literals. Source code carries example credentials, test keys and, now and
//! then, real ones; the graph is read by every agent entitled to the repository, so no
//! stored string may hold one.
//!
//! The rule set, applied in order (each a maintained list below; add a provider's format
//! to [`TOKEN_FORMATS`] with a line in the corpus test):
//! 1. PEM private key blocks;
//! 2. known credential formats (cloud, VCS, chat, payment, package-registry and model
//!    provider tokens, JWTs, codectx's own API keys);
//! 3. passwords in URLs (`scheme://user:password@host`);
//! 4. quoted values assigned to secret-looking names (`apiKey = "..."`, `"password": "..."`,
//!    `API_KEY = '...'`), whatever the value looks like;
//! 5. long high-entropy tokens (random keys that follow no known format).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

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

/// Prefixes of well-known credential formats (for prose, word by word).
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

/// Credential formats with a recognisable shape: (what, pattern).
pub const TOKEN_FORMATS: &[(&str, &str)] = &[
    (
        "aws access key id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b",
    ),
    ("github token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
    (
        "github fine-grained token",
        r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b",
    ),
    (
        "gitlab token",
        r"\bgl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_\-]{20,}",
    ),
    ("slack token", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"),
    (
        "slack webhook",
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]+",
    ),
    (
        "stripe key",
        r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b",
    ),
    ("google api key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    (
        "openai or anthropic key",
        r"\bsk-(?:proj-|ant-(?:api|admin)\d\d-|svcacct-)?[A-Za-z0-9_\-]{20,}",
    ),
    (
        "json web token",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"),
    (
        "sendgrid key",
        r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b",
    ),
    ("twilio key", r"\bSK[0-9a-fA-F]{32}\b"),
    ("hugging face token", r"\bhf_[A-Za-z0-9]{34,}\b"),
    ("digitalocean token", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    ("codectx api key", r"\bcxk_[A-Za-z0-9_\-]{16,}"),
    (
        "azure connection key",
        r#"(?i)\b(?:AccountKey|SharedAccessKey)=[^;"'`\s]+"#,
    ),
];

/// Names that hold secrets, as they appear in identifiers of any case style.
const SECRET_NAME: &str = r"(?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|client[_\-]?secret|credentials?|auth[_\-]?key|signing[_\-]?key|bearer)";

struct Rules {
    pem: Regex,
    tokens: Regex,
    url_password: Regex,
    assignment: Regex,
    word: Regex,
}

static RULES: LazyLock<Rules> = LazyLock::new(|| {
    let tokens = TOKEN_FORMATS
        .iter()
        .map(|(_, pattern)| format!("(?:{pattern})"))
        .collect::<Vec<_>>()
        .join("|");
    Rules {
        pem: Regex::new(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)")
            .expect("pem rule"),
        tokens: Regex::new(&tokens).expect("token rules"),
        url_password: Regex::new(r#"\b([a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@"'`]*:)([^@/\s"'`]+)@"#)
            .expect("url rule"),
        // name, optional closing quote, optional type annotation (`: &str`), an
        // assignment operator, an opening quote, the value.
        assignment: Regex::new(&format!(
            r#"(?i)([A-Za-z0-9_.\-]*{SECRET_NAME}[A-Za-z0-9_.\-]*["']?\s*(?::\s*[&A-Za-z0-9_<>\[\]:' ]{{1,40}}?\s*)?(?::=|=>|=|:)\s*)(["'`])([^"'`\n]+)(["'`])"#
        ))
        .expect("assignment rule"),
        word: Regex::new(r"[A-Za-z0-9_+/\-]{32,}").expect("word rule"),
    }
});

/// Masks every secret the rule set recognises in `text`. Borrowed when nothing matched
/// (the common case costs one scan per rule).
pub fn text(text: &str) -> Cow<'_, str> {
    let rules = &*RULES;
    let mut out: Cow<'_, str> = Cow::Borrowed(text);
    if rules.pem.is_match(&out) {
        out = Cow::Owned(
            rules
                .pem
                .replace_all(&out, "[redacted private key]")
                .into_owned(),
        );
    }
    if rules.tokens.is_match(&out) {
        out = Cow::Owned(rules.tokens.replace_all(&out, MASK).into_owned());
    }
    if rules.url_password.is_match(&out) {
        out = Cow::Owned(
            rules
                .url_password
                .replace_all(&out, format!("${{1}}{MASK}@"))
                .into_owned(),
        );
    }
    if rules.assignment.is_match(&out) {
        out = Cow::Owned(
            rules
                .assignment
                .replace_all(&out, |caps: &regex::Captures<'_>| {
                    let value = &caps[3];
                    if value == MASK || value.starts_with("[redacted") {
                        caps[0].to_owned()
                    } else {
                        format!("{}{}{MASK}{}", &caps[1], &caps[2], &caps[4])
                    }
                })
                .into_owned(),
        );
    }
    if rules.word.is_match(&out) {
        let replaced = rules.word.replace_all(&out, |caps: &regex::Captures<'_>| {
            let word = &caps[0];
            if looks_random(word) {
                MASK.to_owned()
            } else {
                word.to_owned()
            }
        });
        if let Cow::Owned(replaced) = replaced {
            out = Cow::Owned(replaced);
        }
    }
    out
}

/// Redacts a one-line summary: the rule set, then prose forms (`password hunter2`,
/// `token: abc`) word by word.
pub fn summary(summary: &str) -> String {
    if summary.contains("-----BEGIN") {
        return MASK.to_owned();
    }
    let redacted = text(summary);
    let text = redacted.as_ref();
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
    fn masks_credentials_in_prose() {
        assert_eq!(
            summary("Connects with password=hunter2 to the db"),
            "Connects with password=[redacted] to the db"
        );
        assert_eq!(
            summary("Use token: abc123 here"),
            "Use token: [redacted] here"
        );
        assert_eq!(
            summary(&format!("Key {}IOSFODNN7EXAMPLE1 is old", "AKIA")),
            "Key [redacted] is old"
        );
        assert_eq!(
            summary(&format!(
                "Token {}_abcdefghijklmnopqrstuvwxyz0123456789",
                "ghp"
            )),
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
