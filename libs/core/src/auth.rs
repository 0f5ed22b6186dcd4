//! Parsing of `Authorization` header values, shared by the gateway (HTTP) and authz
//! (gRPC metadata) so both accept exactly the same credentials.

/// The token of an `Authorization: Bearer <token>` value. The scheme is matched without
/// regard to case and may be followed by one or more spaces (RFC 9110 section 11.1 and
/// RFC 6750 section 2.1); an empty token is no token.
pub fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = rest.trim_matches(' ');
    (!token.is_empty() && !token.contains(' ')).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::bearer_token;

    #[test]
    fn the_scheme_is_case_insensitive() {
        for value in ["Bearer abc", "bearer abc", "BEARER abc", "bEaReR  abc "] {
            assert_eq!(bearer_token(value), Some("abc"), "{value:?}");
        }
    }

    #[test]
    fn other_schemes_and_empty_tokens_are_not_bearer() {
        for value in [
            "Basic abc",
            "Bearer",
            "Bearer ",
            "Bearerabc",
            "",
            "Bearer a b",
        ] {
            assert_eq!(bearer_token(value), None, "{value:?}");
        }
    }
}
