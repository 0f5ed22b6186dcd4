//! TLS between services: a real authz served over TLS with certificates OpenSSL's command
//! line issues, plaintext and untrusted clients refused, mutual TLS, certificate rotation
//! by replacing the files (no restart), and verification keys fetched only over TLS or
//! loopback.

use std::path::{Path, PathBuf};
use std::time::Duration;

use codectx_clients::PeerTls;
use codectx_runtime::tls::ServerTlsConfig;
use codectx_runtime::{ServerConfig, TenantConfig};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

fn openssl(directory: &Path, args: &[&str]) {
    codectx_tests::openssl(directory, args);
}

/// A CA and leaf certificates it signs, all P-256, written under one directory.
struct Pki {
    directory: tempfile::TempDir,
}

impl Pki {
    fn new() -> Pki {
        let pki = Pki {
            directory: tempfile::tempdir().unwrap(),
        };
        pki.ca("ca");
        pki.ca("rogue-ca");
        pki
    }

    fn path(&self, name: &str) -> PathBuf {
        self.directory.path().join(name)
    }

    fn text(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }

    fn ca(&self, name: &str) {
        openssl(
            self.directory.path(),
            &[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.crt"),
                "-days",
                "2",
                "-subj",
                &format!("/CN={name}"),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
        );
    }

    /// A leaf `name.crt`/`name.key` for 127.0.0.1 and localhost, signed by `ca`.
    fn leaf(&self, name: &str, common_name: &str, ca: &str) {
        let directory = self.directory.path();
        std::fs::write(
            directory.join(format!("{name}.ext")),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\n",
        )
        .unwrap();
        openssl(
            directory,
            &[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                &format!("{name}.key.new"),
                "-out",
                &format!("{name}.csr"),
                "-subj",
                &format!("/CN={common_name}"),
            ],
        );
        openssl(
            directory,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                &format!("{ca}.crt"),
                "-CAkey",
                &format!("{ca}.key"),
                "-CAcreateserial",
                "-days",
                "2",
                "-out",
                &format!("{name}.crt.new"),
                "-extfile",
                &format!("{name}.ext"),
            ],
        );
        // Replace both files by rename, as a Secret update does.
        std::fs::rename(
            directory.join(format!("{name}.key.new")),
            directory.join(format!("{name}.key")),
        )
        .unwrap();
        std::fs::rename(
            directory.join(format!("{name}.crt.new")),
            directory.join(format!("{name}.crt")),
        )
        .unwrap();
    }

    fn server_tls(&self, client_ca: bool) -> ServerTlsConfig {
        ServerTlsConfig {
            cert_file: self.text("server.crt"),
            key_file: self.text("server.key"),
            client_ca_file: if client_ca {
                self.text("ca.crt")
            } else {
                String::new()
            },
        }
    }

    fn peer(&self, ca: &str, with_client_certificate: bool) -> PeerTls {
        PeerTls {
            ca_file: self.text(&format!("{ca}.crt")),
            cert_file: if with_client_certificate {
                self.text("client.crt")
            } else {
                String::new()
            },
            key_file: if with_client_certificate {
                self.text("client.key")
            } else {
                String::new()
            },
            domain_name: String::new(),
        }
    }
}

/// authz served on a free loopback port with `tls`.
async fn authz_over_tls(
    data: &Path,
    tls: ServerTlsConfig,
) -> (codectx_runtime::RunningService, String) {
    let config = codectx_authz::Config {
        data_dir: data.display().to_string(),
        ..Default::default()
    };
    let authz = codectx_authz::build(&config).unwrap();
    let verifier = authz.verifier().unwrap();
    let listener = codectx_runtime::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = ServerConfig {
        tls,
        drain_seconds: 0,
        ..ServerConfig::listening_on(format!("127.0.0.1:{port}"))
    };
    let running = codectx_runtime::spawn(
        authz.service,
        listener,
        verifier,
        &server,
        std::future::pending(),
    )
    .unwrap();
    (running, format!("https://127.0.0.1:{port}"))
}

