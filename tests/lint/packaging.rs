//! The Lambdas built for AWS have no fault injector: the feature set cargo resolves for
//! `scripts/package.sh --target aws`'s own selection of packages, for the Lambda target, leaves
//! docket-aws's `fault-injection` off — while the local packaging's selection turns it on (so the
//! search below can find the feature when it is there).

use std::path::PathBuf;
use std::process::Command;

const FEATURE: &str = "fault-injection";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The cargo arguments package.sh's build of `target` selects (packages and features).
fn selection(target: &str) -> Vec<String> {
    let out = Command::new(root().join("scripts/package.sh"))
        .args(["--target", target, "--print-selection"])
        .output()
        .expect("scripts/package.sh runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// `cargo tree` of `selection` for `platform` (default: this host): each package with the
/// features cargo enables.
fn tree(selection: &[String], platform: Option<&str>) -> String {
    // `cargo tree` selects packages like `cargo build` but has no target-kind flags.
    let selection = selection.iter().filter(|a| *a != "--bins");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root())
        .args(["tree", "--locked", "-e", "features", "--prefix", "none"])
        .args(["-f", "{p} {f}"])
        .args(platform.map(|p| ["--target", p]).into_iter().flatten())
        .args(selection)
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The features enabled on docket-aws in `tree` (its package lines: `docket-aws v0.1.0 (path)
/// f,g`).
fn docket_aws_features(tree: &str) -> Vec<String> {
    let lines: Vec<&str> = tree
        .lines()
        .filter(|l| l.starts_with("docket-aws v"))
        .collect();
    assert!(!lines.is_empty(), "docket-aws is not in the tree:\n{tree}");
    lines
        .iter()
        .filter_map(|l| l.split_once(") ").map(|(_, f)| f))
        .flat_map(|f| f.trim_end_matches(" (*)").split(','))
        .filter(|f| !f.is_empty() && *f != "(*)")
        .map(str::to_string)
        .collect()
}

#[test]
fn the_aws_build_has_no_fault_injection() {
    let aws = selection("aws");
    assert!(aws.iter().any(|a| a == "docket-ingest"), "{aws:?}");
    // The Lambda target of `cargo lambda build --arm64`.
    let tree = tree(&aws, Some("aarch64-unknown-linux-gnu"));
    assert!(
        !tree.contains("docket-e2e"),
        "the AWS build selects the test crate"
    );
    let features = docket_aws_features(&tree);
    assert!(
        !features.iter().any(|f| f == FEATURE),
        "the AWS build enables docket-aws/{FEATURE}: {features:?}"
    );
}

#[test]
fn the_local_build_has_fault_injection() {
    let features = docket_aws_features(&tree(&selection("local"), None));
    assert!(
        features.iter().any(|f| f == FEATURE),
        "the local build lacks docket-aws/{FEATURE}: {features:?}"
    );
}
