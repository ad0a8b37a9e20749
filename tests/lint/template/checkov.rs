//! Every checkov check the template skips carries its reason (issue 11): a `- id: CKV_...` entry
//! of a `Metadata: checkov: skip:` list is followed by a non-empty `comment:`.

use super::template;

/// The skipped check ids, with the 1-based line of each, whose entry has no non-empty comment.
fn unexplained(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut missing = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(id) = line.trim().strip_prefix("- id: ") else {
            continue;
        };
        if !id.starts_with("CKV") {
            continue;
        }
        let comment = lines.get(i + 1).map(|l| l.trim()).unwrap_or("");
        let reason = comment
            .strip_prefix("comment:")
            .map(str::trim)
            .unwrap_or("");
        // A folded scalar (`>-`) carries its text on the next line.
        let reason = match reason {
            ">-" | ">" | "|" => lines.get(i + 2).map(|l| l.trim()).unwrap_or(""),
            r => r.trim_matches('"'),
        };
        if reason.is_empty() {
            missing.push((i + 1, id.to_string()));
        }
    }
    missing
}

#[test]
fn every_checkov_skip_in_the_template_says_why() {
    let text = template();
    assert!(
        text.contains("checkov:"),
        "the template skips no checkov check: the lint reads the wrong file"
    );
    assert_eq!(
        unexplained(&text),
        vec![],
        "checkov skips without a comment"
    );
}

#[test]
fn a_skip_without_a_comment_is_found() {
    let text = "    Metadata:\n      checkov:\n        skip:\n          - id: CKV_AWS_1\n            comment: >-\n              why\n          - id: CKV_AWS_2\n          - id: CKV_AWS_3\n            comment: \"\"\n";
    assert_eq!(
        unexplained(text),
        vec![(7, "CKV_AWS_2".to_string()), (8, "CKV_AWS_3".to_string())]
    );
}
