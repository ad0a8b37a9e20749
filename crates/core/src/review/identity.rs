//! Who is calling the review API: the authenticated principal (on AWS, what the function URL's
//! `AWS_IAM` auth puts into `requestContext.authorizer.iam.userArn`) mapped to a [`Reviewer`].
//!
//! Reviewers act through an IAM role per tenant, `<prefix><tenant>` (default prefix
//! `docket-reviewer-`), assumed with the person's id as the role session name: the session ARN
//! `arn:aws:sts::<account>:assumed-role/docket-reviewer-acme/alice` is reviewer `alice` of tenant
//! `acme`. Any other principal (a user, another role, the account root) is not a reviewer. The
//! tenant is never taken from the request.

use super::Reviewer;
use crate::ids::Tenant;
use crate::Error;

/// The default role name prefix of reviewer roles.
pub const DEFAULT_ROLE_PREFIX: &str = "docket-reviewer-";

/// The reviewer behind `principal_arn`, or `Fatal.BadInput` naming why it is not one.
pub fn reviewer_from_principal(principal_arn: &str, role_prefix: &str) -> Result<Reviewer, Error> {
    let refuse = |why: &str| Error::BadInput(format!("caller is not a docket reviewer: {why}"));
    let mut parts = principal_arn.splitn(6, ':');
    let (arn, _partition, service, _region, _account, resource) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    );
    if arn != Some("arn") || service != Some("sts") {
        return Err(refuse("not an assumed-role session"));
    }
    let resource = resource.unwrap_or_default();
    let Some(rest) = resource.strip_prefix("assumed-role/") else {
        return Err(refuse("not an assumed-role session"));
    };
    let Some((role, session)) = rest.split_once('/') else {
        return Err(refuse("no role session name"));
    };
    let Some(tenant) = role.strip_prefix(role_prefix) else {
        return Err(refuse("not a reviewer role"));
    };
    let tenant = Tenant::parse(tenant).map_err(|_| refuse("the role names no valid tenant"))?;
    Reviewer::new(session, tenant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assumed_reviewer_role_session_is_that_tenants_reviewer() {
        let r = reviewer_from_principal(
            "arn:aws:sts::000000000000:assumed-role/docket-reviewer-acme/alice",
            DEFAULT_ROLE_PREFIX,
        )
        .unwrap();
        assert_eq!((r.id.as_str(), r.tenant.as_str()), ("alice", "acme"));
    }

    #[test]
    fn other_principals_are_not_reviewers() {
        for arn in [
            "arn:aws:iam::000000000000:root",
            "arn:aws:iam::000000000000:user/docket-reviewer-acme",
            "arn:aws:sts::000000000000:assumed-role/admin/alice",
            "arn:aws:sts::000000000000:assumed-role/docket-reviewer-acme",
            "arn:aws:sts::000000000000:assumed-role/docket-reviewer-/alice",
            "not an arn",
            "",
        ] {
            let err = reviewer_from_principal(arn, DEFAULT_ROLE_PREFIX).unwrap_err();
            assert_eq!(err.name(), "Fatal.BadInput", "{arn}");
        }
    }

    #[test]
    fn the_prefix_is_configurable() {
        let r =
            reviewer_from_principal("arn:aws-us-gov:sts::1:assumed-role/rev-globex/bob", "rev-")
                .unwrap();
        assert_eq!(r.tenant.as_str(), "globex");
    }
}
