//! JWT bearer tokens from an OpenID Connect issuer, beside API keys.
//!
//! A token is accepted when its signature verifies with a key of the issuer's JWKS (fetched
//! with reqwest, cached, refreshed when a token names a key id the cache lacks), its
//! algorithm is an allowed asymmetric one, and its issuer, audience, expiry and not-before
//! hold. The configured claim (`sub` by default) names an identity; an admin links it to a
//! codectx subject (`LinkIdentity`), and unlinking takes effect on the next request because
//! every authentication reads the link.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use codectx_errors::Error;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::{Deserialize, Serialize};

/// Longest token accepted.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// Longest identity (claim value) accepted.
pub const MAX_IDENTITY_BYTES: usize = 256;

/// The `[oidc]` section. An empty issuer disables JWT bearer tokens.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct OidcConfig {
    /// The issuer (`iss`), e.g. `https://login.example.com/realms/acme`.
    pub issuer: String,
    /// The audience tokens must name (`aud`), e.g. `codectx`.
    pub audience: String,
    /// The JWKS address; empty: discovered from `<issuer>/.well-known/openid-configuration`.
    pub jwks_url: String,
    /// The claim that names the identity linked to a subject.
    pub subject_claim: String,
    /// Accepted signature algorithms (asymmetric only: RS256, RS384, RS512, PS256, PS384,
    /// PS512, ES256, ES384, EdDSA).
    pub algorithms: Vec<String>,
    /// Allowed clock difference for `exp` and `nbf`, in seconds.
    pub leeway_seconds: u64,
    /// How long a fetched key set is used before it is fetched again, in seconds.
    pub jwks_refresh_seconds: u64,
    /// A token naming a key id the set lacks refetches it at most this often, in seconds
    /// (so tokens cannot make authz hammer the issuer).
    pub jwks_min_refresh_seconds: u64,
}

impl Default for OidcConfig {
    fn default() -> Self {
        Self {
            issuer: String::new(),
            audience: String::new(),
            jwks_url: String::new(),
            subject_claim: "sub".into(),
            algorithms: vec!["RS256".into(), "ES256".into(), "EdDSA".into()],
            leeway_seconds: 30,
            jwks_refresh_seconds: 300,
            jwks_min_refresh_seconds: 10,
        }
    }
}

impl OidcConfig {
    pub fn enabled(&self) -> bool {
        !self.issuer.is_empty()
    }
}

/// The identity a valid token carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub issuer: String,
    pub claim: String,
}

#[derive(Debug)]
struct Cached {
    keys: JwkSet,
    fetched_at: Instant,
}

/// Validates tokens of one issuer.
#[derive(Debug)]
pub struct OidcValidator {
    config: OidcConfig,
    algorithms: Vec<Algorithm>,
    http: reqwest::Client,
    cache: Mutex<Option<Cached>>,
    /// Serializes fetches, so a burst of tokens with a new key id makes one request.
    fetching: tokio::sync::Mutex<()>,
}

fn rejected(message: impl Into<String>) -> Error {
    Error::unauthenticated(message).with_reason("credential_rejected")
}