async fn health(uri: &str, tls: &PeerTls) -> Result<ServingStatus, String> {
    let channel = codectx_clients::endpoint("authz", uri, tls)
        .map_err(|e| e.to_string())?
        .connect_timeout(Duration::from_secs(3))
        .connect()
        .await
        .map_err(|e| format!("{e:?}"))?;
    let status = tokio::time::timeout(
        Duration::from_secs(5),
        HealthClient::new(channel).check(HealthCheckRequest {
            service: String::new(),
        }),
    )
    .await
    .map_err(|_| "timed out".to_owned())?
    .map_err(|e| format!("{e:?}"))?;
    Ok(status.into_inner().status())
}

/// The leaf certificate a TLS handshake with `address` presents.
async fn presented_certificate(address: &str, ca: &Path) -> Vec<u8> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for certificate in rustls::pki_types::CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(certificate.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let tls = connector.connect(name, stream).await.unwrap();
    tls.get_ref().1.peer_certificates().unwrap()[0].to_vec()
}

fn leaf_der(pki: &Pki, name: &str) -> Vec<u8> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::from_pem_file(pki.path(&format!("{name}.crt")))
        .unwrap()
        .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn services_speak_tls_and_rotate_certificates_without_a_restart() {
    let pki = Pki::new();
    pki.leaf("server", "authz", "ca");
    let data = tempfile::tempdir().unwrap();
    let (running, uri) = authz_over_tls(data.path(), pki.server_tls(false)).await;

    // A client trusting the CA is served; plaintext and an untrusting client are not.
    assert_eq!(
        health(&uri, &pki.peer("ca", false)).await,
        Ok(ServingStatus::Serving)
    );
    let plaintext = uri.replace("https://", "http://");
    assert!(health(&plaintext, &PeerTls::default()).await.is_err());
    assert!(health(&uri, &pki.peer("rogue-ca", false)).await.is_err());

    // Verification keys come over TLS; a non-loopback plaintext endpoint is refused before
    // any connection is made.
    let verifier = codectx_runtime::load_verifier(&TenantConfig {
        authz_endpoint: uri.clone(),
        authz_tls: pki.peer("ca", false),
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(verifier.key_ids().len(), 1);
    let refused = codectx_runtime::load_verifier(&TenantConfig {
        authz_endpoint: "http://authz.invalid:50051".into(),
        ..Default::default()
    })
    .await
    .unwrap_err();
    assert_eq!(refused.field(), "tenant.authz_tls", "{refused}");

    // cert-manager rotates the certificate: new handshakes get the new one, no restart.
    let address = uri.trim_start_matches("https://").to_owned();
    let before = presented_certificate(&address, &pki.path("ca.crt")).await;
    assert_eq!(before, leaf_der(&pki, "server"));
    pki.leaf("server", "authz-rotated", "ca");
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let after = presented_certificate(&address, &pki.path("ca.crt")).await;
    assert_ne!(after, before);
    assert_eq!(after, leaf_der(&pki, "server"));
    assert_eq!(
        health(&uri, &pki.peer("ca", false)).await,
        Ok(ServingStatus::Serving)
    );

    // A broken file during a rotation keeps the last good certificate in service.
    std::fs::write(pki.path("server.crt"), "not a certificate").unwrap();
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(
        presented_certificate(&address, &pki.path("ca.crt")).await,
        after
    );
    running.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_refuses_callers_without_a_certificate() {
    let pki = Pki::new();
    pki.leaf("server", "authz", "ca");
    pki.leaf("client", "graph-hydrator", "ca");
    let data = tempfile::tempdir().unwrap();
    let (running, uri) = authz_over_tls(data.path(), pki.server_tls(true)).await;
    assert!(health(&uri, &pki.peer("ca", false)).await.is_err());
    assert_eq!(
        health(&uri, &pki.peer("ca", true)).await,
        Ok(ServingStatus::Serving)
    );
    running.stop().await.unwrap();
}
