//! JWT / OIDC bearer tokens end to end: an OIDC-shaped issuer started by the test
//! (discovery document and JWKS over HTTP), tokens signed by the test with OpenSSL's
//! command line (RS256) and ed25519-dalek (EdDSA), validated by authz and used through the
//! MCP gateway.

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use codectx::bench::client::McpClient;
use codectx::stack::{Stack, StackOptions};
use codectx_authz::oidc::OidcConfig;
use codectx_clients::bearer_credential;
use codectx_errors::ErrorKind;
use codectx_proto::authz::v1 as pb;
use codectx_tests::{TestStack, add_repository};
use serde_json::{Value, json};

const AUDIENCE: &str = "codectx";

/// The test's issuer: serves `/.well-known/openid-configuration` and `/jwks`.
struct Issuer {
    url: String,
    keys: Arc<Mutex<Vec<Value>>>,
    rsa_key: std::path::PathBuf,
    ed25519: ed25519_dalek::SigningKey,
    _dir: tempfile::TempDir,
}

fn openssl(args: &[&str]) -> Vec<u8> {
    codectx_tests::openssl(&std::env::temp_dir(), args)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

impl Issuer {
    async fn start() -> Issuer {
        let dir = tempfile::tempdir().unwrap();
        let rsa_key = dir.path().join("rsa.pem");
        openssl(&["genrsa", "-out", rsa_key.to_str().unwrap(), "2048"]);
        let modulus = String::from_utf8(openssl(&[
            "rsa",
            "-in",
            rsa_key.to_str().unwrap(),
            "-noout",
            "-modulus",
        ]))
        .unwrap();
        let modulus = hex_bytes(modulus.trim().trim_start_matches("Modulus="));
        let rsa_jwk = json!({"kty": "RSA", "kid": "rsa-1", "alg": "RS256", "use": "sig",
                             "n": URL_SAFE_NO_PAD.encode(modulus), "e": "AQAB"});
        let ed25519 = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]);
        let keys = Arc::new(Mutex::new(vec![rsa_jwk]));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let discovery = json!({"issuer": url, "jwks_uri": format!("{url}/jwks")});
        let served = keys.clone();
        let router = axum::Router::new()
            .route(
                "/.well-known/openid-configuration",
                axum::routing::get(move || {
                    let discovery = discovery.clone();
                    async move { axum::Json(discovery) }
                }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || {
                    let keys = served.lock().unwrap().clone();
                    async move { axum::Json(json!({"keys": keys})) }
                }),
            );
        tokio::spawn(async move { axum::serve(listener, router).await });
        Issuer {
            url,
            keys,
            rsa_key,
            ed25519,
            _dir: dir,
        }
    }

    /// Publishes the Ed25519 key (a key rotation at the issuer).
    fn publish_ed25519(&self) {
        let x = URL_SAFE_NO_PAD.encode(self.ed25519.verifying_key().as_bytes());
        self.keys.lock().unwrap().push(
            json!({"kty": "OKP", "crv": "Ed25519", "kid": "ed-1", "alg": "EdDSA", "use": "sig", "x": x}),
        );
    }

    fn claims(&self, sub: &str) -> Value {
        json!({"iss": self.url, "aud": AUDIENCE, "sub": sub, "iat": now(), "exp": now() + 300})
    }

    /// A compact JWS: `header.payload.signature`, signed as `header` says.
    fn token(&self, header: Value, claims: &Value) -> String {
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = match header["alg"].as_str().unwrap() {
            "RS256" => {
                let file = self._dir.path().join("input");
                std::fs::write(&file, &input).unwrap();
                openssl(&[
                    "dgst",
                    "-sha256",
                    "-sign",
                    self.rsa_key.to_str().unwrap(),
                    file.to_str().unwrap(),
                ])
            }
            "EdDSA" => {
                use ed25519_dalek::Signer;
                self.ed25519.sign(input.as_bytes()).to_bytes().to_vec()
            }
            "HS256" => {
                // Algorithm confusion: an HMAC keyed with the issuer's public RSA key.
                use sha2_hmac::hmac;
                hmac(
                    self.keys.lock().unwrap()[0]["n"]
                        .as_str()
                        .unwrap()
                        .as_bytes(),
                    input.as_bytes(),
                )
            }
            _ => Vec::new(),
        };
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature))
    }

    fn rs256(&self, claims: &Value) -> String {
        self.token(
            json!({"alg": "RS256", "typ": "JWT", "kid": "rsa-1"}),
            claims,
        )
    }
}