impl OidcValidator {
    pub fn new(config: OidcConfig) -> Result<Self, Error> {
        let algorithms = config
            .algorithms
            .iter()
            .map(|name| match name.as_str() {
                "RS256" => Ok(Algorithm::RS256),
                "RS384" => Ok(Algorithm::RS384),
                "RS512" => Ok(Algorithm::RS512),
                "PS256" => Ok(Algorithm::PS256),
                "PS384" => Ok(Algorithm::PS384),
                "PS512" => Ok(Algorithm::PS512),
                "ES256" => Ok(Algorithm::ES256),
                "ES384" => Ok(Algorithm::ES384),
                "EdDSA" => Ok(Algorithm::EdDSA),
                other => Err(Error::invalid_argument(
                    "oidc.algorithms",
                    format!("{other:?} is not an accepted asymmetric JWT algorithm"),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if config.audience.is_empty() {
            return Err(Error::invalid_argument(
                "oidc.audience",
                "set the audience tokens must carry (e.g. codectx)",
            ));
        }
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| Error::internal(format!("JWKS client: {e}")))?;
        Ok(Self {
            config,
            algorithms,
            http,
            cache: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
        })
    }

    pub fn issuer(&self) -> &str {
        &self.config.issuer
    }

    /// The identity a valid token names, or `credential_rejected` saying why not.
    pub async fn validate(&self, token: &str) -> Result<Identity, Error> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(rejected(format!(
                "the bearer token is {} bytes; the limit is {MAX_TOKEN_BYTES}",
                token.len()
            )));
        }
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| rejected(format!("the bearer token is not a JWT: {e}")))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(rejected(format!(
                "tokens signed with {:?} are not accepted",
                header.alg
            )));
        }
        let kid = header
            .kid
            .ok_or_else(|| rejected("the token names no key id (kid)"))?;
        let key = self.key(&kid).await?;
        // Exactly the header's algorithm, already checked against the accepted list (the
        // key's family must match it, so an HMAC header never meets a public key).
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.config.leeway_seconds;
        let data = jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(
            token,
            &key,
            &validation,
        )
        .map_err(|e| rejected(format!("the bearer token was refused: {e}")))?;
        let claim = data
            .claims
            .get(&self.config.subject_claim)
            .and_then(|v| v.as_str())
            .filter(|v| !v.is_empty() && v.len() <= MAX_IDENTITY_BYTES)
            .ok_or_else(|| {
                rejected(format!(
                    "the token has no usable {:?} claim",
                    self.config.subject_claim
                ))
            })?;
        Ok(Identity {
            issuer: self.config.issuer.clone(),
            claim: claim.to_owned(),
        })
    }

    /// The verification key `kid`, fetching the key set when it is stale or lacks the id
    /// (at most once per `jwks_min_refresh_seconds` for unknown ids).
    async fn key(&self, kid: &str) -> Result<DecodingKey, Error> {
        let ttl = Duration::from_secs(self.config.jwks_refresh_seconds.max(1));
        let min_refresh = Duration::from_secs(self.config.jwks_min_refresh_seconds);
        if let Some(key) = self.cached_key(kid, |age| age < ttl)? {
            return Ok(key);
        }
        let _fetching = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        if let Some(key) = self.cached_key(kid, |age| age < ttl)? {
            return Ok(key);
        }
        let recently = self
            .cache
            .lock()
            .map_err(|_| Error::internal("JWKS cache lock poisoned"))?
            .as_ref()
            .is_some_and(|c| c.fetched_at.elapsed() < min_refresh);
        if !recently {
            let keys = self.fetch().await?;
            *self
                .cache
                .lock()
                .map_err(|_| Error::internal("JWKS cache lock poisoned"))? = Some(Cached {
                keys,
                fetched_at: Instant::now(),
            });
        }
        self.cached_key(kid, |_| true)?.ok_or_else(|| {
            rejected(format!(
                "the token's key id {:?} is not in the issuer's key set",
                kid.chars().take(64).collect::<String>()
            ))
        })
    }

    fn cached_key(
        &self,
        kid: &str,
        fresh: impl Fn(Duration) -> bool,
    ) -> Result<Option<DecodingKey>, Error> {
        let cache = self
            .cache
            .lock()
            .map_err(|_| Error::internal("JWKS cache lock poisoned"))?;
        let Some(cached) = cache.as_ref() else {
            return Ok(None);
        };
        if !fresh(cached.fetched_at.elapsed()) {
            return Ok(None);
        }
        match cached.keys.find(kid) {
            Some(jwk) => DecodingKey::from_jwk(jwk)
                .map(Some)
                .map_err(|e| rejected(format!("the issuer's key {kid:?} is unusable: {e}"))),
            None => Ok(None),
        }
    }

    async fn fetch(&self) -> Result<JwkSet, Error> {
        let unavailable = |what: &str, e: &dyn std::fmt::Display| {
            tracing::warn!(issuer = %self.config.issuer, error = %e, "{what}");
            Error::unavailable(format!(
                "{what} from the token issuer failed; retry in a moment"
            ))
        };
        let jwks_url = if self.config.jwks_url.is_empty() {
            #[derive(Deserialize)]
            struct Discovery {
                issuer: String,
                jwks_uri: String,
            }
            let url = format!(
                "{}/.well-known/openid-configuration",
                self.config.issuer.trim_end_matches('/')
            );
            let discovery: Discovery = self
                .http
                .get(&url)
                .send()
                .await
                .and_then(reqwest::Response::error_for_status)
                .map_err(|e| unavailable("OpenID discovery", &e))?
                .json()
                .await
                .map_err(|e| unavailable("OpenID discovery", &e))?;
            // The document must describe the configured issuer (OpenID Discovery 4.3).
            if discovery.issuer != self.config.issuer {
                return Err(unavailable(
                    "OpenID discovery",
                    &format!("the document names issuer {:?}", discovery.issuer),
                ));
            }
            discovery.jwks_uri
        } else {
            self.config.jwks_url.clone()
        };
        self.http
            .get(&jwks_url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| unavailable("fetching the JWKS", &e))?
            .json::<JwkSet>()
            .await
            .map_err(|e| unavailable("reading the JWKS", &e))
    }
}
