//! The HTTPS server's TLS configuration (rustls): the serving certificate from
//! `--tls-cert-file`/`--tls-private-key-file`, else `--cert-dir` (`kcm.crt`/`kcm.key`, written
//! there on first start), else a self-signed one generated in memory, as kube-controller-manager
//! does; `--tls-min-version`, `--tls-cipher-suites`; client certificates are asked for (never
//! required) when `--client-ca-file` or `--requestheader-client-ca-file` is set.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerifier;

use super::authn::ClientCert;
use crate::options::ServingOptions;

/// The file names under `--cert-dir` (upstream: `<PairName>.crt`, `.key`).
const PAIR_NAME: &str = "kcm";

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A certificate or key file could not be read or parsed.
    #[error("{path}")]
    File {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Only one of `--tls-cert-file` and `--tls-private-key-file` was given.
    #[error("--tls-cert-file and --tls-private-key-file must be given together")]
    HalfPair,
    /// The self-signed certificate could not be generated.
    #[error("generating a self-signed certificate")]
    Generate(#[source] rcgen::Error),
    /// `--tls-min-version` is not a TLS version name.
    #[error("unknown --tls-min-version {0:?} (VersionTLS12, VersionTLS13)")]
    MinVersion(String),
    /// `--tls-cipher-suites` names no suite rustls supports.
    #[error("--tls-cipher-suites names no cipher suite kcm supports: {0}")]
    CipherSuites(String),
    /// rustls refused the configuration.
    #[error("TLS configuration")]
    Rustls(#[source] rustls::Error),
    /// A client CA verifier could not be built.
    #[error("client CA {0}")]
    Verifier(String),
}

fn file_error(
    path: &Path,
    source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> TlsError {
    TlsError::File {
        path: path.to_path_buf(),
        source: source.into(),
    }
}

/// The client CAs' certificates: from the flags' files, or from the in-cluster lookup.
#[derive(Clone, Debug, Default)]
pub struct ClientCas {
    /// `--requestheader-client-ca-file`
    pub request_header: Option<Vec<CertificateDer<'static>>>,
    /// `--client-ca-file`
    pub client_ca: Option<Vec<CertificateDer<'static>>>,
}

impl ClientCas {
    /// The CAs of the files the flags name.
    pub fn from_files(options: &ServingOptions) -> Result<Self, TlsError> {
        let load = |p: &Option<PathBuf>| p.as_deref().map(load_certs).transpose();
        Ok(ClientCas {
            request_header: load(&options.requestheader_client_ca_file)?,
            client_ca: load(&options.client_ca_file)?,
        })
    }
}

/// Certificates of PEM text (`what` names it in errors).
pub fn parse_certs(pem: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file_error(Path::new(what), e))?;
    if certs.is_empty() {
        return Err(file_error(Path::new(what), "no certificate"));
    }
    Ok(certs)
}

/// Certificates of a PEM file.
pub fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| file_error(path, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file_error(path, e))?;
    if certs.is_empty() {
        return Err(file_error(path, "no certificate in the file"));
    }
    Ok(certs)
}

fn roots(certs: &[CertificateDer<'static>]) -> Result<Arc<RootCertStore>, TlsError> {
    let mut store = RootCertStore::empty();
    for cert in certs {
        store
            .add(cert.clone())
            .map_err(|e| TlsError::Verifier(e.to_string()))?;
    }
    Ok(Arc::new(store))
}

/// The serving certificate chain and key (see the module documentation).
fn serving_pair(
    options: &ServingOptions,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), TlsError> {
    let from_files = |cert: &Path, key: &Path| {
        let certs = load_certs(cert)?;
        let key = PrivateKeyDer::from_pem_file(key).map_err(|e| file_error(key, e))?;
        Ok((certs, key))
    };
    match (&options.tls_cert_file, &options.tls_private_key_file) {
        (Some(cert), Some(key)) => return from_files(cert, key),
        (None, None) => {}
        _ => return Err(TlsError::HalfPair),
    }
    let generated = self_signed()?;
    let Some(dir) = &options.cert_dir else {
        return Ok((vec![generated.0], generated.1));
    };
    let (cert, key) = (
        dir.join(format!("{PAIR_NAME}.crt")),
        dir.join(format!("{PAIR_NAME}.key")),
    );
    if cert.exists() && key.exists() {
        return from_files(&cert, &key);
    }
    std::fs::create_dir_all(dir).map_err(|e| file_error(dir, e))?;
    std::fs::write(&cert, generated.2.as_bytes()).map_err(|e| file_error(&cert, e))?;
    std::fs::write(&key, generated.3.as_bytes()).map_err(|e| file_error(&key, e))?;
    tracing::info!(cert = %cert.display(), key = %key.display(), "wrote a self-signed serving certificate");
    Ok((vec![generated.0], generated.1))
}

/// A self-signed certificate for `localhost`, `127.0.0.1` and this host's name: DER and PEM.
fn self_signed() -> Result<
    (
        CertificateDer<'static>,
        PrivateKeyDer<'static>,
        String,
        String,
    ),
    TlsError,
> {
    let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        let host = host.trim();
        if !host.is_empty() {
            names.push(host.to_string());
        }
    }
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(names).map_err(TlsError::Generate)?;
    let key = PrivateKeyDer::try_from(signing_key.serialize_der())
        .map_err(|e| TlsError::Verifier(e.to_string()))?;
    Ok((
        cert.der().clone(),
        key,
        cert.pem(),
        signing_key.serialize_pem(),
    ))
}

/// The protocol versions allowed by `--tls-min-version` (Go's names; rustls has no TLS 1.0
/// or 1.1, so those mean 1.2).
pub fn protocol_versions(
    min: Option<&str>,
) -> Result<Vec<&'static rustls::SupportedProtocolVersion>, TlsError> {
    match min {
        None | Some("") | Some("VersionTLS10") | Some("VersionTLS11") | Some("VersionTLS12") => {
            Ok(vec![&rustls::version::TLS13, &rustls::version::TLS12])
        }
        Some("VersionTLS13") => Ok(vec![&rustls::version::TLS13]),
        Some(other) => Err(TlsError::MinVersion(other.to_string())),
    }
}

