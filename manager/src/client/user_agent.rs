//! The User-Agent of kcm's API clients, built as client-go's `DefaultKubernetesUserAgent` with
//! the client's name appended (`rest.AddUserAgent`), so audit logs and managedFields name the
//! controller: `kcm/v0.1.0 (linux/amd64) kubernetes/1a2b3c4/deployment-controller`.

/// The commit kcm was built from: `KCM_GIT_COMMIT` at build time (the container build passes
/// it), else `unknown`, shortened to 7 characters as client-go does.
fn commit() -> &'static str {
    match option_env!("KCM_GIT_COMMIT") {
        Some(c) if !c.is_empty() => c.get(..7).unwrap_or(c),
        _ => "unknown",
    }
}

/// Go's name for the CPU architecture (`GOARCH`), as the User-Agent carries it.
fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64le",
        other => other,
    }
}

/// The program name: the file name of the command that started kcm, as client-go takes
/// `os.Args[0]`.
fn program() -> String {
    std::env::args_os()
        .next()
        .and_then(|arg0| {
            std::path::Path::new(&arg0)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "kcm".to_string())
}

/// `<program>/v<version> (<os>/<arch>) kubernetes/<commit>`, like client-go's default.
pub fn default_user_agent() -> String {
    format_user_agent(
        &program(),
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        go_arch(),
        commit(),
    )
}

/// The default User-Agent with `/<client>` appended, as `rest.AddUserAgent`.
pub fn user_agent(client: &str) -> String {
    format!("{}/{client}", default_user_agent())
}

fn format_user_agent(program: &str, version: &str, os: &str, arch: &str, commit: &str) -> String {
    // client-go keeps the version up to the first '-' (no pre-release or build suffix).
    let version = version.split('-').next().unwrap_or(version);
    let version = version.strip_prefix('v').unwrap_or(version);
    format!("{program}/v{version} ({os}/{arch}) kubernetes/{commit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_agent_has_client_gos_shape() {
        let cases = [
            (
                ("kcm", "0.1.0", "linux", "amd64", "unknown"),
                "kcm/v0.1.0 (linux/amd64) kubernetes/unknown",
            ),
            (
                ("kcm", "1.2.3-rc.1", "linux", "arm64", "1a2b3c4"),
                "kcm/v1.2.3 (linux/arm64) kubernetes/1a2b3c4",
            ),
        ];
        for ((p, v, os, arch, c), want) in cases {
            assert_eq!(format_user_agent(p, v, os, arch, c), want);
        }
        let ua = user_agent("deployment-controller");
        assert!(
            ua.ends_with(") kubernetes/unknown/deployment-controller"),
            "{ua}"
        );
        assert!(
            ua.contains(&format!("/v{} (", env!("CARGO_PKG_VERSION"))),
            "{ua}"
        );
    }
}
