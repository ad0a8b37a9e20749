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

/// The `cargo build` and `cargo test` lines of the Makefile and of every script but package.sh
/// (whose selections the tests above check) that select less than the workspace, as `file:line`.
///
/// Cargo unifies features across the packages a command selects, so `-p docket-cli` and
/// `-p docket-e2e` each resolve a feature set of their own (the CLI's hyper server, the tests'
/// STS client, …), and each set compiles the AWS SDK crates again: three times in a clean
/// `make test`, for minutes each. With `--workspace` every build and test of the scripts shares
/// one set (`--bin`, `--test`, `--bench` and `--example` choose what is built, not the features).
fn narrower_than_the_workspace(files: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (name, text) in files {
        for (n, line) in text.lines().enumerate() {
            let code = line.split_once('#').map_or(line, |(code, _)| code);
            let runs_cargo = ["cargo build", "cargo test"]
                .iter()
                .any(|c| code.contains(c));
            if runs_cargo && !code.contains("--workspace") {
                found.push(format!("{name}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn the_scripts_build_and_test_with_the_workspaces_features() {
    let mut files = vec![("Makefile".to_string(), root().join("Makefile"))];
    for entry in std::fs::read_dir(root().join("scripts")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".sh") && name != "package.sh" {
            files.push((format!("scripts/{name}"), path));
        }
    }
    let files: Vec<(String, String)> = files
        .into_iter()
        .map(|(name, path)| (name, std::fs::read_to_string(path).unwrap()))
        .collect();
    let test_local = &files
        .iter()
        .find(|(n, _)| n == "scripts/test-local.sh")
        .unwrap()
        .1;
    assert!(
        test_local.contains("cargo test --workspace --test pipeline"),
        "the search below would not see test-local.sh's cargo lines"
    );
    let narrower = narrower_than_the_workspace(&files);
    assert!(
        narrower.is_empty(),
        "cargo lines that select less than the workspace (each resolves its own features and \
         rebuilds the SDK crates):\n{}",
        narrower.join("\n")
    );
    // The check itself: a single package's build is found, a comment is not.
    let sample = "cargo build -p docket-cli\n# cargo test -p x\ncargo test --workspace --test a";
    assert_eq!(
        narrower_than_the_workspace(&[("s".into(), sample.into())]),
        ["s:1: cargo build -p docket-cli"]
    );
}