/// The IANA name of a rustls suite (rustls spells TLS 1.3 suites `TLS13_...`).
fn iana_name(suite: &rustls::SupportedCipherSuite) -> String {
    let name = format!("{:?}", suite.suite());
    match name.strip_prefix("TLS13_") {
        Some(rest) => format!("TLS_{rest}"),
        None => name,
    }
}

/// The ring provider limited to `names` for TLS 1.2 (TLS 1.3 suites always stay, as in Go);
/// names rustls does not implement are skipped with a warning.
pub fn provider(names: &[String]) -> Result<CryptoProvider, TlsError> {
    let mut provider = rustls::crypto::ring::default_provider();
    if names.is_empty() {
        return Ok(provider);
    }
    let known: Vec<String> = provider.cipher_suites.iter().map(iana_name).collect();
    let unknown: Vec<&String> = names.iter().filter(|n| !known.contains(n)).collect();
    if !unknown.is_empty() {
        tracing::warn!(suites = ?unknown, "ignoring cipher suites rustls does not implement");
    }
    provider.cipher_suites.retain(|suite| {
        matches!(suite, rustls::SupportedCipherSuite::Tls13(_)) || names.contains(&iana_name(suite))
    });
    if !provider
        .cipher_suites
        .iter()
        .any(|s| matches!(s, rustls::SupportedCipherSuite::Tls12(_)))
    {
        return Err(TlsError::CipherSuites(names.join(",")));
    }
    Ok(provider)
}

/// The TLS configuration and what tells client certificates apart.
#[derive(Debug)]
pub struct Tls {
    /// For the acceptor.
    pub config: Arc<rustls::ServerConfig>,
    /// Classifies a connection's client certificate.
    pub clients: ClientCerts,
}

/// Verifiers of the two client CAs, to tell which one signed a connection's certificate.
#[derive(Debug, Clone, Default)]
pub struct ClientCerts {
    request_header: Option<Arc<dyn ClientCertVerifier>>,
    client_ca: Option<Arc<dyn ClientCertVerifier>>,
}

