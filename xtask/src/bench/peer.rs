//! Building and running both sides of a comparison: the Rust example binary and client-go's
//! side, `upstream/cmd/peerbench`.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use serde_json::Value;

/// Where the binaries of a comparison are kept for its rounds.
fn bin_dir() -> PathBuf {
    crate::cluster::target_dir().join("bench")
}

/// Builds `upstream/cmd/peerbench` into `target/upstream/peerbench`. Go's build cache makes a
/// rebuild take seconds once client-go was compiled (by `cargo xtask upstream build` or a
/// previous run); the first build compiles client-go for a few minutes.
pub fn build_peer() -> anyhow::Result<PathBuf> {
    let out = crate::cluster::target_dir()
        .join("upstream")
        .join("peerbench");
    let module = crate::upstream::build::module_dir();
    eprintln!(
        "xtask: $ (cd {}; go build -o {} ./cmd/peerbench)",
        module.display(),
        out.display()
    );
    let status = Command::new("go")
        .args(["build", "-o"])
        .arg(&out)
        .arg("./cmd/peerbench")
        .current_dir(&module)
        .status()
        .context("running `go` (client-go's side of the benchmark needs Go 1.26 or newer)")?;
    if !status.success() {
        bail!("building upstream/cmd/peerbench failed ({status})");
    }
    Ok(out)
}

/// Builds example `example` of `package` in release mode and copies it to
/// `target/bench/<name>-<example>`, so every round runs the same binary even if the shared
/// target folder is rebuilt meanwhile.
pub fn build_example(
    name: &str,
    package: &str,
    example: &str,
    extra: &[&str],
) -> anyhow::Result<PathBuf> {
    let mut args = vec![
        "build",
        "--release",
        "--locked",
        "-p",
        package,
        "--example",
        example,
        "--message-format=json-render-diagnostics",
    ];
    args.extend_from_slice(extra);
    eprintln!("xtask: $ cargo {}", args.join(" "));
    let out = Command::new("cargo")
        .args(&args)
        .current_dir(crate::workspace_root())
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo")?;
    if !out.status.success() {
        bail!("building example {example} of {package} failed");
    }
    let built = example_executable(&String::from_utf8_lossy(&out.stdout), example)
        .with_context(|| format!("cargo named no executable for example {example}"))?;
    std::fs::create_dir_all(bin_dir())?;
    let copy = bin_dir().join(format!("{name}-{example}"));
    std::fs::copy(&built, &copy)
        .with_context(|| format!("copying {} to {}", built.display(), copy.display()))?;
    Ok(copy)
}

/// The executable of example `example` in cargo's JSON messages.
fn example_executable(messages: &str, example: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == example)
        .filter(|m| {
            m["target"]["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "example"))
        })
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
}

/// Runs `cmd` (stderr passed through), echoes its stdout as it comes (the informer's run takes
/// minutes) and returns the JSON objects among its lines, each tagged with `round`.
pub fn json_lines(cmd: &mut Command, round: usize) -> anyhow::Result<Vec<Value>> {
    use std::io::BufRead;
    eprintln!("xtask: round {round}: $ {cmd:?}");
    let mut child = cmd
        .current_dir(crate::workspace_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("running {cmd:?}"))?;
    let mut text = String::new();
    if let Some(stdout) = child.stdout.take() {
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line?;
            println!("{line}");
            text.push_str(&line);
            text.push('\n');
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("{cmd:?} failed ({status})");
    }
    let mut lines = parse_json_lines(&text);
    for line in &mut lines {
        if line.get("round").is_none() {
            line["round"] = round.into();
        }
    }
    Ok(lines)
}

/// The JSON objects among `text`'s lines (anything else is ignored).
pub fn parse_json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .filter(Value::is_object)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_json_objects() {
        let text = "building...\n{\"a\": 1}\n[1, 2]\n  {\"b\": \"x\"}  \nnot json {\n";
        let lines = parse_json_lines(text);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["a"], 1);
        assert_eq!(lines[1]["b"], "x");
    }

    #[test]
    fn finds_the_example_among_cargo_messages() {
        let messages = [
            r#"{"reason":"compiler-artifact","target":{"name":"serde","kind":["lib"]},"executable":null}"#,
            r#"{"reason":"compiler-artifact","target":{"name":"bench","kind":["bench"]},"executable":"/t/deps/bench-1"}"#,
            r#"{"reason":"compiler-artifact","target":{"name":"bench","kind":["example"]},"executable":"/t/release/examples/bench"}"#,
            r#"{"reason":"build-finished","success":true}"#,
        ]
        .join("\n");
        assert_eq!(
            example_executable(&messages, "bench"),
            Some(PathBuf::from("/t/release/examples/bench"))
        );
        assert_eq!(example_executable(&messages, "other"), None);
    }
}
