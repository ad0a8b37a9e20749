//! Field-level differences between two JSON documents (two pipeline configs, two runs'
//! results): every leaf that differs, by its dotted path, with the value on each side. An array
//! is one leaf (a list of codes changed as a whole); a key on one side only is a change with
//! nothing on the other.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

/// One field that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// The dotted path (`validation.min_confidence`).
    pub path: String,
    /// Its value in the first document (`None`: absent).
    pub before: Option<Value>,
    /// Its value in the second (`None`: absent).
    pub after: Option<Value>,
}

/// The fields that differ between `before` and `after`, in path order.
pub fn changes(before: &Value, after: &Value) -> Vec<FieldChange> {
    let mut out = Vec::new();
    walk("", Some(before), Some(after), &mut out);
    out
}

fn walk(path: &str, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<FieldChange>) {
    match (before, after) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let at = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                walk(&at, a.get(key), b.get(key), out);
            }
        }
        (a, b) if a != b => out.push(FieldChange {
            path: path.to_string(),
            before: a.cloned(),
            after: b.cloned(),
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_the_leaves_that_differ_are_listed_by_path() {
        let a = json!({"version": "1", "validation": {"min_confidence": 0.9, "max_age_days": 10},
                       "codes": ["EUR", "USD"], "gone": 1});
        let b = json!({"version": "1", "validation": {"min_confidence": 0.95, "max_age_days": 10},
                       "codes": ["EUR"], "new": {"x": true}});
        let paths: Vec<_> = changes(&a, &b).into_iter().map(|c| c.path).collect();
        assert_eq!(paths, ["codes", "gone", "new", "validation.min_confidence"]);
        let c = &changes(&a, &b)[3];
        assert_eq!(
            (c.before.clone(), c.after.clone()),
            (Some(json!(0.9)), Some(json!(0.95)))
        );
        assert_eq!(changes(&a, &a), []);
    }
}
