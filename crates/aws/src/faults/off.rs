//! Fault injection compiled out: what every build without the `fault-injection` feature (every
//! AWS build, see `scripts/package.sh`) has in place of `faults/`. There are no rules, no
//! `DOCKET_FAULTS` parser and no interceptor: installing [`Faults`] leaves a client's config as
//! it is.
//!
//! A function configured with `DOCKET_FAULT_INJECTION=1` refuses to start (`Fatal.Internal`)
//! rather than run without the faults it was asked for: a test stack deployed with the wrong
//! build fails where it can be seen instead of passing for the wrong reason, and in production the
//! setting can only stop the function (which anyone allowed to change its configuration can do
//! anyway), never make it lose answers.

use docket_core::Error;

/// Asks for fault injection when set to `1`; refused by this build.
pub const ENABLE_VAR: &str = "DOCKET_FAULT_INJECTION";
/// The rules of a build with fault injection; never read by this one.
pub const RULES_VAR: &str = "DOCKET_FAULTS";

/// No faults: this build cannot inject any.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    _none: (),
}

impl Faults {
    /// No rules (the only value there is).
    pub fn none() -> Faults {
        Faults::default()
    }

    /// Always true.
    pub fn is_empty(&self) -> bool {
        true
    }

    /// `None`, or an error if the environment asks for fault injection.
    pub fn from_env() -> Result<Option<Faults>, Error> {
        refuse(std::env::var(ENABLE_VAR).ok().as_deref())
    }
}

fn refuse(enable: Option<&str>) -> Result<Option<Faults>, Error> {
    match enable {
        Some("1") => Err(Error::Internal(format!(
            "fault injection requested ({ENABLE_VAR}=1) but not compiled in: this build has no \
             `fault-injection` feature (only scripts/package.sh --target local enables it)"
        ))),
        _ => Ok(None),
    }
}

/// SDK client config builders; installing faults changes nothing in this build.
pub trait InstallFaults: Sized {
    /// Returns the builder unchanged.
    fn install_faults(self, _faults: &Faults) -> Self {
        self
    }
}

impl<B> InstallFaults for B {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_for_faults_is_refused_by_name() {
        let err = refuse(Some("1")).unwrap_err();
        assert_eq!(err.name(), "Fatal.Internal");
        assert!(err.to_string().contains("not compiled in"), "{err}");
        assert!(refuse(None).unwrap().is_none());
        assert!(refuse(Some("0")).unwrap().is_none());
    }

    #[test]
    fn installing_changes_no_client() {
        let conf = aws_sdk_s3::config::Builder::new()
            .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
            .install_faults(&Faults::none())
            .build();
        assert_eq!(conf.interceptors().count(), 0);
        assert!(conf.http_client().is_none());
    }
}
