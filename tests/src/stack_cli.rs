//! The `deltaload` command run against a LocalStack [`Stack`]: its AWS
//! settings, and the arguments of `serve --once`.

use crate::localstack::{Stack, REGION};
use std::process::{Command, Output};

impl Stack {
    /// Runs the `deltaload` binary at `exe` with the AWS settings of this stack.
    pub fn cli(&self, exe: &str, args: &[impl AsRef<std::ffi::OsStr>]) -> Output {
        self.command(exe, args).output().expect("run deltaload")
    }

    /// Like [`Stack::cli`], with `DELTALOAD_FAULT` set to `fault`.
    pub fn cli_fault(
        &self,
        exe: &str,
        args: &[impl AsRef<std::ffi::OsStr>],
        fault: &str,
    ) -> Output {
        self.command(exe, args)
            .env("DELTALOAD_FAULT", fault)
            .output()
            .expect("run deltaload")
    }

    /// Like [`Stack::cli_fault`], started in the background with its output
    /// piped (collect it with `wait_with_output`).
    pub fn spawn_fault(
        &self,
        exe: &str,
        args: &[impl AsRef<std::ffi::OsStr>],
        fault: &str,
    ) -> std::process::Child {
        self.command(exe, args)
            .env("DELTALOAD_FAULT", fault)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start deltaload")
    }

    /// The arguments of `serve --once` over the stack's queue into `lake`,
    /// waiting `wait` seconds for a first message, then `extra`.
    pub fn serve_args(&self, lake: &str, wait: &str, extra: &[&str]) -> Vec<String> {
        let once = [
            "--queue",
            &self.queue_url,
            "--lake",
            lake,
            "--wait",
            wait,
            "--once",
        ];
        std::iter::once("serve")
            .chain(once)
            .chain(extra.iter().copied())
            .map(str::to_string)
            .collect()
    }

    /// Like [`Stack::cli`], with more environment variables.
    pub fn cli_env(
        &self,
        exe: &str,
        args: &[impl AsRef<std::ffi::OsStr>],
        vars: &[(&str, &str)],
    ) -> Output {
        let mut cmd = self.command(exe, args);
        cmd.envs(vars.iter().copied());
        cmd.output().expect("run deltaload")
    }

    /// The command with this stack's AWS settings: S3 and SQS on LocalStack,
    /// Glue on the suite's Glue API.
    fn command(&self, exe: &str, args: &[impl AsRef<std::ffi::OsStr>]) -> Command {
        let mut cmd = Command::new(exe);
        cmd.args(args)
            .env_remove("DELTALOAD_LAKE")
            .env_remove("DELTALOAD_SOURCES")
            .env_remove("DELTALOAD_SPEC")
            .env_remove("DELTALOAD_DATASET")
            .env_remove("DELTALOAD_METRICS_NAMESPACE")
            .env_remove("DELTALOAD_GLUE_DATABASE")
            .env("AWS_ENDPOINT_URL_GLUE", crate::glue::glue_endpoint())
            .env_remove("AWS_ALLOW_HTTP")
            .env("AWS_ENDPOINT_URL", &self.endpoint)
            .env("AWS_REGION", REGION)
            .env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", "test");
        cmd
    }
}
