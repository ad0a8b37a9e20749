//! Which published versions a deploy left behind can go.
//!
//! Every deploy that changes a step function publishes a new Lambda version of it, and every deploy
//! that changes the definition (including the versions it names) publishes a new state machine
//! version; the old ones are retained, because executions that started before the deploy finish
//! on the version they started on, and that version invokes the Lambda versions it names. Once no
//! execution runs on an old machine version it can be deleted, and with it every Lambda version
//! that no kept machine version names. `docket versions prune` applies [`prune`].

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// A published state machine version, as the pruner sees it.
#[derive(Clone, Debug)]
pub struct MachineVersion {
    /// Its ARN (`…:stateMachine:NAME:N`).
    pub arn: String,
    /// Whether the alias routes new executions to it.
    pub live: bool,
    /// Whether an execution still runs on it.
    pub running: bool,
    /// Whether an execution on it ended FAILED, TIMED_OUT or ABORTED recently enough to be
    /// redriven ([`REDRIVE_DAYS`]): a redrive resumes on the version it ran on.
    pub redrivable: bool,
    /// Its definition (Amazon States Language, JSON).
    pub definition: String,
}

/// How long after it stopped Step Functions still redrives an execution.
pub const REDRIVE_DAYS: i64 = 14;

/// What to delete, and why the rest stays.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pruning {
    /// Machine versions kept: live, or with a running or redrivable execution.
    pub kept_machines: Vec<String>,
    /// Machine versions to delete.
    pub machines: Vec<String>,
    /// Lambda versions kept: named by a kept machine version, or newer than any it names.
    pub kept_functions: Vec<String>,
    /// Lambda versions (qualified ARNs) to delete.
    pub functions: Vec<String>,
}

/// A qualified Lambda function ARN split into its unqualified ARN and version number.
fn qualified(arn: &str) -> Option<(&str, u64)> {
    let (function, version) = arn.rsplit_once(':')?;
    let parts: Vec<&str> = function.split(':').collect();
    let is_function = parts.len() == 7 && parts[2] == "lambda" && parts[5] == "function";
    let number = version.parse().ok().filter(|_| is_function)?;
    Some((function, number))
}

/// The qualified Lambda ARNs (`…:function:NAME:N`) a definition names anywhere in its strings.
pub fn invoked_versions(definition: &str) -> BTreeSet<String> {
    fn walk(value: &serde_json::Value, found: &mut BTreeSet<String>) {
        match value {
            serde_json::Value::String(s) if qualified(s).is_some() => {
                found.insert(s.clone());
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, found)),
            serde_json::Value::Object(map) => map.values().for_each(|v| walk(v, found)),
            _ => {}
        }
    }
    let mut found = BTreeSet::new();
    if let Ok(value) = serde_json::from_str(definition) {
        walk(&value, &mut found);
    }
    found
}

/// The versions to delete, given every machine version and every published version (qualified
/// ARN) of the functions they name.
///
/// A machine version is kept while it is live or an execution runs on it or may be redriven on it.
/// A Lambda version is
/// kept while a kept machine version names it, and also when it is newer than every version of
/// its function that a kept machine names: a deploy in progress may have published it for a
/// machine version that does not exist yet. A function no kept machine names loses nothing
/// (it is not a step function of this pipeline any more, or not yet).
pub fn prune(machines: &[MachineVersion], function_versions: &[String]) -> Pruning {
    let (kept, gone): (Vec<&MachineVersion>, Vec<&MachineVersion>) = machines
        .iter()
        .partition(|m| m.live || m.running || m.redrivable);
    let named: BTreeSet<String> = kept
        .iter()
        .flat_map(|m| invoked_versions(&m.definition))
        .collect();
    let mut newest: BTreeMap<&str, u64> = BTreeMap::new();
    for (function, number) in named.iter().filter_map(|arn| qualified(arn)) {
        let entry = newest.entry(function).or_default();
        *entry = (*entry).max(number);
    }
    let mut pruning = Pruning {
        kept_machines: kept.iter().map(|m| m.arn.clone()).collect(),
        machines: gone.iter().map(|m| m.arn.clone()).collect(),
        ..Pruning::default()
    };
    for arn in function_versions {
        let Some((function, number)) = qualified(arn) else {
            continue;
        };
        let deletable = newest
            .get(function)
            .is_some_and(|&top| number < top && !named.contains(arn));
        if deletable {
            pruning.functions.push(arn.clone());
        } else {
            pruning.kept_functions.push(arn.clone());
        }
    }
    pruning
}

