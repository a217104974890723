//! kubectl as the kubectl suites drive it (`kubectl.rs`): a command with the server's
//! kubeconfig, a cache folder and a namespace; manifests written to a scratch folder.

use std::path::PathBuf;

use tokio::process::Command;

/// kubectl on a test server, in a namespace, with its own cache and manifest folder.
pub struct Kubectl {
    kubeconfig: PathBuf,
    cache: PathBuf,
    dir: PathBuf,
    namespace: String,
}

impl Kubectl {
    /// kubectl for `kubeconfig`, in `namespace`.
    pub fn new(kubeconfig: PathBuf, namespace: &str) -> Kubectl {
        let dir = std::env::temp_dir().join(format!("kcm-testenv-kubectl-{namespace}"));
        std::fs::create_dir_all(&dir).expect("tempdir");
        Kubectl {
            kubeconfig,
            cache: dir.join("cache"),
            dir,
            namespace: namespace.to_string(),
        }
    }

    /// A kubectl command with the test's flags.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .arg("--namespace")
            .arg(&self.namespace)
            .args(args);
        c
    }

    /// Run and return stdout; panics with stderr on failure.
    pub async fn ok(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().await.expect("run kubectl");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}\n{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// Writes a manifest and returns its path.
    pub fn file(&self, name: &str, text: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, text).expect("write manifest");
        p.to_string_lossy().into_owned()
    }
}

impl Drop for Kubectl {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
