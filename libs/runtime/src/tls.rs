//! TLS between services: the server side (rustls through tokio-rustls under tonic), with
//! the certificate and key re-read from their files when they change, so cert-manager or
//! a mesh can rotate them without a restart; and the client side's settings.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime};

use codectx_errors::Error;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use serde::{Deserialize, Serialize};

/// How often, at most, a handshake checks whether the files changed.
const RELOAD_CHECK: Duration = Duration::from_secs(1);

/// The `[server.tls]` section. Empty `cert_file`: plaintext (loopback only, e.g.
/// `codectx up`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct ServerTlsConfig {
    /// PEM certificate chain (leaf first), e.g. a cert-manager Secret's `tls.crt`.
    pub cert_file: String,
    /// PEM private key, e.g. `tls.key`.
    pub key_file: String,
    /// PEM CA bundle; when set, callers must present a certificate it signed (mTLS).
    pub client_ca_file: String,
}

impl ServerTlsConfig {
    pub fn enabled(&self) -> bool {
        !self.cert_file.is_empty()
    }
}

fn tls_error(what: &str, path: &Path, error: impl std::fmt::Display) -> Error {
    Error::invalid_argument("server.tls", format!("{what} {}: {error}", path.display()))
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn load_certified_key(cert: &Path, key: &Path) -> Result<Arc<CertifiedKey>, Error> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| tls_error("cannot read the certificate", cert, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| tls_error("cannot parse the certificate", cert, e))?;
    if chain.is_empty() {
        return Err(tls_error("no certificate in", cert, "empty PEM"));
    }
    let private = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| tls_error("cannot read the private key", key, e))?;
    let signing = rustls::crypto::ring::sign::any_supported_type(&private)
        .map_err(|e| tls_error("unsupported private key", key, e))?;
    Ok(Arc::new(CertifiedKey::new(chain, signing)))
}

#[derive(Debug)]
struct Loaded {
    key: Arc<CertifiedKey>,
    cert_modified: Option<SystemTime>,
    key_modified: Option<SystemTime>,
    checked: Instant,
}

/// Serves the certificate in `cert`/`key`, re-reading both when either file's modification
/// time changes (checked at most once a second, on a handshake). A file that fails to
/// load keeps the previous certificate in service and is logged.
#[derive(Debug)]
pub struct ReloadingCertificate {
    cert: PathBuf,
    key: PathBuf,
    loaded: RwLock<Loaded>,
}

impl ReloadingCertificate {
    pub fn open(cert: &Path, key: &Path) -> Result<Self, Error> {
        let loaded = Loaded {
            key: load_certified_key(cert, key)?,
            cert_modified: modified(cert),
            key_modified: modified(key),
            checked: Instant::now(),
        };
        Ok(Self {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            loaded: RwLock::new(loaded),
        })
    }

    /// The certificate in service, reloaded first if the files changed.
    pub fn current(&self) -> Arc<CertifiedKey> {
        let due = self
            .loaded
            .read()
            .map(|l| l.checked.elapsed() >= RELOAD_CHECK)
            .unwrap_or(true);
        if due {
            self.reload_if_changed();
        }
        self.loaded
            .read()
            .map(|l| l.key.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().key.clone())
    }

    fn reload_if_changed(&self) {
        let Ok(mut loaded) = self.loaded.write() else {
            return;
        };
        loaded.checked = Instant::now();
        let (cert_modified, key_modified) = (modified(&self.cert), modified(&self.key));
        if cert_modified == loaded.cert_modified && key_modified == loaded.key_modified {
            return;
        }
        match load_certified_key(&self.cert, &self.key) {
            Ok(key) => {
                loaded.key = key;
                loaded.cert_modified = cert_modified;
                loaded.key_modified = key_modified;
                tracing::info!(cert = %self.cert.display(), "TLS certificate reloaded");
            }
            // Half-written during a rotation, or wrong: keep serving the old one.
            Err(error) => tracing::warn!(%error, "TLS certificate not reloaded"),
        }
    }
}

impl ResolvesServerCert for ReloadingCertificate {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The rustls server configuration for `config` (HTTP/2 by ALPN, as gRPC needs).
pub fn server_config(config: &ServerTlsConfig) -> Result<Arc<rustls::ServerConfig>, Error> {
    let resolver = Arc::new(ReloadingCertificate::open(
        Path::new(&config.cert_file),
        Path::new(&config.key_file),
    )?);
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::internal(format!("TLS versions: {e}")))?;
    let builder = if config.client_ca_file.is_empty() {
        builder.with_no_client_auth()
    } else {
        let path = Path::new(&config.client_ca_file);
        let mut roots = rustls::RootCertStore::empty();
        for certificate in CertificateDer::pem_file_iter(path)
            .map_err(|e| tls_error("cannot read the client CA", path, e))?
        {
            let certificate =
                certificate.map_err(|e| tls_error("cannot parse the client CA", path, e))?;
            roots
                .add(certificate)
                .map_err(|e| tls_error("unusable client CA", path, e))?;
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
            .map_err(|e| tls_error("client CA", path, e))?;
        builder.with_client_cert_verifier(verifier)
    };
    let mut server = builder.with_cert_resolver(resolver);
    server.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(server))
}

/// True when `endpoint`'s host is a loopback address or `localhost`: the only place a
/// plaintext hop is accepted.
pub fn is_loopback(endpoint: &str) -> bool {
    let Ok(uri) = endpoint.parse::<http::Uri>() else {
        return false;
    };
    match uri.host() {
        Some("localhost") => true,
        Some(host) => host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback()),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::is_loopback;

    #[test]
    fn only_loopback_hosts_are_loopback() {
        for endpoint in [
            "http://127.0.0.1:50051",
            "http://localhost:1",
            "http://[::1]:50051",
        ] {
            assert!(is_loopback(endpoint), "{endpoint}");
        }
        for endpoint in [
            "http://authz:50051",
            "http://10.0.0.7:50051",
            "http://127.0.0.1.evil.example:50051",
            "not a uri",
        ] {
            assert!(!is_loopback(endpoint), "{endpoint}");
        }
    }
}
