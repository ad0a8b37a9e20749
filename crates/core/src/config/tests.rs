//! The config's schema and range checks, the builtin file, and the fingerprint's stability.

use super::*;

fn builtin_json() -> serde_json::Value {
    serde_json::from_str(BUILTIN).unwrap()
}

fn with(edit: impl FnOnce(&mut serde_json::Value)) -> Result<PipelineConfig, ConfigError> {
    let mut value = builtin_json();
    edit(&mut value);
    PipelineConfig::from_json(&value.to_string())
}

fn invalid_field(result: Result<PipelineConfig, ConfigError>) -> String {
    match result {
        Err(ConfigError::Invalid { field, .. }) => field,
        other => panic!("expected ConfigError::Invalid, got {other:?}"),
    }
}

#[test]
fn builtin_config_parses_with_the_committed_thresholds() {
    // given the committed config/pipeline.json
    // when it is loaded
    let config = PipelineConfig::builtin();
    // then the documented values are in force
    assert_eq!(config.version, PINNED_VERSION);
    assert_eq!(config.ledger.lease_seconds, 10);
    assert_eq!(config.ledger.max_ambiguous_attempts, 3);
    assert_eq!(config.limits.max_document_bytes, 20 * 1024 * 1024);
    assert_eq!(config.limits.max_pages, 100);
    assert_eq!(config.extraction.date_order, DateOrder::Dmy);
    assert_eq!(config.validation.min_confidence, 0.80);
    assert_eq!(config.validation.max_amount, "1000000.00");
    assert_eq!(config.validation.max_future_days, 30);
    assert_eq!(config.validation.max_age_days, 3650);
    assert_eq!(
        config.validation.required_for_processing,
        vec![FieldName::TotalAmount]
    );
    assert_eq!(config.validation.required, FieldName::ALL.to_vec());
    for code in ["EUR", "USD", "GBP", "CHF"] {
        assert!(config
            .validation
            .allowed_currencies
            .contains(&code.to_string()));
    }
    // A currency the extractor reads off an issuer's country is one the default accepts: an
    // invoice of a country whose conventions it reads does not go to a person for its currency.
    let x = &config.extraction;
    for code in x.country_currencies.keys().chain(x.country_patterns.keys()) {
        assert!(
            config.validation.allowed_currencies.contains(code),
            "{code} is read off a country but not allowed"
        );
    }
    assert_eq!(
        config
            .extraction
            .currency_symbols
            .get("€")
            .map(String::as_str),
        Some("EUR")
    );
    // and the validation rules know which config version they belong to
    assert_eq!(config.validation.config_version, PINNED_VERSION);
}

