use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use codectx_errors::Error;
use codectx_proto::authz::v1::GetVerificationKeysRequest;
use codectx_proto::authz::v1::authz_service_client::AuthzServiceClient;
use codectx_tenant::{VerificationKey, Verifier};
use serde::{Deserialize, Serialize};

/// The `[tenant]` section: where a service gets the public keys that verify contexts.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct TenantConfig {
    /// A file of `<key id> <base64 public key>` lines (the chart mounts it from a
    /// ConfigMap). Takes precedence over `authz_endpoint`.
    pub verification_keys_file: String,
    /// Otherwise fetch the keys from authz (`https://authz:50051`) and refresh them. Only
    /// over TLS (`authz_tls`), or plaintext to a loopback address: the keys decide whom
    /// every request trusts, so they never cross a network unauthenticated.
    pub authz_endpoint: String,
    /// TLS to authz for the key fetch (its CA; a client certificate if authz asks).
    pub authz_tls: codectx_clients::PeerTls,
    /// Refresh period when fetching from authz, in seconds (0: 60).
    pub refresh_seconds: u64,
}

/// Builds the verifier a service's [`crate::serve`] uses, from a key file or from authz.
pub async fn load_verifier(config: &TenantConfig) -> Result<Arc<Verifier>, Error> {
    if !config.verification_keys_file.is_empty() {
        let keys = read_public_keys(Path::new(&config.verification_keys_file))?;
        return Ok(Arc::new(Verifier::new(keys)?));
    }
    if config.authz_endpoint.is_empty() {
        return Err(Error::invalid_argument(
            "tenant",
            "no verification keys: set tenant.verification_keys_file or tenant.authz_endpoint",
        ));
    }
    let endpoint = config.authz_endpoint.clone();
    if !config.authz_tls.enabled() && !crate::tls::is_loopback(&endpoint) {
        return Err(Error::invalid_argument(
            "tenant.authz_tls",
            format!(
                "verification keys are fetched from {endpoint} without TLS: set tenant.authz_tls.ca_file (and an https:// endpoint), or use tenant.verification_keys_file"
            ),
        ));
    }
    let tls = config.authz_tls.clone();
    let verifier = Arc::new(Verifier::default());
    // Wait for authz at startup: a service that cannot verify must not serve.
    let mut delay = Duration::from_millis(200);
    loop {
        match fetch_keys(&endpoint, &tls).await {
            Ok(keys) => {
                replace_keys(&verifier, keys)?;
                break;
            }
            Err(error) => {
                tracing::warn!(%endpoint, %error, "waiting for authz verification keys");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(5));
            }
        }
    }
    let refresh = Duration::from_secs(if config.refresh_seconds == 0 {
        60
    } else {
        config.refresh_seconds
    });
    let weak = Arc::downgrade(&verifier);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(refresh).await;
            let Some(verifier) = weak.upgrade() else {
                break;
            };
            match fetch_keys(&endpoint, &tls).await {
                Ok(keys) => {
                    if let Err(error) = replace_keys(&verifier, keys) {
                        tracing::warn!(%error, "authz sent an invalid verification key");
                    }
                }
                Err(error) => tracing::warn!(%endpoint, %error, "verification key refresh failed"),
            }
        }
    });
    Ok(verifier)
}

fn replace_keys(verifier: &Verifier, keys: Vec<VerificationKey>) -> Result<(), Error> {
    for key in &keys {
        verifier.trust(key)?;
    }
    for old in verifier.key_ids() {
        if !keys.iter().any(|k| k.key_id == old) {
            verifier.distrust(&old);
        }
    }
    Ok(())
}

async fn fetch_keys(
    endpoint: &str,
    tls: &codectx_clients::PeerTls,
) -> Result<Vec<VerificationKey>, Error> {
    let channel = codectx_clients::endpoint("authz", endpoint, tls)?
        .connect_timeout(Duration::from_secs(2))
        .connect()
        .await
        .map_err(|e| Error::unavailable(format!("authz at {endpoint}: {e}")))?;
    let response = AuthzServiceClient::new(channel)
        .get_verification_keys(GetVerificationKeysRequest {})
        .await?
        .into_inner();
    response
        .keys
        .into_iter()
        .map(|key| {
            let public_key: [u8; 32] = key.public_key.try_into().map_err(|_| {
                Error::internal(format!(
                    "authz sent a public key for {} that is not 32 bytes",
                    key.key_id
                ))
            })?;
            Ok(VerificationKey {
                key_id: key.key_id,
                public_key,
            })
        })
        .collect()
}

/// Reads `<key id> <base64 public key>` lines (`#` comments allowed).
pub fn read_public_keys(path: &Path) -> Result<Vec<VerificationKey>, Error> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::invalid_argument(
            "tenant.verification_keys_file",
            format!("cannot read {shown}: {e}"),
        )
    })?;
    let mut keys = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || {
            Error::invalid_argument(
                "tenant.verification_keys_file",
                format!(
                    "{shown} line {}: expected `<key id> <base64 32-byte public key>`",
                    number + 1
                ),
            )
        };
        let (key_id, encoded) = line.split_once(' ').ok_or_else(bad)?;
        let public_key: [u8; 32] = STANDARD
            .decode(encoded.trim())
            .map_err(|_| bad())?
            .try_into()
            .map_err(|_| bad())?;
        keys.push(VerificationKey {
            key_id: key_id.to_owned(),
            public_key,
        });
    }
    if keys.is_empty() {
        return Err(Error::invalid_argument(
            "tenant.verification_keys_file",
            format!("{shown} holds no key"),
        ));
    }
    Ok(keys)
}