#[cfg(test)]
mod tests {
    use super::*;

    const FN: &str = "arn:aws:lambda:us-east-1:000000000000:function:docket-local-route";
    const OCR: &str = "arn:aws:lambda:us-east-1:000000000000:function:docket-local-ocr";

    fn machine(n: u32, live: bool, running: bool, route: u64, ocr: u64) -> MachineVersion {
        let definition = serde_json::json!({
            "StartAt": "Ocr",
            "States": {
                "Ocr": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
                        "Parameters": {"FunctionName": format!("{OCR}:{ocr}")}, "Next": "Route"},
                "Route": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
                          "Parameters": {"FunctionName": format!("{FN}:{route}")}, "End": true}
            }
        });
        MachineVersion {
            arn: format!("arn:aws:states:us-east-1:000000000000:stateMachine:docket:{n}"),
            live,
            running,
            redrivable: false,
            definition: definition.to_string(),
        }
    }

    fn versions(function: &str, numbers: std::ops::RangeInclusive<u64>) -> Vec<String> {
        numbers.map(|n| format!("{function}:{n}")).collect()
    }

    #[test]
    fn a_definition_names_its_qualified_lambda_arns_only() {
        let definition = serde_json::json!({
            "States": {"A": {"Parameters": {"FunctionName": format!("{FN}:7"),
                                            "Other": FN, "Alias": format!("{FN}:live")}}}
        });
        assert_eq!(
            invoked_versions(&definition.to_string()),
            BTreeSet::from([format!("{FN}:7")])
        );
        assert!(invoked_versions("not json").is_empty());
    }

    #[test]
    fn a_machine_version_is_kept_while_live_or_running_and_keeps_what_it_invokes() {
        let machines = [
            machine(1, false, false, 1, 1),
            machine(2, false, true, 2, 1),
            machine(3, true, false, 4, 2),
        ];
        let mut published = versions(FN, 1..=4);
        published.extend(versions(OCR, 1..=2));

        let pruning = prune(&machines, &published);

        assert_eq!(pruning.machines, vec![machines[0].arn.clone()]);
        assert_eq!(
            pruning.kept_machines,
            vec![machines[1].arn.clone(), machines[2].arn.clone()]
        );
        // Route 1 only the deleted machine named; 3 none (a deploy that published nothing it
        // kept). OCR 1 is still named by the running machine version.
        assert_eq!(
            pruning.functions,
            vec![format!("{FN}:1"), format!("{FN}:3")]
        );
        assert_eq!(
            pruning.kept_functions,
            vec![
                format!("{FN}:2"),
                format!("{FN}:4"),
                format!("{OCR}:1"),
                format!("{OCR}:2")
            ]
        );
    }

    #[test]
    fn a_machine_version_an_execution_may_still_be_redriven_on_is_kept() {
        let mut failed = machine(1, false, false, 1, 1);
        failed.redrivable = true;
        let machines = [failed, machine(2, true, false, 2, 1)];

        let pruning = prune(&machines, &versions(FN, 1..=2));

        assert!(pruning.machines.is_empty(), "{pruning:?}");
        assert!(pruning.functions.is_empty(), "{pruning:?}");
    }

    #[test]
    fn a_version_newer_than_any_kept_machine_names_is_kept_for_the_deploy_publishing_it() {
        let machines = [machine(1, true, false, 2, 1)];

        let pruning = prune(&machines, &versions(FN, 1..=3));

        assert_eq!(pruning.functions, vec![format!("{FN}:1")]);
        assert_eq!(
            pruning.kept_functions,
            vec![format!("{FN}:2"), format!("{FN}:3")]
        );
    }

    #[test]
    fn functions_no_kept_machine_names_and_unqualified_arns_lose_nothing() {
        let machines = [machine(1, true, false, 1, 1)];
        let other = "arn:aws:lambda:us-east-1:000000000000:function:docket-local-ingest";
        let mut published = versions(other, 1..=3);
        published.push(format!("{FN}:$LATEST"));

        let pruning = prune(&machines, &published);

        assert!(pruning.functions.is_empty(), "{pruning:?}");
        assert_eq!(pruning.kept_functions, versions(other, 1..=3));
    }
}
