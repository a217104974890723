//! `cargo xtask ci`: what CI runs, in the order that fails fastest.

use crate::run_cmd;

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    if let Some(extra) = args.first() {
        anyhow::bail!("`cargo xtask ci` takes no arguments (got `{extra}`)");
    }
    run_cmd("cargo", &["fmt", "--all", "--", "--check"])?;
    run_cmd(
        "cargo",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    run_cmd("cargo", &["test", "--workspace", "--locked"])?;
    eprintln!("xtask: ci passed");
    Ok(())
}
