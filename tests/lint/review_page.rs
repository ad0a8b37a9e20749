//! The review page speaks of every reason validation gives, in words of its own
//! (`crates/cli/assets/review/ui.js`'s `REASONS`), not as a raw code.

use docket_core::validate::REASON_CODES;

#[test]
fn the_review_page_names_every_validation_reason() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crates/cli/assets/review/ui.js"
    );
    let js = std::fs::read_to_string(path).expect("the review page's ui.js");
    let start = js.find("const REASONS = {").expect("REASONS in ui.js");
    let table = &js[start..start + js[start..].find("};").expect("REASONS ends")];
    assert!(
        table.contains("low_confidence: "),
        "the table is read: {table}"
    );
    let unnamed: Vec<_> = REASON_CODES
        .iter()
        .filter(|code| !table.contains(&format!("\n  {code}: ")))
        .collect();
    assert!(unnamed.is_empty(), "ui.js does not name {unnamed:?}");
}
