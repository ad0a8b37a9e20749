//! SDK faults that reach executions: the state machine invokes published Lambda versions, which a
//! change of a function's `$LATEST` environment does not reach. While the soak's SDK faults are on,
//! the step functions are published again with the faults in their environment (as a deploy would
//! publish them), and the alias `live` routes new executions to a machine version that names
//! those versions. Switching off routes the alias back and restores the state machine's
//! definition.

use aws_sdk_sfn::types::RoutingConfigurationListItem;
use docket_core::deploys::invoked_versions;
use docket_e2e::stack::Stack;

/// What switching off puts back.
#[derive(Clone)]
pub struct Rerouted {
    machine: String,
    alias: String,
    /// The machine version the alias routed to, and the definition it ran.
    original: String,
    definition: String,
}

/// Publishes a version of each of `functions` (their `$LATEST`, faults included), and routes the
/// alias to a new machine version whose definition names them instead of the versions it named.
pub async fn publish_faulty(stack: &Stack, functions: &[String]) -> Rerouted {
    let alias = stack.out("StateMachineAliasArn").to_string();
    let routed = stack
        .sfn
        .describe_state_machine_alias()
        .state_machine_alias_arn(&alias)
        .send()
        .await
        .expect("describe the alias");
    let original = routed.routing_configuration()[0]
        .state_machine_version_arn()
        .to_string();
    let definition = stack
        .sfn
        .describe_state_machine()
        .state_machine_arn(&original)
        .send()
        .await
        .expect("describe the live version")
        .definition()
        .to_string();
    let mut faulty = definition.clone();
    let named = invoked_versions(&definition);
    for name in functions {
        let suffix = format!(":function:{name}");
        let Some(old) = named.iter().find(|arn| {
            arn.rsplit_once(':')
                .is_some_and(|(f, _)| f.ends_with(&suffix))
        }) else {
            continue; // not a step of the state machine (ingest): its $LATEST is what runs
        };
        let published = stack
            .lambda
            .publish_version()
            .function_name(name)
            .description("soak: with DOCKET_FAULTS")
            .send()
            .await
            .unwrap_or_else(|e| panic!("publish {name}: {e:?}"));
        let new = published.function_arn().expect("a qualified ARN");
        faulty = faulty.replace(&format!("\"{old}\""), &format!("\"{new}\""));
    }
    assert_ne!(faulty, definition, "no step function was republished");
    let machine = stack.out("StateMachineArn").to_string();
    let updated = stack
        .sfn
        .update_state_machine()
        .state_machine_arn(&machine)
        .definition(faulty)
        .publish(true)
        .version_description("soak: step functions with SDK faults")
        .send()
        .await
        .expect("publish the faulty machine version");
    let version = updated
        .state_machine_version_arn()
        .expect("a published version");
    route(stack.sfn.clone(), &alias, version).await;
    Rerouted {
        machine,
        alias,
        original,
        definition,
    }
}

/// Routes the alias back to the version it routed to, and puts the definition back.
pub async fn restore(sfn: aws_sdk_sfn::Client, rerouted: &Rerouted) {
    route(sfn.clone(), &rerouted.alias, &rerouted.original).await;
    sfn.update_state_machine()
        .state_machine_arn(&rerouted.machine)
        .definition(&rerouted.definition)
        .send()
        .await
        .expect("restore the definition");
}

async fn route(sfn: aws_sdk_sfn::Client, alias: &str, version: &str) {
    let all = RoutingConfigurationListItem::builder()
        .state_machine_version_arn(version)
        .weight(100)
        .build()
        .expect("a routing");
    sfn.update_state_machine_alias()
        .state_machine_alias_arn(alias)
        .routing_configuration(all)
        .send()
        .await
        .unwrap_or_else(|e| panic!("route {alias} to {version}: {e:?}"));
}