#[test]
fn fingerprint_is_stable_across_calls_and_loads() {
    let a = PipelineConfig::builtin();
    let b = PipelineConfig::builtin();
    assert_eq!(a.fingerprint(), a.fingerprint());
    assert_eq!(a.fingerprint(), b.fingerprint());
    let fp = a.fingerprint();
    assert_eq!(fp.len(), "cfg-".len() + 16);
    assert!(fp.starts_with("cfg-"));
    assert!(fp[4..]
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
}

#[test]
fn fingerprint_does_not_depend_on_key_order_or_whitespace_of_the_file() {
    // given the builtin config re-serialized pretty-printed (different whitespace) and with
    // top-level keys in reverse order
    let value = builtin_json();
    let obj = value.as_object().unwrap();
    let mut keys: Vec<_> = obj.keys().cloned().collect();
    keys.reverse();
    let body: Vec<String> = keys
        .iter()
        .map(|k| {
            format!(
                "\n  {}: {}",
                serde_json::Value::String(k.clone()),
                serde_json::to_string_pretty(&obj[k]).unwrap()
            )
        })
        .collect();
    let reordered = format!("{{{}\n}}", body.join(","));
    // when both are loaded, then they have the same fingerprint
    assert_eq!(
        PipelineConfig::from_json(&reordered).unwrap().fingerprint(),
        PipelineConfig::builtin().fingerprint()
    );
}

#[test]
fn fingerprint_changes_when_a_threshold_changes() {
    let base = PipelineConfig::builtin();
    let mut stricter = base.clone();
    stricter.validation.min_confidence = 0.81;
    assert_ne!(base.fingerprint(), stricter.fingerprint());

    let mut label = base.clone();
    label
        .extraction
        .labels
        .total_amount
        .labels
        .push("Summe brutto".into());
    assert_ne!(base.fingerprint(), label.fingerprint());
}

#[test]
fn builtin_fingerprint_is_pinned_to_its_version() {
    // A tripwire: editing config/pipeline.json changes the fingerprint (and so every new
    // document run id). When that is intended, bump `version` and update both values here.
    let config = PipelineConfig::builtin();
    assert_eq!(
        (config.version.as_str(), config.fingerprint().as_str()),
        (PINNED_VERSION, PINNED_FINGERPRINT)
    );
}
const PINNED_VERSION: &str = "2026-12-08.2";
const PINNED_FINGERPRINT: &str = "cfg-bb9f130f16fa7258";

#[test]
fn from_json_rejects_unknown_keys_at_top_level_and_nested() {
    let top = with(|v| {
        v["colour"] = "blue".into();
    });
    assert!(
        matches!(&top, Err(ConfigError::Schema(e)) if e.to_string().contains("unknown field `colour`")),
        "{top:?}"
    );
    let nested = with(|v| {
        v["validation"]["min_confidance"] = 0.5.into();
    });
    assert!(
        matches!(&nested, Err(ConfigError::Schema(e)) if e.to_string().contains("unknown field `min_confidance`")),
        "{nested:?}"
    );
}

#[test]
fn from_json_rejects_a_missing_key() {
    let result = with(|v| {
        v["validation"]
            .as_object_mut()
            .unwrap()
            .remove("max_amount");
    });
    assert!(
        matches!(&result, Err(ConfigError::Schema(e)) if e.to_string().contains("missing field `max_amount`")),
        "{result:?}"
    );
}

#[test]
fn from_json_rejects_min_confidence_outside_zero_to_one() {
    for bad in [1.5, -0.1] {
        let field = invalid_field(with(|v| {
            v["validation"]["min_confidence"] = bad.into();
        }));
        assert_eq!(field, "validation.min_confidence");
    }
    // the bounds themselves are fine
    assert!(with(|v| v["validation"]["min_confidence"] = 1.0.into()).is_ok());
    assert!(with(|v| v["validation"]["min_confidence"] = 0.0.into()).is_ok());
}

#[test]
fn from_json_rejects_other_out_of_range_values_naming_the_key() {
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        (
            "validation.max_amount",
            Box::new(|v| v["validation"]["max_amount"] = "1,000,000".into()),
        ),
        (
            "validation.max_amount",
            Box::new(|v| v["validation"]["max_amount"] = "0.00".into()),
        ),
        (
            "validation.max_future_days",
            Box::new(|v| v["validation"]["max_future_days"] = (-1).into()),
        ),
        (
            "validation.max_age_days",
            Box::new(|v| v["validation"]["max_age_days"] = 0.into()),
        ),
        (
            "validation.allowed_currencies",
            Box::new(|v| v["validation"]["allowed_currencies"] = serde_json::json!(["eur"])),
        ),
        (
            "validation.required_for_processing",
            Box::new(|v| {
                v["validation"]["required"] = serde_json::json!(["invoice_number"]);
            }),
        ),
        (
            "limits.max_document_bytes",
            Box::new(|v| v["limits"]["max_document_bytes"] = 0.into()),
        ),
        (
            "limits.max_pages",
            Box::new(|v| v["limits"]["max_pages"] = 0.into()),
        ),
        (
            "limits.max_pages",
            Box::new(|v| v["limits"]["max_pages"] = 3_001.into()),
        ),
        (
            "extraction.labels.total_amount",
            Box::new(|v| {
                v["extraction"]["labels"]["total_amount"]["labels"] = serde_json::json!([])
            }),
        ),
        (
            "extraction.currency_symbols",
            Box::new(|v| v["extraction"]["currency_symbols"]["€"] = "Euro".into()),
        ),
        (
            "extraction.month_names",
            Box::new(|v| v["extraction"]["month_names"]["march"] = 13.into()),
        ),
        (
            "extraction.languages",
            Box::new(|v| v["extraction"]["languages"]["en"]["words"] = serde_json::json!(["The"])),
        ),
        ("version", Box::new(|v| v["version"] = " ".into())),
        (
            "ledger.lease_seconds",
            Box::new(|v| v["ledger"]["lease_seconds"] = 0.into()),
        ),
        (
            "ledger.max_ambiguous_attempts",
            Box::new(|v| v["ledger"]["max_ambiguous_attempts"] = 0.into()),
        ),
        (
            "ledger.unresolved_owner",
            Box::new(|v| v["ledger"]["unresolved_owner"] = "".into()),
        ),
    ];
    for (expected, edit) in cases {
        let field = invalid_field(with(|v| edit(v)));
        assert_eq!(field, expected);
    }
}

#[test]
fn from_json_rejects_an_unknown_date_order() {
    let result = with(|v| v["extraction"]["date_order"] = "ydm".into());
    assert!(matches!(result, Err(ConfigError::Schema(_))), "{result:?}");
}
