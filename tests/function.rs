//! The test function (`tests/testfn`, package `docket-testfn`), built once per test binary and
//! deployed to the local Lambda as a fresh copy per test.

use std::io::Write;
use std::sync::OnceLock;
use std::time::Duration;

use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::{
    Architecture, Environment, FunctionCode, LastUpdateStatus, Runtime, State,
};
use serde_json::Value;

use crate::resource::{Kind, Resource};
use crate::util;

const ROLE: &str = "arn:aws:iam::000000000000:role/lambda-role";

/// The deployment zip of the test function: one executable `bootstrap` (built once).
fn testfn_zip() -> &'static [u8] {
    static ZIP: OnceLock<Vec<u8>> = OnceLock::new();
    ZIP.get_or_init(|| {
        let binary = std::fs::read(util::cargo_build("bootstrap")).expect("read bootstrap");
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .unix_permissions(0o755);
        zip.start_file("bootstrap", options).unwrap();
        zip.write_all(&binary).unwrap();
        zip.finish().unwrap().into_inner()
    })
}

/// The architecture of this machine, which the local executor runs the bootstrap on.
fn host_architecture() -> Architecture {
    match std::env::consts::ARCH {
        "aarch64" => Architecture::Arm64,
        _ => Architecture::X8664,
    }
}

/// A deployed copy of the test function; deleted when dropped.
pub struct Function {
    /// A Lambda client of the function's region.
    pub client: aws_sdk_lambda::Client,
    pub name: String,
    pub arn: String,
    resource: Resource,
}

impl Function {
    /// Deploys the test function (timeout in seconds, extra environment) and waits until Active.
    pub async fn deploy(
        config: &aws_config::SdkConfig,
        timeout: i32,
        env: &[(&str, &str)],
    ) -> Self {
        let client = aws_sdk_lambda::Client::new(config);
        let resource = Resource::new(Kind::Function, config.region(), "testfn").await;
        let name = resource.to_string();
        let mut environment = Environment::builder();
        for (k, v) in env {
            environment = environment.variables(*k, *v);
        }
        let created = client
            .create_function()
            .function_name(&name)
            .runtime(Runtime::Providedal2023)
            .handler("bootstrap")
            .role(ROLE)
            .architectures(host_architecture())
            .timeout(timeout)
            .memory_size(128)
            .environment(environment.build())
            .code(
                FunctionCode::builder()
                    .zip_file(Blob::new(testfn_zip()))
                    .build(),
            )
            .send()
            .await
            .expect("create function");
        let arn = created.function_arn().unwrap().to_string();
        for _ in 0..100 {
            let conf = client
                .get_function_configuration()
                .function_name(&name)
                .send()
                .await
                .expect("get function configuration");
            match conf.state() {
                Some(State::Active) => {
                    return Self {
                        client,
                        name,
                        arn,
                        resource,
                    }
                }
                Some(State::Failed) => panic!("function {name} failed: {:?}", conf.state_reason()),
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
        panic!("function {name} not Active after 10 s");
    }

    /// Replaces the function's environment and waits until the update is in effect (LocalStack
    /// then drops the old execution environments: the next invocations start new ones).
    pub async fn set_env(&self, env: &[(&str, &str)]) {
        let mut environment = Environment::builder();
        for (k, v) in env {
            environment = environment.variables(*k, *v);
        }
        self.client
            .update_function_configuration()
            .function_name(&self.name)
            .environment(environment.build())
            .send()
            .await
            .expect("update function configuration");
        for _ in 0..500 {
            let conf = self
                .client
                .get_function_configuration()
                .function_name(&self.name)
                .send()
                .await
                .expect("get function configuration");
            if conf.last_update_status() == Some(&LastUpdateStatus::Successful) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("function {} not updated after 10 s", self.name);
    }

    /// Synchronous invoke: (payload, FunctionError header).
    pub async fn invoke(&self, input: Value) -> (Value, Option<String>) {
        invoke(self.client.clone(), self.name.clone(), input).await
    }

    /// Deletes the function now (dropping it deletes it too).
    pub async fn delete(self) {
        self.resource.delete().await;
    }
}

/// Synchronous invoke of `name`: (payload, FunctionError header).
pub async fn invoke(
    client: aws_sdk_lambda::Client,
    name: String,
    input: Value,
) -> (Value, Option<String>) {
    let out = client
        .invoke()
        .function_name(name)
        .payload(Blob::new(input.to_string()))
        .send()
        .await
        .expect("invoke");
    let payload = out
        .payload()
        .map(|b| serde_json::from_slice(b.as_ref()).expect("payload is JSON"))
        .unwrap_or(Value::Null);
    (payload, out.function_error().map(str::to_string))
}
