//! The saga's tables as infra/template.yaml defines them: read from the template's text, built
//! from it, and compared with the adapters' key and index names.

use aws_sdk_dynamodb::operation::create_table::builders::CreateTableFluentBuilder;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, GlobalSecondaryIndex, KeyType, Projection, ProjectionType,
    ScalarAttributeType,
};
use docket_aws::config;
use docket_aws::saga::{journal, outbox};
use docket_e2e::util;

use crate::dynamodb::key;

/// (attribute name, `HASH`|`RANGE` or `S`|`N`) pairs, in the template's order.
type Pairs = Vec<(String, String)>;

/// One table's definition as infra/template.yaml writes it.
#[derive(Debug, Default, PartialEq)]
struct TableSpec {
    /// (name, type) of each attribute definition.
    attributes: Pairs,
    /// (name, HASH|RANGE) of the key schema.
    key: Pairs,
    /// Each global secondary index: name, key schema, projection type.
    indexes: Vec<(String, Pairs, String)>,
}

/// The properties of the template's table `logical_id`, read from the YAML text (the template is
/// regular: `- AttributeName:` followed by its `AttributeType:` or `KeyType:`).
fn template_table(logical_id: &str) -> TableSpec {
    let path = util::workspace_root().join("infra/template.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == format!("  {logical_id}:"))
        .unwrap_or_else(|| panic!("{logical_id} is not a resource of the template"));
    let indent = |l: &str| l.len() - l.trim_start().len();
    let block = lines[start + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || indent(l) > 2);
    let (mut spec, mut section, mut name) = (TableSpec::default(), "", String::new());
    for line in block {
        let t = line.trim().trim_start_matches("- ");
        let value = |k: &str| t.strip_prefix(k).map(|v| v.trim().to_string());
        if indent(line) == 6 {
            section = t.trim_end_matches(':');
        } else if let Some(index) = value("IndexName:") {
            spec.indexes.push((index, Vec::new(), String::new()));
        } else if let Some(v) = value("AttributeName:") {
            name = v;
        } else if let Some(v) = value("AttributeType:") {
            spec.attributes.push((name.clone(), v));
        } else if let Some(v) = value("KeyType:") {
            match (section, spec.indexes.last_mut()) {
                ("GlobalSecondaryIndexes", Some(index)) => index.1.push((name.clone(), v)),
                _ => spec.key.push((name.clone(), v)),
            }
        } else if let (Some(v), Some(index)) = (value("ProjectionType:"), spec.indexes.last_mut()) {
            index.2 = v;
        }
    }
    spec
}

fn key_type(t: &str) -> KeyType {
    KeyType::from(t)
}

/// `table` with the template's key schema, attributes and indexes of `logical_id`.
pub fn as_in_template(
    logical_id: &str,
    mut table: CreateTableFluentBuilder,
) -> CreateTableFluentBuilder {
    let spec = template_table(logical_id);
    for (name, t) in &spec.attributes {
        let def = AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(ScalarAttributeType::from(t.as_str()))
            .build()
            .unwrap();
        table = table.attribute_definitions(def);
    }
    for (name, t) in &spec.key {
        table = table.key_schema(key(name, key_type(t)));
    }
    for (index, keys, projection) in &spec.indexes {
        let mut gsi = GlobalSecondaryIndex::builder()
            .index_name(index)
            .projection(
                Projection::builder()
                    .projection_type(ProjectionType::from(projection.as_str()))
                    .build(),
            );
        for (name, t) in keys {
            gsi = gsi.key_schema(key(name, key_type(t)));
        }
        table = table.global_secondary_indexes(gsi.build().unwrap());
    }
    table
}

fn pairs(v: &[(&str, &str)]) -> Pairs {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn the_adapters_keys_and_indexes_are_the_templates() {
    let journal_table = template_table("SagaJournalTable");
    assert_eq!(journal_table.key, pairs(&[(journal::KEY, "HASH")]));
    assert_eq!(
        journal_table.indexes,
        [(
            journal::BY_OBLIGATION.to_string(),
            pairs(&[(journal::OBLIGATION, "HASH"), (journal::KEY, "RANGE")]),
            "ALL".to_string()
        )]
    );
    let config_table = template_table("ConfigTable");
    assert_eq!(config_table.key, pairs(&[(config::KEY, "HASH")]));
    let outbox_table = template_table("OutboxTable");
    assert_eq!(outbox_table.key, pairs(&[(outbox::KEY, "HASH")]));
    assert_eq!(
        outbox_table.indexes,
        [(
            outbox::BY_DELIVERY.to_string(),
            pairs(&[(outbox::DELIVERY, "HASH"), (outbox::SINCE, "RANGE")]),
            "ALL".to_string()
        )]
    );
    // The parser reads what it should: the audit table's numeric range key.
    assert_eq!(
        template_table("AuditTable").key,
        pairs(&[("documentId", "HASH"), ("seq", "RANGE")])
    );
}
