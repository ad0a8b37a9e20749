//! Least privilege and data protection (issue 11, finding 8), read from the DEPLOYED stack: its
//! buckets are versioned with the lifecycle rules the stack parameters set, its tables refuse
//! deletion, and its roles' inline policies (read back from IAM) grant no Scan, no wildcard
//! action and `Resource: "*"` only to actions that take no resource.
//!
//! The resources are the stack's own, listed by CloudFormation (`DescribeStackResources`): a
//! bucket, table or role added to the template later is checked without changing these tests.

use std::collections::BTreeSet;

use aws_sdk_s3::types::{BucketVersioningStatus, LifecycleRule};
use docket_e2e::stack::Stack;
use docket_e2e::util;
use serde_json::Value;

/// Actions the template may grant on `Resource: "*"`: each takes no resource ARN (X-Ray, Textract
/// jobs, task-token callbacks, vended-log delivery).
const RESOURCELESS: &[&str] = &[
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
    "textract:StartDocumentTextDetection",
    "textract:GetDocumentTextDetection",
    "textract:DetectDocumentText",
    "states:SendTaskSuccess",
    "states:SendTaskFailure",
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
];

/// The physical ids of the deployed stack's resources of `kind` (e.g. `AWS::S3::Bucket`).
async fn resources(stack: &Stack, kind: &str) -> Vec<String> {
    let name = stack
        .describe()
        .await
        .stack_name()
        .expect("stack name")
        .to_string();
    let cfn = aws_sdk_cloudformation::Client::new(&util::aws().await);
    let listed = cfn
        .describe_stack_resources()
        .stack_name(&name)
        .send()
        .await
        .unwrap_or_else(|e| panic!("describe resources of {name}: {e:?}"));
    listed
        .stack_resources()
        .iter()
        .filter(|r| r.resource_type() == Some(kind))
        .filter_map(|r| r.physical_resource_id().map(str::to_string))
        .collect()
}

/// The deployed stack's value of parameter `name`, as days.
async fn days(stack: &Stack, name: &str) -> i32 {
    let value = stack.parameter(name).await;
    value
        .parse()
        .unwrap_or_else(|_| panic!("parameter {name} = {value:?} is not a number of days"))
}

/// The lifecycle rules of `bucket`.
async fn lifecycle(stack: &Stack, bucket: &str) -> Vec<LifecycleRule> {
    let out = stack
        .s3
        .get_bucket_lifecycle_configuration()
        .bucket(bucket)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{bucket} has no lifecycle configuration: {e:?}"));
    out.rules().to_vec()
}