/// HMAC-SHA256 by its definition (RFC 2104), for the algorithm-confusion token.
mod sha2_hmac {
    pub fn hmac(key: &[u8], message: &[u8]) -> Vec<u8> {
        use sha2::{Digest, Sha256};
        let mut block = [0u8; 64];
        if key.len() > 64 {
            block[..32].copy_from_slice(&Sha256::digest(key));
        } else {
            block[..key.len()].copy_from_slice(key);
        }
        let inner_pad: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
        let outer_pad: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
        let inner = Sha256::new()
            .chain_update(&inner_pad)
            .chain_update(message)
            .finalize();
        Sha256::new()
            .chain_update(&outer_pad)
            .chain_update(inner)
            .finalize()
            .to_vec()
    }
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

async fn authenticate(
    stack: &TestStack,
    token: &str,
) -> Result<pb::Subject, codectx_errors::Error> {
    stack
        .authz()
        .authenticate(pb::AuthenticateRequest {
            credential: Some(bearer_credential(token)),
        })
        .await
        .map(|r| r.subject.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwt_bearer_tokens_from_an_oidc_issuer() {
    let issuer = Issuer::start().await;
    let data = tempfile::tempdir().unwrap();
    let stack = Stack::start(StackOptions {
        oidc: OidcConfig {
            issuer: issuer.url.clone(),
            audience: AUDIENCE.into(),
            jwks_min_refresh_seconds: 0,
            ..OidcConfig::default()
        },
        ..StackOptions::ephemeral(data.path().to_path_buf())
    })
    .await
    .unwrap();
    let stack = TestStack { stack, data };
    let authz = stack.authz();
    let admin = stack.admin_key();
    let organisation = authz
        .create_organisation(
            admin,
            pb::CreateOrganisationRequest {
                name: "idp-org".into(),
            },
        )
        .await
        .unwrap();
    let alice = authz
        .create_subject(
            admin,
            pb::CreateSubjectRequest {
                organisation_id: organisation.id.clone(),
                name: "alice".into(),
                role: pb::Role::Member as i32,
            },
        )
        .await
        .unwrap();
    let valid = issuer.rs256(&issuer.claims("idp|alice"));

    // Not linked yet: a valid token names nobody.
    let error = authenticate(&stack, &valid).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unauthenticated, "{error}");
    authz
        .link_identity(
            admin,
            pb::IdentityRequest {
                subject_id: alice.id.clone(),
                claim: "idp|alice".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(authenticate(&stack, &valid).await.unwrap().id, alice.id);

    // Every other shape of token is refused, with a reason and no panic.
    let mut wrong_audience = issuer.claims("idp|alice");
    wrong_audience["aud"] = json!("someone-else");
    let mut wrong_issuer = issuer.claims("idp|alice");
    wrong_issuer["iss"] = json!("https://evil.example");
    let mut expired = issuer.claims("idp|alice");
    expired["exp"] = json!(now() - 120);
    let mut not_yet = issuer.claims("idp|alice");
    not_yet["nbf"] = json!(now() + 120);
    let mut no_expiry = issuer.claims("idp|alice");
    no_expiry.as_object_mut().unwrap().remove("exp");
    let tampered = {
        let mut parts: Vec<String> = valid.split('.').map(str::to_owned).collect();
        let mut claims = issuer.claims("idp|alice");
        claims["sub"] = json!("idp|mallory");
        parts[1] = URL_SAFE_NO_PAD.encode(claims.to_string());
        parts.join(".")
    };
    let refused = [
        ("wrong audience", issuer.rs256(&wrong_audience)),
        ("wrong issuer", issuer.rs256(&wrong_issuer)),
        ("expired", issuer.rs256(&expired)),
        ("not yet valid", issuer.rs256(&not_yet)),
        ("no expiry", issuer.rs256(&no_expiry)),
        ("tampered payload", tampered),
        (
            "alg none",
            issuer.token(
                json!({"alg": "none", "kid": "rsa-1"}),
                &issuer.claims("idp|alice"),
            ),
        ),
        (
            "HS256 keyed with the public key",
            issuer.token(
                json!({"alg": "HS256", "kid": "rsa-1"}),
                &issuer.claims("idp|alice"),
            ),
        ),
        (
            "unknown key id",
            issuer.token(
                json!({"alg": "RS256", "kid": "nope"}),
                &issuer.claims("idp|alice"),
            ),
        ),
        (
            "no key id",
            issuer.token(json!({"alg": "RS256"}), &issuer.claims("idp|alice")),
        ),
        ("not a JWT", "eyJnot-json.eyJ.x".into()),
        ("huge", format!("eyJ{}.eyJ.x", "a".repeat(20_000))),
    ];
    for (what, token) in refused {
        let error = authenticate(&stack, &token).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Unauthenticated, "{what}: {error}");
        assert_eq!(error.reason(), "credential_rejected", "{what}: {error}");
    }

    // The issuer rotates in a new key: a token naming it refreshes the key set.
    issuer.publish_ed25519();
    let rotated = issuer.token(
        json!({"alg": "EdDSA", "typ": "JWT", "kid": "ed-1"}),
        &issuer.claims("idp|alice"),
    );
    assert_eq!(authenticate(&stack, &rotated).await.unwrap().id, alice.id);

    // Through the MCP gateway: the JWT is the bearer, tools answer for alice's grants.
    add_repository(&stack, &organisation.id, &alice.id, "idp-repo")
        .await
        .unwrap();
    let url = format!("http://{}/mcp", stack.stack.gateway_http().unwrap());
    let client = McpClient::connect(&url, &valid).await.unwrap();
    let listed = client
        .call("list_repositories", &serde_json::Map::new())
        .await
        .unwrap();
    assert!(listed.haystack.contains("idp-repo"), "{}", listed.haystack);

    // Unlinking is revocation by subject: the same unexpired token fails on the next
    // request, at authz and at the gateway.
    authz
        .unlink_identity(
            admin,
            pb::IdentityRequest {
                subject_id: alice.id.clone(),
                claim: "idp|alice".into(),
            },
        )
        .await
        .unwrap();
    let error = authenticate(&stack, &valid).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unauthenticated);
    let after = client
        .call("list_repositories", &serde_json::Map::new())
        .await;
    assert!(
        after.is_err() || after.as_ref().is_ok_and(|o| o.is_error),
        "{after:?}"
    );
    client.close().await;
    stack.stack.stop().await.unwrap();
}
