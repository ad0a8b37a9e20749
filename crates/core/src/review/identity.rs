//! Who is calling the review API: the authenticated principal (on AWS, what the function URL's
//! `AWS_IAM` auth puts into `requestContext.authorizer.iam`) mapped to a [`Reviewer`].
//!
//! Reviewers act through an IAM role per tenant, `<prefix><tenant>`, in the stack's own account
//! (the prefix is per stack, by default `<stack>-reviewer-`), assumed with the person's id as the
//! role session name: the session ARN
//! `arn:aws:sts::<account>:assumed-role/docket-reviewer-acme/alice` is reviewer `alice` of tenant
//! `acme`. The session name is whatever the caller of AssumeRole chose, so the role's trust policy
//! must pin it (README, "Reviewing documents": the session name and `sts:SourceIdentity` must equal
//! the caller's `${aws:username}`); this module trusts it only as far as that policy does. Any
//! other principal (a user, another role, the account root, a role of another account) is not a
//! reviewer. The tenant is never taken from the request.
//!
//! Operators, who resolve unresolved operations through the same API (`docket ops resolve`),
//! act through one role of the stack's account (by default `<stack>-operator`), with their id
//! as the session name, pinned by its trust policy the same way ([`Operators`]).

use super::Reviewer;
use crate::ids::Tenant;
use crate::Error;

/// The role name prefix the unit tests and the local stack `docket` use (`<stack>-reviewer-`).
pub const DEFAULT_ROLE_PREFIX: &str = "docket-reviewer-";

/// Which principals are reviewers: sessions of `<role_prefix><tenant>` roles of `account`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reviewers {
    /// The reviewer roles' name prefix (`REVIEWER_ROLE_PREFIX`).
    pub role_prefix: String,
    /// The stack's account id (`REVIEWER_ACCOUNT_ID`): roles of other accounts are refused even
    /// if a resource policy let them in.
    pub account: String,
}

impl Reviewers {
    /// The reviewer behind `principal_arn`, signed by `caller_account` (the authorizer's
    /// `accountId`), or `Fatal.BadInput` naming why it is not one.
    pub fn reviewer(&self, principal_arn: &str, caller_account: &str) -> Result<Reviewer, Error> {
        if caller_account != self.account {
            return Err(refuse("not of the stack's account"));
        }
        let (account, reviewer) = parse_session(principal_arn, &self.role_prefix)?;
        if account != self.account {
            return Err(refuse("not of the stack's account"));
        }
        Ok(reviewer)
    }
}

fn refuse(why: &str) -> Error {
    Error::BadInput(format!("caller is not a docket reviewer: {why}"))
}

/// The reviewer behind `principal_arn`, whatever its account, or `Fatal.BadInput` naming why it
/// is not one. The API checks the account too: [`Reviewers::reviewer`].
pub fn reviewer_from_principal(principal_arn: &str, role_prefix: &str) -> Result<Reviewer, Error> {
    parse_session(principal_arn, role_prefix).map(|(_, r)| r)
}

/// Which principals are operators: sessions of the role `role` of `account`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operators {
    /// The operator role's name (`OPERATOR_ROLE_NAME`).
    pub role: String,
    /// The stack's account id (`REVIEWER_ACCOUNT_ID`).
    pub account: String,
}

/// An operator: the session name of their operator role session, and that session's ARN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operator {
    /// Their id (the role session name).
    pub id: String,
    /// The verified principal ARN.
    pub principal: String,
}

impl Operators {
    /// The operator behind `principal_arn`, signed by `caller_account`, or `Fatal.BadInput`
    /// naming why it is not one.
    pub fn operator(&self, principal_arn: &str, caller_account: &str) -> Result<Operator, Error> {
        let refuse = |why: &str| Error::BadInput(format!("caller is not a docket operator: {why}"));
        let (account, role, session) = role_session(principal_arn).map_err(&refuse)?;
        if caller_account != self.account || account != self.account {
            return Err(refuse("not of the stack's account"));
        }
        if role != self.role {
            return Err(refuse("not the operator role"));
        }
        let n = session.chars().count();
        if n == 0 || n > 64 || session.chars().any(char::is_control) {
            return Err(refuse("no valid role session name"));
        }
        Ok(Operator {
            id: session.to_string(),
            principal: principal_arn.to_string(),
        })
    }
}