/// The key prefix a rule applies to ("" for the whole bucket), in either of S3's spellings.
fn prefix(rule: &LifecycleRule) -> String {
    #[allow(deprecated)] // the top-level Prefix is what CloudFormation's `Prefix` sets
    let top = rule.prefix();
    top.or_else(|| rule.filter().and_then(|f| f.prefix()))
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn every_bucket_is_versioned_and_aborts_incomplete_uploads() {
    let stack = Stack::load().await;
    let buckets = resources(&stack, "AWS::S3::Bucket").await;
    // The three of the code map (raw, normalized, derived) at least: the list is not empty by
    // accident.
    for output in ["RawBucket", "NormalizedBucket", "DerivedBucket"] {
        assert!(
            buckets.iter().any(|b| b == stack.out(output)),
            "{output} is not among the stack's buckets {buckets:?}"
        );
    }
    for bucket in &buckets {
        let versioning = stack
            .s3
            .get_bucket_versioning()
            .bucket(bucket)
            .send()
            .await
            .expect("get versioning");
        assert_eq!(
            versioning.status(),
            Some(&BucketVersioningStatus::Enabled),
            "bucket {bucket} is not versioned: an overwrite would lose what the audit log points at"
        );
        let rules = lifecycle(&stack, bucket).await;
        assert!(
            rules.iter().any(|r| r
                .abort_incomplete_multipart_upload()
                .and_then(|a| a.days_after_initiation())
                .is_some()),
            "bucket {bucket} keeps incomplete multipart uploads forever: {rules:#?}"
        );
    }
}

#[tokio::test]
async fn raw_versions_and_quarantine_copies_expire_after_the_stack_parameters_but_uploads_never() {
    let stack = Stack::load().await;
    let raw = stack.out("RawBucket");
    let rules = lifecycle(&stack, raw).await;
    let noncurrent = days(&stack, "RawNoncurrentRetentionDays").await;
    let quarantine = days(&stack, "QuarantineRetentionDays").await;

    let inbox: Vec<_> = rules.iter().filter(|r| prefix(r) == "inbox/").collect();
    assert!(
        inbox.iter().any(|r| r
            .noncurrent_version_expiration()
            .and_then(|e| e.noncurrent_days())
            == Some(noncurrent)),
        "no rule expires replaced inbox versions after {noncurrent} days: {rules:#?}"
    );
    assert!(
        rules.iter().any(|r| prefix(r) == "quarantine/"
            && r.expiration().and_then(|e| e.days()) == Some(quarantine)),
        "no rule expires quarantine copies after {quarantine} days: {rules:#?}"
    );
    // The evidence: no rule that reaches inbox/ (by its prefix or the whole bucket's) expires
    // current objects.
    let expiring: Vec<_> = rules
        .iter()
        .filter(|r| "inbox/".starts_with(&prefix(r)) || prefix(r).starts_with("inbox/"))
        .filter(|r| r.expiration().is_some())
        .collect();
    assert!(
        expiring.is_empty(),
        "rules expire current inbox objects: {expiring:#?}"
    );
}

#[tokio::test]
async fn every_table_refuses_deletion() {
    let stack = Stack::load().await;
    let tables = resources(&stack, "AWS::DynamoDB::Table").await;
    let outputs = [
        "RunsTable",
        "AuditTable",
        "LedgerTable",
        "ReviewTable",
        "SagaJournalTable",
        "OutboxTable",
        "AccountsPayableTable",
    ];
    for output in outputs {
        assert!(
            tables.iter().any(|t| t == stack.out(output)),
            "{output} is not among the stack's tables {tables:?}"
        );
    }
    for table in &tables {
        let described = stack
            .dynamodb
            .describe_table()
            .table_name(table)
            .send()
            .await
            .expect("describe table");
        let protected = described
            .table()
            .and_then(|t| t.deletion_protection_enabled());
        assert_eq!(
            protected,
            Some(true),
            "table {table} can be deleted (DeletionProtectionEnabled = {protected:?})"
        );
    }
}

/// One Allow statement of a role's inline policy.
struct Grant {
    role: String,
    sid: String,
    actions: Vec<String>,
    resources: Vec<String>,
}

/// A JSON string or list of strings as a list.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// IAM returns a policy document URL-encoded (RFC 3986); LocalStack may return it plain.
fn policy_json(document: &str) -> Value {
    serde_json::from_str(document).unwrap_or_else(|_| {
        let decoded = percent_encoding::percent_decode_str(document).decode_utf8_lossy();
        serde_json::from_str(&decoded).unwrap_or_else(|e| panic!("policy {document}: {e}"))
    })
}

/// Every Allow statement of the stack's roles, inline and attached, read back from IAM.
async fn grants(stack: &Stack) -> Vec<Grant> {
    let iam = aws_sdk_iam::Client::new(&util::aws().await);
    let mut grants = Vec::new();
    for role in resources(stack, "AWS::IAM::Role").await {
        let names = iam
            .list_role_policies()
            .role_name(&role)
            .send()
            .await
            .unwrap_or_else(|e| panic!("list policies of {role}: {e:?}"));
        for name in names.policy_names() {
            let policy = iam
                .get_role_policy()
                .role_name(&role)
                .policy_name(name)
                .send()
                .await
                .unwrap_or_else(|e| panic!("policy {name} of {role}: {e:?}"));
            allowed(&role, &policy_json(policy.policy_document()), &mut grants);
        }
        // Managed policies attached to the role grant as much as its own.
        let attached = iam
            .list_attached_role_policies()
            .role_name(&role)
            .send()
            .await
            .unwrap_or_else(|e| panic!("attached policies of {role}: {e:?}"));
        for policy in attached.attached_policies() {
            let arn = policy.policy_arn().unwrap_or_default();
            let described = iam.get_policy().policy_arn(arn).send().await;
            let described = described.unwrap_or_else(|e| panic!("policy {arn}: {e:?}"));
            let version = described.policy().and_then(|p| p.default_version_id());
            let document = iam
                .get_policy_version()
                .policy_arn(arn)
                .version_id(version.unwrap_or("v1"))
                .send()
                .await
                .unwrap_or_else(|e| panic!("policy version of {arn}: {e:?}"));
            let text = document.policy_version().and_then(|v| v.document());
            allowed(&role, &policy_json(text.unwrap_or_default()), &mut grants);
        }
    }
    grants
}

/// The Allow statements of a policy `document` of `role`, as grants.
fn allowed(role: &str, document: &Value, grants: &mut Vec<Grant>) {
    let statements = match &document["Statement"] {
        Value::Array(items) => items.clone(),
        one => vec![one.clone()],
    };
    for statement in statements.iter().filter(|s| s["Effect"] == "Allow") {
        grants.push(Grant {
            role: role.to_string(),
            sid: statement["Sid"].as_str().unwrap_or("").to_string(),
            actions: strings(statement.get("Action")),
            resources: strings(statement.get("Resource")),
        });
    }
}

#[tokio::test]
async fn roles_grant_no_scan_no_wildcard_action_and_star_only_where_no_resource_exists() {
    let stack = Stack::load().await;
    let grants = grants(&stack).await;
    // The data is there: the roles' DynamoDB grants were read (else "no Scan" proves nothing).
    let actions: BTreeSet<&str> = grants
        .iter()
        .flat_map(|g| g.actions.iter().map(String::as_str))
        .collect();
    for expected in [
        "dynamodb:Query",
        "dynamodb:UpdateItem",
        "states:StartExecution",
    ] {
        assert!(
            actions.contains(expected),
            "no role grants {expected}: the policies were not read ({actions:?})"
        );
    }

    // No Lambda scans (the operator CLI does, with the operator's credentials), except the audit
    // digest writer: every chain's head is one item of the checkpoints table, and a digest signs
    // them all, so it reads that table (and only that one) whole.
    let checkpoints = stack.out("AuditCheckpointsTable");
    let is_digest_heads = |g: &Grant| {
        g.role.contains("AuditDigestRole")
            && g.sid == "ReadHeads"
            && !g.resources.is_empty()
            && g.resources
                .iter()
                .all(|r| r.ends_with(&format!("table/{checkpoints}")))
    };
    let (heads, scans): (Vec<&Grant>, Vec<&Grant>) = grants
        .iter()
        .filter(|g| g.actions.iter().any(|a| a == "dynamodb:Scan"))
        .partition(|g| is_digest_heads(g));
    assert_eq!(
        heads.len(),
        1,
        "the digest role's one Scan, on the checkpoints table, was not found"
    );
    let scans: Vec<_> = scans
        .iter()
        .map(|g| format!("{}/{} on {:?}", g.role, g.sid, g.resources))
        .collect();
    assert!(scans.is_empty(), "roles allow dynamodb:Scan: {scans:?}");

    let wildcards: Vec<_> = grants
        .iter()
        .flat_map(|g| g.actions.iter().map(move |a| (g, a)))
        .filter(|(_, a)| a.contains('*'))
        .map(|(g, a)| format!("{}/{}: {a}", g.role, g.sid))
        .collect();
    assert!(wildcards.is_empty(), "wildcard actions: {wildcards:?}");

    let star: Vec<_> = grants
        .iter()
        .filter(|g| g.resources.iter().any(|r| r == "*"))
        .flat_map(|g| g.actions.iter().map(move |a| (g, a)))
        .filter(|(_, a)| !RESOURCELESS.contains(&a.as_str()))
        .map(|(g, a)| format!("{}/{}: {a}", g.role, g.sid))
        .collect();
    assert!(
        star.is_empty(),
        "actions that take a resource are granted on \"*\": {star:?}"
    );
}

#[tokio::test]
async fn only_review_api_may_start_a_bulk_reprocess() {
    // Who asked for a reprocess is the operator review-api verified; that holds only if no
    // other role of the stack may start the bulk state machine (its own role starts the Map's
    // child executions, which only its definition can do).
    let stack = Stack::load().await;
    let bulk = stack.out("BulkReprocessStateMachineArn");
    let grants = grants(&stack).await;
    // The attached policies were read: review's shared grants reach both review roles.
    let shared: BTreeSet<&str> = grants
        .iter()
        .filter(|g| g.sid == "ReviewTasks")
        .map(|g| g.role.as_str())
        .collect();
    assert_eq!(shared.len(), 2, "{shared:?}");
    let starters: Vec<String> = grants
        .iter()
        .filter(|g| g.actions.iter().any(|a| a == "states:StartExecution"))
        .filter(|g| g.resources.iter().any(|r| r == bulk || r == "*"))
        .map(|g| format!("{}/{}", g.role, g.sid))
        .collect();
    let expected = [
        ("ReviewApiRole", "StartReprocess"),
        ("BulkReprocessRole", "ChildExecutions"),
    ];
    assert_eq!(starters.len(), expected.len(), "{starters:?}");
    for (role, sid) in expected {
        assert!(
            starters
                .iter()
                .any(|s| s.contains(role) && s.ends_with(&format!("/{sid}"))),
            "{role}/{sid} not among {starters:?}"
        );
    }
}

#[tokio::test]
async fn the_reprocess_function_may_ask_whether_a_pipeline_execution_still_runs() {
    // A batch holds its Map slot while its runs' executions run (reprocess::pace), which it
    // learns from DescribeExecution of the pipeline's executions by run id: on AWS without this
    // grant every check would fail (LocalStack does not enforce IAM).
    let stack = Stack::load().await;
    let execution = docket_aws::sfn::execution_arn(stack.out("StateMachineAliasArn"), "run-x");
    let grants = grants(&stack).await;
    let readers: Vec<String> = grants
        .iter()
        .filter(|g| g.actions.iter().any(|a| a == "states:DescribeExecution"))
        .filter(|g| {
            g.resources.iter().any(|r| match r.strip_suffix('*') {
                Some(prefix) => execution.starts_with(prefix),
                None => *r == execution,
            })
        })
        .map(|g| format!("{}/{}", g.role, g.sid))
        .collect();
    assert!(
        readers
            .iter()
            .any(|r| r.contains("ReprocessRole") && r.ends_with("/PipelineExecutions")),
        "no grant of states:DescribeExecution on {execution} to the reprocess role: {readers:?}"
    );
}

/// A CloudWatch Query API call to LocalStack (the tests build no CloudWatch SDK: its protocol
/// crates would change the SDK features every function is built with). LocalStack routes by the
/// credential scope's service and does not check the signature.
async fn cloudwatch(params: &[(&str, &str)]) -> String {
    let scope = "Credential=test/20261202/us-east-1/monitoring/aws4_request";
    let response = reqwest::Client::new()
        .post(util::endpoint())
        .header(
            "authorization",
            format!("AWS4-HMAC-SHA256 {scope}, SignedHeaders=host, Signature=0"),
        )
        .form(&[params, &[("Version", "2010-08-01")]].concat())
        .send()
        .await
        .expect("CloudWatch answers");
    assert!(response.status().is_success(), "{params:?}: {response:?}");
    response.text().await.unwrap()
}

/// The text of XML element `tag` in `xml`, unescaped.
fn xml_text(xml: &str, tag: &str) -> String {
    let open = format!("<{tag}>");
    let start = xml
        .find(&open)
        .unwrap_or_else(|| panic!("no {tag} in {xml}"))
        + open.len();
    let end = start + xml[start..].find(&format!("</{tag}>")).unwrap();
    xml[start..end]
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[tokio::test]
async fn the_dashboard_shows_every_alarm_of_the_stack() {
    let stack = Stack::load().await;
    let name = stack.describe().await.stack_name().unwrap().to_string();
    let alarms = resources(&stack, "AWS::CloudWatch::Alarm").await;

    let answer = cloudwatch(&[("Action", "GetDashboard"), ("DashboardName", &name)]).await;
    let body: Value = serde_json::from_str(&xml_text(&answer, "DashboardBody")).unwrap();

    let widgets = body["widgets"].as_array().expect("widgets");
    let shown: BTreeSet<&str> = widgets
        .iter()
        .flat_map(|w| w["properties"]["alarms"].as_array().into_iter().flatten())
        .filter_map(|arn| arn.as_str()?.rsplit(":alarm:").next())
        .collect();
    assert!(alarms.len() >= 11, "the stack's alarms: {alarms:?}");
    let alarms: BTreeSet<&str> = alarms.iter().map(String::as_str).collect();
    assert_eq!(shown, alarms, "alarms on the dashboard vs the stack's");
    let metrics = widgets.iter().filter(|w| w["type"] == "metric").count();
    assert!(metrics >= 8, "{body:#}");
}

#[tokio::test]
async fn review_api_may_read_the_document_versions_it_presigns_and_the_ocr_it_outlines() {
    // A presigned URL is only as good as its signer's right to the object: review-api signs
    // GETs of a task's raw upload version (GET /tasks/{id}/document), and reads the task's
    // normalized OCR (GET /tasks/{id}/evidence). LocalStack does not enforce IAM, so only this
    // test sees a missing grant before AWS does.
    let stack = Stack::load().await;
    let grants = grants(&stack).await;
    let raw = format!("arn:aws:s3:::{}/inbox/acme/a.pdf", stack.out("RawBucket"));
    let ocr = format!(
        "arn:aws:s3:::{}/acme/doc/run/ocr.json",
        stack.out("NormalizedBucket")
    );
    let may = |action: &str, object: &str| may(&grants, "ReviewApiRole", action, object);

    assert!(may("s3:GetObject", &raw), "review-api cannot read {raw}");
    assert!(may("s3:GetObjectVersion", &raw), "nor its versions");
    assert!(may("s3:GetObject", &ocr), "review-api cannot read {ocr}");
}

#[tokio::test]
async fn validate_may_read_the_upload_version_whose_e_invoice_it_reads_and_write_nowhere_there() {
    // Validate reads a run's raw upload by its version for the e-invoice a PDF carries
    // (`einvoice`); LocalStack does not enforce IAM, so only this test sees a missing grant.
    let stack = Stack::load().await;
    let grants = grants(&stack).await;
    let raw = format!("arn:aws:s3:::{}/inbox/acme/a.pdf", stack.out("RawBucket"));
    let may = |action: &str, object: &str| may(&grants, "ValidateRole", action, object);
    assert!(may("s3:GetObject", &raw), "validate cannot read {raw}");
    assert!(may("s3:GetObjectVersion", &raw), "nor its versions");
    assert!(!may("s3:PutObject", &raw), "validate may write the inbox");
    let quarantine = format!("arn:aws:s3:::{}/quarantine/x", stack.out("RawBucket"));
    assert!(
        !may("s3:GetObject", &quarantine),
        "validate reads beyond the inbox"
    );
}

/// Whether a statement of `role`'s inline policies allows `action` on `object` (a resource
/// ending in `*` as a prefix).
fn may(grants: &[Grant], role: &str, action: &str, object: &str) -> bool {
    grants.iter().any(|g| {
        g.role.contains(role)
            && g.actions.iter().any(|a| a == action)
            && g.resources.iter().any(|r| match r.strip_suffix('*') {
                Some(prefix) => object.starts_with(prefix),
                None => r == object,
            })
    })
}
