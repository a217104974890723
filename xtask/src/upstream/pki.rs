//! The keys and certificates of a loopback control plane, generated fresh for every start: a CA,
//! kube-apiserver's serving certificate, client certificates for the admin (`system:masters`) and
//! for kube-controller-manager (`system:kube-controller-manager`, which upstream's bootstrap RBAC
//! binds), and the ServiceAccount token signing key.

use std::path::{Path, PathBuf};

use anyhow::Context;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};

/// PEM files written by [`Pki::generate`].
#[derive(Debug, Clone)]
pub struct Pki {
    /// The CA certificate (clients trust it; kube-apiserver's `--client-ca-file`).
    pub ca_cert: PathBuf,
    /// The CA key (kube-controller-manager signs CSRs with it).
    pub ca_key: PathBuf,
    /// kube-apiserver's serving certificate and key (`localhost`, `127.0.0.1`, in-cluster names).
    pub serving_cert: PathBuf,
    /// See `serving_cert`.
    pub serving_key: PathBuf,
    /// The ServiceAccount token signing key (PKCS#8, ECDSA P-256).
    pub service_account_key: PathBuf,
    /// Its public key (kube-apiserver's `--service-account-key-file`).
    pub service_account_pub: PathBuf,
    /// Client certificate of the admin user `kcm-rs:admin` in group `system:masters`.
    pub admin: ClientCert,
    /// Client certificate of `system:kube-controller-manager`.
    pub controller_manager: ClientCert,
    /// kube-apiserver's front-proxy client certificate (`front-proxy-client`, signed by the same
    /// CA, which is also the request-header CA), as kubeadm sets up for aggregated servers and
    /// delegated authentication.
    pub front_proxy_cert: PathBuf,
    /// See `front_proxy_cert`.
    pub front_proxy_key: PathBuf,
}

/// A client certificate and its key, in PEM.
#[derive(Debug, Clone)]
pub struct ClientCert {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// The private key, PEM.
    pub key_pem: String,
}

impl Pki {
    /// Generates everything into `dir` (created if needed; key files mode 0600).
    pub fn generate(dir: &Path) -> anyhow::Result<Pki> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let ca_key = KeyPair::generate().context("generating the CA key")?;
        let mut ca_params = CertificateParams::default();
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "kcm-rs loopback CA");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key_pem = ca_key.serialize_pem();
        let ca = CertifiedIssuer::self_signed(ca_params, ca_key).context("signing the CA")?;

        let serving_key = KeyPair::generate().context("generating the serving key")?;
        let mut serving = CertificateParams::new(vec![
            "localhost".to_string(),
            "kubernetes".to_string(),
            "kubernetes.default".to_string(),
            "kubernetes.default.svc".to_string(),
            "kubernetes.default.svc.cluster.local".to_string(),
        ])
        .context("serving certificate names")?;
        serving
            .subject_alt_names
            .push(SanType::IpAddress([127, 0, 0, 1].into()));
        serving
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        serving.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        serving.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        let serving_cert = serving
            .signed_by(&serving_key, &ca)
            .context("signing the serving certificate")?;

        let admin = client_cert(&ca, "kcm-rs:admin", Some("system:masters"))?;
        let controller_manager = client_cert(&ca, "system:kube-controller-manager", None)?;
        let front_proxy = client_cert(&ca, "front-proxy-client", None)?;
        let sa_key = KeyPair::generate().context("generating the ServiceAccount key")?;

        let pki = Pki {
            ca_cert: dir.join("ca.crt"),
            ca_key: dir.join("ca.key"),
            serving_cert: dir.join("apiserver.crt"),
            serving_key: dir.join("apiserver.key"),
            service_account_key: dir.join("sa.key"),
            service_account_pub: dir.join("sa.pub"),
            admin,
            controller_manager,
            front_proxy_cert: dir.join("front-proxy-client.crt"),
            front_proxy_key: dir.join("front-proxy-client.key"),
        };
        write(&pki.front_proxy_cert, &front_proxy.cert_pem, false)?;
        write(&pki.front_proxy_key, &front_proxy.key_pem, true)?;
        write(&pki.ca_cert, &ca.pem(), false)?;
        write(&pki.ca_key, &ca_key_pem, true)?;
        write(&pki.serving_cert, &serving_cert.pem(), false)?;
        write(&pki.serving_key, &serving_key.serialize_pem(), true)?;
        write(&pki.service_account_key, &sa_key.serialize_pem(), true)?;
        write(&pki.service_account_pub, &sa_key.public_key_pem(), false)?;
        Ok(pki)
    }
}

fn client_cert(
    ca: &CertifiedIssuer<'_, KeyPair>,
    user: &str,
    group: Option<&str>,
) -> anyhow::Result<ClientCert> {
    let key = KeyPair::generate().context("generating a client key")?;
    let mut params = CertificateParams::default();
    params.distinguished_name.push(DnType::CommonName, user);
    if let Some(group) = group {
        params
            .distinguished_name
            .push(DnType::OrganizationName, group);
    }
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let cert = params
        .signed_by(&key, ca)
        .with_context(|| format!("signing the client certificate of {user}"))?;
    Ok(ClientCert {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

fn write(path: &Path, contents: &str, private: bool) -> anyhow::Result<()> {
    if private {
        crate::cluster::write_private(path, contents)
    } else {
        std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
    }
}
