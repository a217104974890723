//! Secure serving, delegated authentication and delegated authorization flags, named and
//! defaulted as kube-controller-manager's (apiserver's `SecureServingOptions`,
//! `DelegatingAuthenticationOptions`, `DelegatingAuthorizationOptions`).

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::pflag::parse_bool;
use kcm_util::go_duration::parse_go_duration;

/// How `/metrics` and the health endpoints are served and who may read them.
#[derive(Debug, Clone, Args)]
pub struct ServingOptions {
    /// The IP address on which to listen for the --secure-port port. The associated interface(s)
    /// must be reachable by the rest of the cluster, and by CLI/web clients. If blank or an
    /// unspecified address (0.0.0.0 or ::), all interfaces and IP address families will be used.
    #[arg(
        long,
        help_heading = "Secure serving flags",
        value_name = "ip",
        default_value = "0.0.0.0"
    )]
    pub bind_address: IpAddr,

    /// The port on which to serve HTTPS with authentication and authorization. If 0, don't
    /// serve HTTPS at all.
    #[arg(
        long,
        help_heading = "Secure serving flags",
        value_name = "int",
        default_value_t = 10257
    )]
    pub secure_port: u16,

    /// The directory where the TLS certs are located. If --tls-cert-file and
    /// --tls-private-key-file are provided, this flag will be ignored. Without either, a
    /// self-signed certificate is generated in memory.
    #[arg(long, help_heading = "Secure serving flags", value_name = "string")]
    pub cert_dir: Option<PathBuf>,

    /// File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated
    /// after server cert).
    #[arg(long, help_heading = "Secure serving flags", value_name = "string")]
    pub tls_cert_file: Option<PathBuf>,

    /// File containing the default x509 private key matching --tls-cert-file.
    #[arg(long, help_heading = "Secure serving flags", value_name = "string")]
    pub tls_private_key_file: Option<PathBuf>,

    /// Minimum TLS version supported. Possible values: VersionTLS12, VersionTLS13 (rustls has no
    /// TLS 1.0/1.1; VersionTLS10 and VersionTLS11 are accepted and mean TLS 1.2).
    #[arg(long, help_heading = "Secure serving flags", value_name = "string")]
    pub tls_min_version: Option<String>,

    /// Comma-separated list of cipher suites for the server, by their IANA names. If omitted,
    /// the default rustls cipher suites will be used.
    #[arg(
        long,
        help_heading = "Secure serving flags",
        value_name = "strings",
        value_delimiter = ','
    )]
    pub tls_cipher_suites: Vec<String>,

    /// kubeconfig file pointing at the 'core' kubernetes server with enough rights to create
    /// tokenreviews.authentication.k8s.io. Without it, the main client (--kubeconfig) is used.
    #[arg(long, help_heading = "Authentication flags", value_name = "string")]
    pub authentication_kubeconfig: Option<PathBuf>,

    /// If false, the authentication-kubeconfig will be used to lookup missing authentication
    /// configuration from the cluster.
    #[arg(long, help_heading = "Authentication flags", value_name = "bool", default_value = "false", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub authentication_skip_lookup: bool,

    /// The duration to cache responses from the webhook token authenticator.
    #[arg(long, help_heading = "Authentication flags", value_name = "duration", default_value = "10s", value_parser = parse_go_duration)]
    pub authentication_token_webhook_cache_ttl: Duration,

    /// If true, failures to look up missing authentication configuration from the cluster are
    /// not considered fatal. Note that this can result in authentication that treats all
    /// requests as anonymous.
    #[arg(long, help_heading = "Authentication flags", value_name = "bool", default_value = "false", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub authentication_tolerate_lookup_failure: bool,

    /// If set, any request presenting a client certificate signed by one of the authorities in
    /// the client-ca-file is authenticated with an identity corresponding to the CommonName of
    /// the client certificate.
    #[arg(long, help_heading = "Authentication flags", value_name = "string")]
    pub client_ca_file: Option<PathBuf>,

    /// List of client certificate common names to allow to provide usernames in headers
    /// specified by --requestheader-username-headers. If empty, any client certificate validated
    /// by the authorities in --requestheader-client-ca-file is allowed.
    #[arg(
        long,
        help_heading = "Authentication flags",
        value_name = "strings",
        value_delimiter = ','
    )]
    pub requestheader_allowed_names: Vec<String>,

    /// Root certificate bundle to use to verify client certificates on incoming requests before
    /// trusting usernames in headers specified by --requestheader-username-headers.
    #[arg(long, help_heading = "Authentication flags", value_name = "string")]
    pub requestheader_client_ca_file: Option<PathBuf>,

    /// List of request header prefixes to inspect. X-Remote-Extra- is suggested.
    #[arg(
        long,
        help_heading = "Authentication flags",
        value_name = "strings",
        value_delimiter = ',',
        default_value = "x-remote-extra-"
    )]
    pub requestheader_extra_headers_prefix: Vec<String>,

    /// List of request headers to inspect for groups. X-Remote-Group is suggested.
    #[arg(
        long,
        help_heading = "Authentication flags",
        value_name = "strings",
        value_delimiter = ',',
        default_value = "x-remote-group"
    )]
    pub requestheader_group_headers: Vec<String>,

    /// List of request headers to inspect for UIDs. X-Remote-Uid is suggested.
    #[arg(
        long,
        help_heading = "Authentication flags",
        value_name = "strings",
        value_delimiter = ','
    )]
    pub requestheader_uid_headers: Vec<String>,

    /// List of request headers to inspect for usernames. X-Remote-User is common.
    #[arg(
        long,
        help_heading = "Authentication flags",
        value_name = "strings",
        value_delimiter = ',',
        default_value = "x-remote-user"
    )]
    pub requestheader_username_headers: Vec<String>,

    /// A list of HTTP paths to skip during authorization, i.e. these are authorized without
    /// contacting the 'core' kubernetes server.
    #[arg(
        long,
        help_heading = "Authorization flags",
        value_name = "strings",
        value_delimiter = ',',
        default_value = "/healthz,/readyz,/livez"
    )]
    pub authorization_always_allow_paths: Vec<String>,

    /// kubeconfig file pointing at the 'core' kubernetes server with enough rights to create
    /// subjectaccessreviews.authorization.k8s.io. Without it, the main client is used.
    #[arg(long, help_heading = "Authorization flags", value_name = "string")]
    pub authorization_kubeconfig: Option<PathBuf>,

    /// The duration to cache 'authorized' responses from the webhook authorizer.
    #[arg(long, help_heading = "Authorization flags", value_name = "duration", default_value = "10s", value_parser = parse_go_duration)]
    pub authorization_webhook_cache_authorized_ttl: Duration,

    /// The duration to cache 'unauthorized' responses from the webhook authorizer.
    #[arg(long, help_heading = "Authorization flags", value_name = "duration", default_value = "10s", value_parser = parse_go_duration)]
    pub authorization_webhook_cache_unauthorized_ttl: Duration,
}
