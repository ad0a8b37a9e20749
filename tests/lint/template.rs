//! Lints of `infra/template.yaml` that keep a deploy reaching executions: every stack parameter
//! substituted into a state machine definition is named in the create-only Description of the
//! StateMachineVersion, so that changing it publishes a new version (the alias follows it).
//!
//! The template is read as text (CloudFormation's `!Ref`/`!Sub` tags are not plain YAML): a block
//! is the lines indented under its key.

mod checkov;

use std::collections::BTreeSet;
use std::path::PathBuf;

fn template() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../infra/template.yaml");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The lines under the first line whose trimmed text is `key:` after `from`, until the indentation
/// returns to that key's level.
fn block<'a>(lines: &[&'a str], from: usize, key: &str) -> (usize, Vec<&'a str>) {
    let start = (from..lines.len())
        .find(|&i| lines[i].trim() == format!("{key}:"))
        .unwrap_or_else(|| panic!("no `{key}:` after line {from}"));
    let level = indent(lines[start]);
    let body = lines[start + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || indent(l) > level)
        .copied()
        .collect();
    (start, body)
}

/// The names of the template's parameters.
fn parameters(lines: &[&str]) -> BTreeSet<String> {
    let (_, body) = block(lines, 0, "Parameters");
    let level = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    body.iter()
        .filter(|l| indent(l) == level && l.trim_end().ends_with(':'))
        .map(|l| l.trim().trim_end_matches(':').to_string())
        .collect()
}

/// Parameters that `text` references (`!Ref Name` or `${Name}`), out of `known`.
fn referenced(text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    known
        .iter()
        .filter(|p| text.contains(&format!("!Ref {p}")) || text.contains(&format!("${{{p}}}")))
        .cloned()
        .collect()
}

/// Substituted parameters missing from the version's Description, for the template `text`.
fn unversioned(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let params = parameters(&lines);
    let (at, _) = block(&lines, 0, "StateMachine");
    let (_, substitutions) = block(&lines, at, "DefinitionSubstitutions");
    let substituted = referenced(&substitutions.join("\n"), &params);
    assert!(
        !substituted.is_empty(),
        "no parameter found in DefinitionSubstitutions: the lint reads the wrong block"
    );
    let (at, version) = block(&lines, 0, "StateMachineVersion");
    let description = version
        .iter()
        .find(|l| l.trim_start().starts_with("Description:"))
        .unwrap_or_else(|| panic!("StateMachineVersion (line {at}) has no Description"));
    let mut missing: Vec<String> = substituted
        .difference(&referenced(description, &params))
        .cloned()
        .collect();
    if !description.contains("${DefinitionHash}") {
        missing.push("DefinitionHash".into());
    }
    missing
}

#[test]
fn every_parameter_substituted_into_the_definition_publishes_a_new_version() {
    assert_eq!(unversioned(&template()), Vec::<String>::new());
}

#[test]
fn the_template_lint_names_a_substituted_parameter_missing_from_the_version() {
    let text = template();
    let named = ", review wait ${ReviewTimeoutSeconds} s";
    assert!(
        text.contains(named),
        "the version's Description no longer has the form this test removes"
    );
    let stripped = text.replace(named, "");
    assert_eq!(unversioned(&stripped), vec!["ReviewTimeoutSeconds"]);
}

/// The `Timeout` of the function resource `name`.
fn function_timeout(text: &str, name: &str) -> i64 {
    let lines: Vec<&str> = text.lines().collect();
    let (_, body) = block(&lines, 0, name);
    let timeout = body
        .iter()
        .find_map(|l| l.trim().strip_prefix("Timeout: "))
        .unwrap_or_else(|| panic!("{name} has no Timeout"));
    timeout.parse().expect("a number of seconds")
}

#[test]
fn an_attempt_of_a_compensation_holds_it_at_least_as_long_as_compensate_can_run() {
    // A caller past the lease takes the attempt over: its holder must have ended by then.
    let timeout = function_timeout(&template(), "CompensateFunction");
    assert!(
        timeout <= docket_core::saga::ATTEMPT_LEASE_SECONDS,
        "CompensateFunction Timeout {timeout} s outlives the attempt lease"
    );
    assert!(function_timeout("  F:\n    Properties:\n      Timeout: 45\n", "F") > 30);
}