/// The account, role name and session name of an assumed-role session ARN, or why it is not one.
fn role_session(principal_arn: &str) -> Result<(&str, &str, &str), &'static str> {
    let mut parts = principal_arn.splitn(6, ':');
    let (arn, _partition, service, _region, account, resource) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    );
    if arn != Some("arn") || service != Some("sts") {
        return Err("not an assumed-role session");
    }
    let rest = resource
        .unwrap_or_default()
        .strip_prefix("assumed-role/")
        .ok_or("not an assumed-role session")?;
    let (role, session) = rest.split_once('/').ok_or("no role session name")?;
    Ok((account.unwrap_or_default(), role, session))
}

/// The account and reviewer of an assumed reviewer role session ARN.
fn parse_session<'a>(
    principal_arn: &'a str,
    role_prefix: &str,
) -> Result<(&'a str, Reviewer), Error> {
    let (account, role, session) = role_session(principal_arn).map_err(refuse)?;
    let Some(tenant) = role.strip_prefix(role_prefix) else {
        return Err(refuse("not a reviewer role"));
    };
    let tenant = Tenant::parse(tenant).map_err(|_| refuse("the role names no valid tenant"))?;
    Ok((account, Reviewer::new(session, tenant)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack() -> Reviewers {
        Reviewers {
            role_prefix: DEFAULT_ROLE_PREFIX.into(),
            account: "000000000000".into(),
        }
    }

    #[test]
    fn an_assumed_reviewer_role_session_is_that_tenants_reviewer() {
        let r = stack()
            .reviewer(
                "arn:aws:sts::000000000000:assumed-role/docket-reviewer-acme/alice",
                "000000000000",
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
            let err = stack().reviewer(arn, "000000000000").unwrap_err();
            assert_eq!(err.name(), "Fatal.BadInput", "{arn}");
        }
    }

    #[test]
    fn a_reviewer_role_of_another_account_is_not_a_reviewer() {
        let foreign = "arn:aws:sts::999999999999:assumed-role/docket-reviewer-acme/alice";
        let ours = "arn:aws:sts::000000000000:assumed-role/docket-reviewer-acme/alice";

        let by_arn = stack().reviewer(foreign, "000000000000").unwrap_err();
        let by_signer = stack().reviewer(ours, "999999999999").unwrap_err();

        assert!(by_arn.to_string().contains("account"), "{by_arn}");
        assert!(by_signer.to_string().contains("account"), "{by_signer}");
        assert!(reviewer_from_principal(foreign, DEFAULT_ROLE_PREFIX).is_ok());
    }

    #[test]
    fn the_prefix_is_per_stack() {
        let stack = Reviewers {
            role_prefix: "prod-docket-reviewer-".into(),
            account: "1".into(),
        };
        let r = stack
            .reviewer(
                "arn:aws-us-gov:sts::1:assumed-role/prod-docket-reviewer-globex/bob",
                "1",
            )
            .unwrap();
        let other_stack = "arn:aws:sts::1:assumed-role/docket-reviewer-globex/bob";

        assert_eq!(r.tenant.as_str(), "globex");
        assert!(stack.reviewer(other_stack, "1").is_err());
    }

    fn operators() -> Operators {
        Operators {
            role: "docket-operator".into(),
            account: "000000000000".into(),
        }
    }

    #[test]
    fn a_session_of_the_operator_role_is_that_operator() {
        let arn = "arn:aws:sts::000000000000:assumed-role/docket-operator/olivia";

        let op = operators().operator(arn, "000000000000").unwrap();

        assert_eq!((op.id.as_str(), op.principal.as_str()), ("olivia", arn));
    }

    #[test]
    fn reviewers_and_other_principals_are_not_operators() {
        for (arn, account) in [
            (
                "arn:aws:sts::000000000000:assumed-role/docket-reviewer-acme/alice",
                "000000000000",
            ),
            (
                "arn:aws:sts::000000000000:assumed-role/docket-operator-x/olivia",
                "000000000000",
            ),
            (
                "arn:aws:iam::000000000000:role/docket-operator",
                "000000000000",
            ),
            ("arn:aws:iam::000000000000:root", "000000000000"),
            (
                "arn:aws:sts::999999999999:assumed-role/docket-operator/olivia",
                "000000000000",
            ),
            (
                "arn:aws:sts::000000000000:assumed-role/docket-operator/olivia",
                "999999999999",
            ),
            (
                "arn:aws:sts::000000000000:assumed-role/docket-operator/",
                "000000000000",
            ),
        ] {
            let err = operators().operator(arn, account).unwrap_err();
            assert_eq!(err.name(), "Fatal.BadInput", "{arn}");
            assert!(err.to_string().contains("not a docket operator"), "{err}");
        }
    }
}
