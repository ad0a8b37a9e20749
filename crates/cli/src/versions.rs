//! `docket versions list|prune`: the state machine and Lambda versions that deploys left behind.
//!
//! A deploy publishes new versions and keeps the old ones for the executions that started on them
//! (a review can wait days). `prune` deletes what no execution can reach any more, by the rules of
//! `docket_core::deploys::prune`: machine versions neither live nor running, and the Lambda
//! versions that no kept machine version names. Run it when no deploy is in progress.

use std::collections::BTreeSet;

use anyhow::Context;
use aws_sdk_sfn::types::ExecutionStatus;
use docket_core::deploys::{invoked_versions, prune, MachineVersion, Pruning, REDRIVE_DAYS};
use serde_json::json;

use crate::stack::{print, Stack};
use crate::Output;

#[derive(clap::Subcommand)]
pub enum Command {
    /// List the state machine's versions (live, running) and what prune would delete.
    List,
    /// Delete the versions no execution can reach: machine versions neither live nor running an
    /// execution nor ending one that may be redriven, and the Lambda versions no kept machine
    /// version names.
    Prune {
        /// Print what would be deleted; delete nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

pub async fn run(stack: &Stack, command: Command, output: Output) -> anyhow::Result<()> {
    let sdk = docket_aws::load_config().await;
    let sfn = aws_sdk_sfn::Client::new(&sdk);
    let lambda = aws_sdk_lambda::Client::new(&sdk);
    eprintln!("versions: reading the state machine's versions and their executions");
    let machines = machine_versions(&sfn, stack).await?;
    let functions = function_versions(&lambda, &machines).await?;
    let pruning = prune(&machines, &functions);
    let delete = matches!(command, Command::Prune { dry_run: false });
    if delete {
        for (n, arn) in pruning.machines.iter().enumerate() {
            eprintln!(
                "versions: deleting machine version {} of {}",
                n + 1,
                pruning.machines.len()
            );
            sfn.delete_state_machine_version()
                .state_machine_version_arn(arn)
                .send()
                .await
                .with_context(|| format!("deleting {arn}"))?;
        }
        for (n, arn) in pruning.functions.iter().enumerate() {
            eprintln!(
                "versions: deleting Lambda version {} of {}",
                n + 1,
                pruning.functions.len()
            );
            let (function, version) = arn.rsplit_once(':').context("a qualified ARN")?;
            lambda
                .delete_function()
                .function_name(function)
                .qualifier(version)
                .send()
                .await
                .with_context(|| format!("deleting {arn}"))?;
        }
    }
    let listed: Vec<_> = machines
        .iter()
        .map(|m| {
            json!({"arn": m.arn, "live": m.live, "running": m.running,
                   "redrivable": m.redrivable, "invokes": invoked_versions(&m.definition)})
        })
        .collect();
    let value = json!({"machines": listed, "deleted": delete, "pruning": pruning});
    print(output, &value, || text(&machines, &pruning, delete));
    Ok(())
}

fn text(machines: &[MachineVersion], pruning: &Pruning, deleted: bool) -> String {
    let mut lines: Vec<String> = machines
        .iter()
        .map(|m| {
            let state = match (m.live, m.running, m.redrivable) {
                (true, _, _) => "live",
                (false, true, _) => "running",
                (false, false, true) => "failed",
                (false, false, false) => "idle",
            };
            format!("{state:8} {}", m.arn)
        })
        .collect();
    let verb = if deleted { "deleted" } else { "to delete" };
    lines.push(format!(
        "{verb}: {} machine version(s), {} Lambda version(s); kept: {} and {}",
        pruning.machines.len(),
        pruning.functions.len(),
        pruning.kept_machines.len(),
        pruning.kept_functions.len()
    ));
    lines.extend(
        pruning
            .machines
            .iter()
            .chain(&pruning.functions)
            .map(|a| format!("  {a}")),
    );
    lines.join("\n")
}

/// Every published version of the stack's state machine, with its definition, whether the alias
/// routes to it and whether an execution runs on it.
async fn machine_versions(
    sfn: &aws_sdk_sfn::Client,
    stack: &Stack,
) -> anyhow::Result<Vec<MachineVersion>> {
    let alias = stack.out("StateMachineAliasArn")?;
    let live: BTreeSet<String> = sfn
        .describe_state_machine_alias()
        .state_machine_alias_arn(alias)
        .send()
        .await
        .with_context(|| format!("describing {alias}"))?
        .routing_configuration()
        .iter()
        .filter(|route| route.weight() > 0)
        .map(|route| route.state_machine_version_arn().to_string())
        .collect();
    let machine = stack.out("StateMachineArn")?;
    let (mut arns, mut token) = (Vec::new(), None);
    loop {
        let page = sfn
            .list_state_machine_versions()
            .state_machine_arn(machine)
            .set_next_token(token)
            .send()
            .await
            .context("listing the state machine's versions")?;
        let listed = page.state_machine_versions().iter();
        arns.extend(listed.map(|v| v.state_machine_version_arn().to_string()));
        token = page.next_token().map(String::from);
        if token.is_none() {
            break;
        }
    }
    let mut machines = Vec::with_capacity(arns.len());
    for arn in arns {
        let definition = sfn
            .describe_state_machine()
            .state_machine_arn(&arn)
            .send()
            .await
            .with_context(|| format!("describing {arn}"))?
            .definition()
            .to_string();
        let running = !sfn
            .list_executions()
            .state_machine_arn(&arn)
            .status_filter(ExecutionStatus::Running)
            .max_results(1)
            .send()
            .await
            .with_context(|| format!("listing the executions of {arn}"))?
            .executions()
            .is_empty();
        let redrivable = redrivable(sfn, &arn).await?;
        machines.push(MachineVersion {
            live: live.contains(&arn),
            arn,
            running,
            redrivable,
            definition,
        });
    }
    Ok(machines)
}

/// Whether an execution on the machine version `arn` ended FAILED, TIMED_OUT or ABORTED within
/// the redrive window (every page: such executions are few, and the newest start is not the
/// newest stop).
async fn redrivable(sfn: &aws_sdk_sfn::Client, arn: &str) -> anyhow::Result<bool> {
    let window = time::OffsetDateTime::now_utc().unix_timestamp() - REDRIVE_DAYS * 24 * 3600;
    for status in [
        ExecutionStatus::Failed,
        ExecutionStatus::TimedOut,
        ExecutionStatus::Aborted,
    ] {
        let mut token = None;
        loop {
            let page = sfn
                .list_executions()
                .state_machine_arn(arn)
                .status_filter(status.clone())
                .set_next_token(token)
                .send()
                .await
                .with_context(|| format!("listing the {status:?} executions of {arn}"))?;
            let recent = page
                .executions()
                .iter()
                .any(|e| e.stop_date().is_none_or(|stop| stop.secs() >= window));
            if recent {
                return Ok(true);
            }
            token = page.next_token().map(String::from);
            if token.is_none() {
                break;
            }
        }
    }
    Ok(false)
}

/// Every published version (qualified ARN) of the functions the machine versions name.
async fn function_versions(
    lambda: &aws_sdk_lambda::Client,
    machines: &[MachineVersion],
) -> anyhow::Result<Vec<String>> {
    let functions: BTreeSet<String> = machines
        .iter()
        .flat_map(|m| invoked_versions(&m.definition))
        .filter_map(|arn| arn.rsplit_once(':').map(|(f, _)| f.to_string()))
        .collect();
    let mut versions = Vec::new();
    for function in functions {
        let mut pages = lambda
            .list_versions_by_function()
            .function_name(&function)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.with_context(|| format!("listing the versions of {function}"))?;
            versions.extend(
                page.versions()
                    .iter()
                    .filter_map(|v| v.function_arn().map(String::from)),
            );
        }
    }
    Ok(versions)
}