impl ClientCerts {
    /// Which CA signed `chain` (leaf first), and the names in the leaf; `None` if neither.
    pub fn classify(&self, chain: &[CertificateDer<'static>]) -> Option<ClientCert> {
        let (leaf, intermediates) = chain.split_first()?;
        let verified = |v: &Option<Arc<dyn ClientCertVerifier>>| {
            v.as_ref().is_some_and(|v| {
                v.verify_client_cert(leaf, intermediates, UnixTime::now())
                    .is_ok()
            })
        };
        let (_, parsed) = x509_parser::parse_x509_certificate(leaf.as_ref()).ok()?;
        let subject = parsed.subject();
        let common_name = subject
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .unwrap_or_default()
            .to_string();
        if verified(&self.request_header) {
            return Some(ClientCert::RequestHeader(common_name));
        }
        if verified(&self.client_ca) {
            let organizations = subject
                .iter_organization()
                .filter_map(|o| o.as_str().ok().map(str::to_string))
                .collect();
            return Some(ClientCert::ClientCa {
                common_name,
                organizations,
            });
        }
        None
    }
}

/// Builds the TLS configuration from the serving flags and the client CAs.
pub fn build(options: &ServingOptions, cas: &ClientCas) -> Result<Tls, TlsError> {
    let provider = Arc::new(provider(&options.tls_cipher_suites)?);
    let versions = protocol_versions(options.tls_min_version.as_deref())?;
    let verifier = |certs: &Option<Vec<CertificateDer<'static>>>| -> Result<_, TlsError> {
        let Some(certs) = certs else { return Ok(None) };
        let verifier = WebPkiClientVerifier::builder_with_provider(roots(certs)?, provider.clone())
            .build()
            .map_err(|e| TlsError::Verifier(e.to_string()))?;
        Ok(Some(verifier))
    };
    let clients = ClientCerts {
        request_header: verifier(&cas.request_header)?,
        client_ca: verifier(&cas.client_ca)?,
    };
    let all: Vec<CertificateDer<'static>> = [&cas.request_header, &cas.client_ca]
        .into_iter()
        .flatten()
        .flatten()
        .cloned()
        .collect();
    let all = roots(&all)?;
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(TlsError::Rustls)?;
    let builder = if all.is_empty() {
        builder.with_no_client_auth()
    } else {
        let any = WebPkiClientVerifier::builder_with_provider(all, provider)
            .allow_unauthenticated()
            .build()
            .map_err(|e| TlsError::Verifier(e.to_string()))?;
        builder.with_client_cert_verifier(any)
    };
    let (certs, key) = serving_pair(options)?;
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(TlsError::Rustls)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Tls {
        config: Arc::new(config),
        clients,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_versions_use_gos_names() {
        assert_eq!(protocol_versions(None).expect("default").len(), 2);
        assert_eq!(
            protocol_versions(Some("VersionTLS10")).expect("1.0").len(),
            2
        );
        assert_eq!(
            protocol_versions(Some("VersionTLS13")).expect("1.3").len(),
            1
        );
        assert!(protocol_versions(Some("TLS13")).is_err());
    }

    #[test]
    fn cipher_suites_use_iana_names() {
        let all = provider(&[]).expect("default");
        let names: Vec<String> = all.cipher_suites.iter().map(iana_name).collect();
        assert!(
            names.contains(&"TLS_AES_128_GCM_SHA256".to_string()),
            "{names:?}"
        );
        assert!(names.contains(&"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".to_string()));
        let one = provider(&[
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".to_string(),
            "TLS_RSA_WITH_AES_128_CBC_SHA".to_string(),
        ])
        .expect("one usable suite");
        let tls12: Vec<String> = one
            .cipher_suites
            .iter()
            .filter(|s| matches!(s, rustls::SupportedCipherSuite::Tls12(_)))
            .map(iana_name)
            .collect();
        assert_eq!(tls12, ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]);
        assert!(provider(&["TLS_RSA_WITH_AES_128_CBC_SHA".to_string()]).is_err());
    }

    #[test]
    fn a_self_signed_configuration_builds() {
        let options = crate::options::parse(&["kcm"]).expect("flags");
        let tls = build(&options.serving, &ClientCas::default()).expect("tls");
        assert_eq!(tls.config.alpn_protocols.len(), 2);
    }

    #[test]
    fn cert_dir_keeps_the_generated_pair_across_starts() {
        let dir = std::env::temp_dir().join(format!("kcm-cert-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let dir_arg = format!("--cert-dir={}", dir.display());
        let options = crate::options::parse(&["kcm", dir_arg.as_str()]).expect("flags");
        let (first, _) = serving_pair(&options.serving).expect("generated");
        assert!(dir.join("kcm.crt").exists() && dir.join("kcm.key").exists());
        let (second, _) = serving_pair(&options.serving).expect("loaded");
        assert_eq!(first, second, "the second start reads the files");
        let half = crate::options::parse(&["kcm", "--tls-cert-file=/x"]).expect("flags");
        assert!(matches!(
            serving_pair(&half.serving),
            Err(TlsError::HalfPair)
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
