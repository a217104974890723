//! An error and its causes on one line, each cause once.
//!
//! Many errors (kube's among them) repeat their source in their own message; printing the
//! chain with `{:#}` then says the same cause two or three times. [`display`] skips a cause
//! whose text the message so far already contains.

use std::error::Error;

/// `outer: cause: root cause`, leaving out causes already spelled out by an outer message.
pub fn display(error: &(dyn Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let text = e.to_string();
        if !text.is_empty() && !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = e.source();
    }
    out
}

/// [`display`] for an `anyhow::Error`.
pub fn display_anyhow(error: &anyhow::Error) -> String {
    display(error.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{msg}")]
    struct E {
        msg: &'static str,
        #[source]
        source: Option<Box<E>>,
    }

    fn chain(msgs: &[&'static str]) -> E {
        let mut error: Option<Box<E>> = None;
        for msg in msgs.iter().rev() {
            error = Some(Box::new(E { msg, source: error }));
        }
        *error.expect("at least one")
    }

    #[test]
    fn each_cause_is_said_once() {
        let cases: &[(&[&str], &str)] = &[
            (&["a"], "a"),
            (&["a", "b", "c"], "a: b: c"),
            // kube's kubeconfig error repeats its io::Error; that one is left out.
            (
                &[
                    "--kubeconfig /x",
                    "failed to read kubeconfig from '\"/x\"': No such file (os error 2)",
                    "No such file (os error 2)",
                ],
                "--kubeconfig /x: failed to read kubeconfig from '\"/x\"': No such file (os error 2)",
            ),
        ];
        for (msgs, want) in cases {
            assert_eq!(display(&chain(msgs)), *want);
        }
        let any = anyhow::Error::new(chain(&["x", "y"])).context("starting");
        assert_eq!(display_anyhow(&any), "starting: x: y");
    }
}
